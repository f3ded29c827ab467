// embedding_backward: the gradients of the token and position embeddings from the input's gradient dx (B*T, C).
//   dwte[v] (V, C) = (accumulate ? dwte[v] : 0) + the sum of dx over the positions whose token is v, in order
//   dwpe[t] (T, C) = the sum over the sequences b of dx[b, t], in order
// No atomics: one invocation per output element (grid-stride over the (V + T) x C of both), each summing in a fixed
// order, so the result is the same on every run. A token row's invocation scans the batch's B*T tokens (a few
// thousand; every invocation of a workgroup reads the same token at a time).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"
#include "kernel_params.h"
layout(local_size_x = 256, local_size_x_id = 0) in;  // the default; gpu::Kernels specializes it to the device

layout(std430, binding = 0) buffer DWte { STORE_T dwte[]; };
layout(std430, binding = 1) writeonly buffer DWpe { STORE_T dwpe[]; };
layout(std430, binding = 2) readonly buffer Tokens { int tokens[]; };
layout(std430, binding = 3) readonly buffer Dx { STORE_T dx[]; };

layout(push_constant) uniform Push { EmbeddingParams p; };

void main() {
  uint n = (p.V + p.T) * p.C, positions = p.B * p.T;
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < n; i += stride) {
    uint row = i / p.C, c = i % p.C;
    if (row < p.V) {
      float sum = p.accumulate != 0u ? load_t(dwte[i]) : 0.0;
      for (uint r = 0u; r < positions; ++r)
        if (uint(tokens[r]) == row) sum += load_t(dx[r * p.C + c]);
      dwte[i] = store_t(sum);
    } else {
      uint t = row - p.V;
      float sum = 0.0;
      for (uint b = 0u; b < p.B; ++b) sum += load_t(dx[(b * p.T + t) * p.C + c]);
      dwpe[t * p.C + c] = store_t(sum);
    }
  }
}
