// loss_reduce: loss_history[slot] = mean(losses (B)). One workgroup, a tree reduction in shared memory (fp32).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "kernel_params.h"
layout(local_size_x = 256) in;

layout(std430, binding = 0) writeonly buffer LossHistory { float loss_history[]; };
layout(std430, binding = 1) readonly buffer Losses { float losses[]; };

layout(push_constant) uniform Push { LossReduceParams p; };

shared float partial[256];

void main() {
  uint tid = gl_LocalInvocationID.x;
  float sum = 0.0;
  for (uint i = tid; i < p.B; i += 256) sum += losses[i];
  partial[tid] = sum;
  barrier();
  for (uint stride = 128; stride > 0; stride >>= 1) {
    if (tid < stride) partial[tid] += partial[tid + stride];
    barrier();
  }
  if (tid == 0) loss_history[p.slot] = partial[0] / float(p.B);
}
