// check_finite_grads: found_inf = 1 if any of grads (N) is inf or NaN (fp16 loss scaling). Tests the exponent bits of
// the widened value, so it holds whatever the device's float comparisons do with NaN. Each invocation checks its
// grid-stride share, 4 at a time (then the last N % 4 one per invocation), and raises the flag with one atomicOr at
// most; nobody ever clears it here (update_loss_scale does).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"
#include "kernel_params.h"
layout(local_size_x = 256, local_size_x_id = 0) in;  // the default; gpu::Kernels specializes it to the device (workgroup_size)

layout(std430, binding = 0) buffer Scaler { LossScalerBuffer s; };
layout(std430, binding = 1) readonly buffer Grads { STORE_T grads[]; };
layout(std430, binding = 1) readonly buffer Grads4 { STORE_VEC4 grads4[]; };  // the same buffer, 4 at a time

layout(push_constant) uniform Push { CheckFiniteParams p; };

const uint EXPONENT = 0x7f800000u;  // of the widened fp32 value: all ones for inf and NaN

void main() {
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x, n4 = p.N / 4;
  bool bad = false;
  for (uint i = gl_GlobalInvocationID.x; i < n4; i += stride)
    bad = any(equal(floatBitsToUint(load4_t(grads4[i])) & EXPONENT, uvec4(EXPONENT))) || bad;
  uint i = 4 * n4 + gl_GlobalInvocationID.x;
  if (i < p.N && (floatBitsToUint(load_t(grads[i])) & EXPONENT) == EXPONENT) bad = true;
  if (bad) atomicOr(s.found_inf, 1u);
}
