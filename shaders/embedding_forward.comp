// embedding_forward: a transformer's input, each token's embedding plus its position's (GPT-2's wte and wpe).
//   x (B*T, C) = wte[tokens[b, t]] (V, C) + wpe[t] (T rows of the context's, C); the sum in fp32, rounded once
// A token outside 0..V-1 (never: the data is checked when it is read) has no row: only its position's is added.
// Grid-stride over the flat output, one element per invocation.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"
#include "kernel_params.h"
layout(local_size_x = 256, local_size_x_id = 0) in;  // the default; gpu::Kernels specializes it to the device

layout(std430, binding = 0) writeonly buffer X { STORE_T x[]; };
layout(std430, binding = 1) readonly buffer Tokens { int tokens[]; };
layout(std430, binding = 2) readonly buffer Wte { STORE_T wte[]; };
layout(std430, binding = 3) readonly buffer Wpe { STORE_T wpe[]; };

layout(push_constant) uniform Push { EmbeddingParams p; };

void main() {
  uint n = p.B * p.T * p.C;
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < n; i += stride) {
    uint row = i / p.C, c = i % p.C;
    uint token = uint(tokens[row]);
    float token_part = token < p.V ? load_t(wte[token * p.C + c]) : 0.0;
    x[i] = store_t(token_part + load_t(wpe[(row % p.T) * p.C + c]));
  }
}
