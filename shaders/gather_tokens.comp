// gather_tokens: a transformer's batch: tokens (B,T) and targets (B,T) <- sequences order[first + b] of the token
// dataset x (N,T) (ids held as fp32, exact below 2^24) and y (N,T) (the next tokens; -1 where a target does not
// count), kept on the device. A grid-stride loop over the B*T positions.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "kernel_params.h"
layout(local_size_x = 256, local_size_x_id = 0) in;  // the default; gpu::Kernels specializes it to the device (workgroup_size)

layout(std430, binding = 0) writeonly buffer Tokens { int tokens[]; };
layout(std430, binding = 1) writeonly buffer Targets { int targets[]; };
layout(std430, binding = 2) readonly buffer X { float x[]; };
layout(std430, binding = 3) readonly buffer Y { int y[]; };
layout(std430, binding = 4) readonly buffer Order { uint order[]; };

layout(push_constant) uniform Push { GatherTokensParams p; };

void main() {
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.B * p.T; i += stride) {
    uint b = i / p.T, t = i % p.T;
    uint at = order[p.first + b] * p.T + t;
    tokens[i] = int(x[at]);
    targets[i] = y[at];
  }
}
