// bias_backward: dbias (OC) = sum over b of dout (B,OC).
// A workgroup of W invocations (a power of two, gpu::workgroup_size) sums T = W / LANES neighbouring columns
// (LANES = BIAS_BACKWARD_LANES, kernel_params.h): invocation i is column i % T and row lane i / T; lane l sums rows
// l, l + LANES, l + 2 LANES, ... of its column, then the LANES partial sums are added as a tree in shared memory
// (lane l += lane l + s for s = LANES/2, ..., 1). Each row of the tile is one read of T neighbouring floats, and the
// dispatch has OC x LANES invocations: one per column (the kernel before) left all but a few of a large GPU's cores
// idle and summed a batch of 4096 rows one after the other (63% of an H200's step at batch 4096, docs/real-gpus/).
// The order of the additions depends on LANES only, not on W: the same on every device.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"
#include "kernel_params.h"
// 256: the default; gpu::Kernels specializes it to the device (workgroup_size)
layout(local_size_x = 256, local_size_x_id = 0) in;

layout(std430, binding = 0) writeonly buffer Dbias { STORE_T dbias[]; };
layout(std430, binding = 1) readonly buffer Dout { STORE_T dout[]; };

layout(push_constant) uniform Push { BiasBackwardParams p; };

const uint LANES = BIAS_BACKWARD_LANES;
const uint T = gl_WorkGroupSize.x / LANES;  // columns per workgroup (W >= 128 on every Vulkan device: T >= 4)
shared float partial[gl_WorkGroupSize.x];

void main() {
  const uint id = gl_LocalInvocationID.x, column = id % T, lane = id / T;
  const uint o = gl_WorkGroupID.x * T + column;
  float sum = 0.0;
  if (o < p.OC)
    for (uint b = lane; b < p.B; b += LANES) sum += load_t(dout[b * p.OC + o]);
  partial[id] = sum;
  barrier();
  for (uint s = LANES / 2; s > 0; s >>= 1) {
    if (lane < s) partial[id] += partial[id + s * T];
    barrier();
  }
  if (lane == 0 && o < p.OC) dbias[o] = store_t(partial[column]);
}
