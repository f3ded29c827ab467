// max_pool_backward: dinp (B,H,W,C) = dout (B,OH,OW,C) of its 2x2 window at the window's first maximum of inp (in the
// order (0,0), (0,1), (1,0), (1,1)), 0 elsewhere and in a dropped odd last row or column; NHWC. One invocation per
// input element, grid-stride: every element is written, no scatter.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"
#include "kernel_params.h"
layout(local_size_x = 256, local_size_x_id = 0) in;  // the default; gpu::Kernels specializes it to the device

layout(std430, binding = 0) writeonly buffer Dinp { STORE_T dinp[]; };
layout(std430, binding = 1) readonly buffer Dout { STORE_T dout[]; };
layout(std430, binding = 2) readonly buffer Inp { STORE_T inp[]; };

layout(push_constant) uniform Push { MaxPoolParams p; };

void main() {
  uint n = p.B * p.H * p.W * p.C;
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < n; i += stride) {
    uint c = i % p.C, t = i / p.C, x = t % p.W, t2 = t / p.W, y = t2 % p.H, b = t2 / p.H;
    float g = 0.0;
    if (y / 2 < p.OH && x / 2 < p.OW) {
      uint at = ((b * p.H + (y & ~1u)) * p.W + (x & ~1u)) * p.C + c, row = p.W * p.C;
      float m = load_t(inp[at]);
      uint first = 0;
      float v = load_t(inp[at + p.C]);
      if (v > m) { m = v; first = 1; }
      v = load_t(inp[at + row]);
      if (v > m) { m = v; first = 2; }
      v = load_t(inp[at + row + p.C]);
      if (v > m) first = 3;
      if (first == (y & 1u) * 2 + (x & 1u)) g = load_t(dout[((b * p.OH + y / 2) * p.OW + x / 2) * p.C + c]);
    }
    dinp[i] = store_t(g);
  }
}
