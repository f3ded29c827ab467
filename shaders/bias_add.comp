// bias_add (--unfused): out (B,OC) += bias (OC), in place: the bias of a layer as a kernel of its own after the GEMM,
// where the fused matmul_forward adds it in its epilogue.
// One pass, 4-wide over the flat (B*OC) output: grid-stride over its groups of four, then the last (B*OC) % 4 one per
// invocation. A group of four may cross a row's end, so its biases are gathered by index (4-wide when OC % 4 == 0:
// then a group lies within one row and its biases are 4 in a row too).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"
#include "kernel_params.h"
layout(local_size_x = 256, local_size_x_id = 0) in;  // the default; gpu::Kernels specializes it to the device (workgroup_size)

layout(std430, binding = 0) buffer Out { STORE_T out_[]; };
layout(std430, binding = 0) buffer Out4 { STORE_VEC4 out4[]; };  // the same buffer, 4 at a time
layout(std430, binding = 1) readonly buffer Bias { STORE_T bias[]; };
layout(std430, binding = 1) readonly buffer Bias4 { STORE_VEC4 bias4[]; };

layout(push_constant) uniform Push { BiasAddParams p; };

// The biases of flat elements 4i .. 4i+3.
vec4 biases_of(uint i) {
  uint o = (4 * i) % p.OC;
  if (p.OC % 4 == 0) return load4_t(bias4[o / 4]);
  vec4 b;
  [[unroll]] for (uint j = 0; j < 4; ++j) {
    b[j] = load_t(bias[o]);
    o = o + 1 == p.OC ? 0 : o + 1;
  }
  return b;
}

void main() {
  uint n = p.B * p.OC, n4 = n / 4;
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < n4; i += stride) out4[i] = store4_t(load4_t(out4[i]) + biases_of(i));
  uint i = 4 * n4 + gl_GlobalInvocationID.x;
  if (i < n) out_[i] = store_t(load_t(out_[i]) + load_t(bias[i % p.OC]));
}
