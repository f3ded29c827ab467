// argmax: the class a row of logits predicts, the index of its first maximum (torch.argmax's tie rule).
//   predictions (B) <- argmax over K of logits (B,K)
// One invocation per row (K is small: the classes). What prediction (the decision boundary) reads back instead of the
// logits themselves.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"
#include "kernel_params.h"
layout(local_size_x = 64) in;

layout(std430, binding = 0) writeonly buffer Predictions { int predictions[]; };
layout(std430, binding = 1) readonly buffer Logits { STORE_T logits[]; };

layout(push_constant) uniform Push { ArgmaxParams p; };

void main() {
  uint b = gl_GlobalInvocationID.x;
  if (b >= p.B) return;
  uint row = b * p.K, best = 0u;
  float best_value = load_t(logits[row]);
  for (uint k = 1u; k < p.K; ++k) {
    float v = load_t(logits[row + k]);
    if (v > best_value) {  // strictly greater: the first of equal maxima stays (and a NaN never wins)
      best_value = v;
      best = k;
    }
  }
  predictions[b] = int(best);
}
