// act_forward (--unfused): preact (N) = out (N), then out (N) = act(out (N)) in place: the activation as a kernel of
// its own after bias_add, where the fused matmul_forward applies it in its epilogue. preact is kept for act_backward.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"
#include "kernel_params.h"
layout(local_size_x = 256) in;

layout(std430, binding = 0) writeonly buffer Preact { STORE_T preact[]; };
layout(std430, binding = 1) buffer Out { STORE_T out_[]; };

layout(push_constant) uniform Push { ActForwardParams p; };

#include "activation.glsl"

void main() {
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.N; i += stride) {
    float v = load_t(out_[i]);
    preact[i] = store_t(v);
    out_[i] = store_t(act_forward(v, p.act));
  }
}
