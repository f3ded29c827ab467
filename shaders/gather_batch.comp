// gather_batch: x_out (B,C), y_out (B) <- rows order[first + b] of the dataset x (N,C), y (N) kept on the device.
// One invocation per output value; a grid-stride loop covers any B*C.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"
#include "kernel_params.h"
layout(local_size_x = 256) in;

layout(std430, binding = 0) writeonly buffer XOut { STORE_T x_out[]; };
layout(std430, binding = 1) writeonly buffer YOut { int y_out[]; };
layout(std430, binding = 2) readonly buffer X { float x[]; };
layout(std430, binding = 3) readonly buffer Y { int y[]; };
layout(std430, binding = 4) readonly buffer Order { uint order[]; };

layout(push_constant) uniform Push { GatherBatchParams p; };

void main() {
  uint total = p.B * p.C;
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < total; i += stride) {
    uint b = i / p.C, c = i % p.C;
    uint row = order[p.first + b];
    x_out[i] = store_t(x[row * p.C + c]);
    if (c == 0) y_out[b] = y[row];
  }
}
