// split_k_reduce, the second pass of a split-K GEMM (matmul_backward_weight, conv2d_backward_weight;
// gpu/gemm_config.hpp, choose_split_k): each output is the sum of its `slices` fp32 partial products, added in slice
// order 0, 1, ... (a fixed order: the same bits on every run), rounded once to the storage type, as the unsplit kernel
// rounds its fp32 accumulator. A kernel of the table (src/cpu/ops/split_k_reduce.cpp), but never a plan entry: it runs
// inside the split entry's dispatch, and its time is inside that entry's row (one timestamp after both dispatches).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"
#include "kernel_params.h"
layout(local_size_x = 256, local_size_x_id = 0) in;  // the default; gpu::Kernels specializes it to the device (workgroup_size)

layout(std430, binding = 0) writeonly buffer Dweight { STORE_T dweight[]; };
layout(std430, binding = 1) readonly buffer Partials { float partials[]; };

layout(push_constant) uniform Push { SplitKReduceParams p; };

void main() {
  // Grid-stride loop: the group count is capped (gpu::Kernels), the outputs are not.
  for (uint i = gl_GlobalInvocationID.x; i < p.count; i += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
    float sum = 0.0;
    for (uint s = 0; s < p.slices; ++s) sum += partials[s * p.count + i];
    dweight[i] = store_t(sum);
  }
}
