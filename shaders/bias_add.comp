// bias_add (--unfused): out (B,OC) += bias (OC), in place: the bias of a layer as a kernel of its own after the GEMM,
// where the fused matmul_forward adds it in its epilogue. One invocation per element, grid-stride loop.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"
#include "kernel_params.h"
layout(local_size_x = 256) in;

layout(std430, binding = 0) buffer Out { STORE_T out_[]; };
layout(std430, binding = 1) readonly buffer Bias { STORE_T bias[]; };

layout(push_constant) uniform Push { BiasAddParams p; };

void main() {
  uint n = p.B * p.OC;
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < n; i += stride) out_[i] = store_t(load_t(out_[i]) + load_t(bias[i % p.OC]));
}
