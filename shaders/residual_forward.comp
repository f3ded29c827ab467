// residual_forward: out (N) = a (N) + b (N), a transformer's residual connection (He et al. 2016): the branch's output
// added to the residual stream it branched from, into a tensor of its own (the LayerNorm that follows keeps it for its
// backward). 4-wide over the flat tensors, grid-stride over groups of four, then the last N % 4 one per invocation.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"
#include "kernel_params.h"
layout(local_size_x = 256, local_size_x_id = 0) in;  // the default; gpu::Kernels specializes it to the device (workgroup_size)

layout(std430, binding = 0) writeonly buffer Out { STORE_T out_[]; };
layout(std430, binding = 0) writeonly buffer Out4 { STORE_VEC4 out4[]; };  // the same buffer, 4 at a time
layout(std430, binding = 1) readonly buffer A { STORE_T a[]; };
layout(std430, binding = 1) readonly buffer A4 { STORE_VEC4 a4[]; };
layout(std430, binding = 2) readonly buffer B { STORE_T b[]; };
layout(std430, binding = 2) readonly buffer B4 { STORE_VEC4 b4[]; };

layout(push_constant) uniform Push { ResidualParams p; };

void main() {
  uint n4 = p.N / 4;
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < n4; i += stride) out4[i] = store4_t(load4_t(a4[i]) + load4_t(b4[i]));
  uint i = 4 * n4 + gl_GlobalInvocationID.x;
  if (i < p.N) out_[i] = store_t(load_t(a[i]) + load_t(b[i]));
}
