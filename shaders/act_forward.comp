// act_forward (--unfused): preact (N) = out (N), then out (N) = act(out (N)) in place: the activation as a kernel of
// its own after bias_add, where the fused matmul_forward applies it in its epilogue. preact is kept for act_backward.
// One pass, 4-wide: grid-stride over the N/4 groups of four elements, then the last N % 4 one per invocation.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"
#include "kernel_params.h"
layout(local_size_x = 256, local_size_x_id = 0) in;  // the default; gpu::Kernels specializes it to the device (workgroup_size)

// Each binding twice: element by element (the tail) and 4 at a time (the same buffer).
layout(std430, binding = 0) writeonly buffer Preact { STORE_T preact[]; };
layout(std430, binding = 0) writeonly buffer Preact4 { STORE_VEC4 preact4[]; };
layout(std430, binding = 1) buffer Out { STORE_T out_[]; };
layout(std430, binding = 1) buffer Out4 { STORE_VEC4 out4[]; };

layout(push_constant) uniform Push { ActForwardParams p; };

#include "activation.glsl"

void main() {
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x, n4 = p.N / 4;
  for (uint i = gl_GlobalInvocationID.x; i < n4; i += stride) {
    vec4 v = load4_t(out4[i]);
    preact4[i] = store4_t(v);  // v is a stored value: storing it again gives the same bits
    out4[i] = store4_t(act_forward(v, p.act));
  }
  uint i = 4 * n4 + gl_GlobalInvocationID.x;
  if (i < p.N) {
    float v = load_t(out_[i]);
    preact[i] = store_t(v);
    out_[i] = store_t(act_forward(v, p.act));
  }
}
