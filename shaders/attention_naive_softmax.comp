// attention_naive_softmax: the naive attention's second kernel: each row of the scores in memory turned into its
// probabilities in place (the whole (B, H, T, T) matrix read from memory and written back).
//   att[row][u] = exp(s_u - max) / sum over u' <= t of exp(s_u' - max) for u <= t, 0 after the diagonal
// One invocation per row (grid-stride over the B * H * T rows), three passes over it: the maximum, the sum, the
// probabilities.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"
#include "kernel_params.h"
layout(local_size_x = 256, local_size_x_id = 0) in;  // the default; gpu::Kernels specializes it to the device

layout(std430, binding = 0) buffer Att { STORE_T att[]; };

layout(push_constant) uniform Push { AttentionParams p; };

void main() {
  uint rows = p.B * p.H * p.T;
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint r = gl_GlobalInvocationID.x; r < rows; r += stride) {
    uint t = r % p.T, first = r * p.T;
    float m = -1.0 / 0.0, sum = 0.0;
    for (uint u = 0u; u <= t; ++u) m = max(m, load_t(att[first + u]));
    for (uint u = 0u; u <= t; ++u) sum += exp(load_t(att[first + u]) - m);
    for (uint u = 0u; u < p.T; ++u) att[first + u] = store_t(u <= t ? exp(load_t(att[first + u]) - m) / sum : 0.0);
  }
}
