// check_finite_grads: found_inf = 1 if any of grads (N) is inf or NaN (fp16 loss scaling). Tests the exponent bits of
// the widened value, so it holds whatever the device's float comparisons do with NaN. Each invocation checks its
// grid-stride share and raises the flag with one atomicOr at most; nobody ever clears it here (update_loss_scale does).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"
#include "kernel_params.h"
layout(local_size_x = 256) in;

layout(std430, binding = 0) buffer Scaler { LossScalerBuffer s; };
layout(std430, binding = 1) readonly buffer Grads { STORE_T grads[]; };

layout(push_constant) uniform Push { CheckFiniteParams p; };

void main() {
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  bool bad = false;
  for (uint i = gl_GlobalInvocationID.x; i < p.N; i += stride) {
    float g = load_t(grads[i]);
    if ((floatBitsToUint(g) & 0x7f800000u) == 0x7f800000u) bad = true;
  }
  if (bad) atomicOr(s.found_inf, 1u);
}
