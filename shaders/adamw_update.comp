// adamw_update: AdamW (Loshchilov & Hutter 2019) as torch.optim.AdamW, over the flat parameter buffer (N):
//   p -= lr*wd*p; m = b1*m + (1-b1)*g; v = b2*v + (1-b2)*g²; p -= lr * (m/bc1) / (sqrt(v/bc2) + eps)
// with the bias corrections bc1 = 1 - b1^t, bc2 = 1 - b2^t computed on the host for step t.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"
layout(local_size_x = 256) in;

layout(std430, binding = 0) buffer Params_ { float params[]; };
layout(std430, binding = 1) buffer M { float m[]; };
layout(std430, binding = 2) buffer V { float v[]; };
layout(std430, binding = 3) readonly buffer Grads { STORE_T grads[]; };
#if DTYPE_16BIT
// The 16-bit copy of the parameters that the forward and backward kernels read: store_t(new master value).
layout(std430, binding = 4) writeonly buffer Weights16 { STORE_T weights16[]; };
#endif

layout(push_constant) uniform Params {
  uint N;
  float lr, beta1, beta2, eps, weight_decay, bc1, bc2;
} p;

void main() {
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.N; i += stride) {
    float g = load_t(grads[i]);
    float w = params[i] * (1.0 - p.lr * p.weight_decay);
    float mi = p.beta1 * m[i] + (1.0 - p.beta1) * g;
    float vi = p.beta2 * v[i] + (1.0 - p.beta2) * g * g;
    m[i] = mi;
    v[i] = vi;
    float w_new = w - p.lr * (mi / p.bc1) / (sqrt(vi / p.bc2) + p.eps);
    params[i] = w_new;
#if DTYPE_16BIT
    weights16[i] = store_t(w_new);
#endif
  }
}
