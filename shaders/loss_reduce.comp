// loss_reduce: loss_history[slot] = sum(losses (B)) / count (B, or a transformer's positions that count). One workgroup, a tree reduction in shared memory (fp32).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "kernel_params.h"
layout(local_size_x = 256, local_size_x_id = 0) in;  // the default; gpu::Kernels specializes it to the device (workgroup_size)

layout(std430, binding = 0) writeonly buffer LossHistory { float loss_history[]; };
layout(std430, binding = 1) readonly buffer Losses { float losses[]; };

layout(push_constant) uniform Push { LossReduceParams p; };

// One float per invocation; the workgroup size is a power of two (gpu::workgroup_size), as the tree needs.
shared float partial[gl_WorkGroupSize.x];

void main() {
  uint tid = gl_LocalInvocationID.x;
  float sum = 0.0;
  for (uint i = tid; i < p.B; i += gl_WorkGroupSize.x) sum += losses[i];
  partial[tid] = sum;
  barrier();
  for (uint stride = gl_WorkGroupSize.x / 2; stride > 0; stride >>= 1) {
    if (tid < stride) partial[tid] += partial[tid + stride];
    barrier();
  }
  if (tid == 0) loss_history[p.slot] = p.count > 0u ? partial[0] / float(p.count) : 0.0;
}
