// gather_batch: x_out (B,C), y_out (B) <- rows order[first + b] of the dataset x (N,C), y (N) kept on the device.
// A grid-stride loop covers any B*C. When C % 4 == 0 (every row then starts at a multiple of 4) one invocation copies
// 4 values at a time; else one value at a time. x holds rows [row_begin, row_end) only (a dataset past
// maxStorageBufferRange is bound in chunks, one dispatch each: GatherBatchParams); rows outside are skipped.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"
#include "kernel_params.h"
layout(local_size_x = 256, local_size_x_id = 0) in;  // the default; gpu::Kernels specializes it to the device (workgroup_size)

layout(std430, binding = 0) writeonly buffer XOut { STORE_T x_out[]; };
layout(std430, binding = 0) writeonly buffer XOut4 { STORE_VEC4 x_out4[]; };  // the same buffer, 4 at a time
layout(std430, binding = 1) writeonly buffer YOut { int y_out[]; };
layout(std430, binding = 2) readonly buffer X { float x[]; };
layout(std430, binding = 2) readonly buffer X4 { vec4 x4[]; };
layout(std430, binding = 3) readonly buffer Y { int y[]; };
layout(std430, binding = 4) readonly buffer Order { uint order[]; };

layout(push_constant) uniform Push { GatherBatchParams p; };

void main() {
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  if (p.C % 4 == 0) {
    uint c4s = p.C / 4, total4 = p.B * c4s;
    for (uint i = gl_GlobalInvocationID.x; i < total4; i += stride) {
      uint b = i / c4s, c4 = i % c4s;
      uint row = order[p.first + b];
      if (row < p.row_begin || row >= p.row_end) continue;
      x_out4[i] = store4_t(x4[(row - p.row_begin) * c4s + c4]);
      if (c4 == 0) y_out[b] = y[row];
    }
    return;
  }
  uint total = p.B * p.C;
  for (uint i = gl_GlobalInvocationID.x; i < total; i += stride) {
    uint b = i / p.C, c = i % p.C;
    uint row = order[p.first + b];
    if (row < p.row_begin || row >= p.row_end) continue;
    x_out[i] = store_t(x[(row - p.row_begin) * p.C + c]);
    if (c == 0) y_out[b] = y[row];
  }
}
