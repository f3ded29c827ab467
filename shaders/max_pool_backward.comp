// max_pool_backward: dinp (B,H,W,C) = dout (B,OH,OW,C) of its 2x2 window at the window's first maximum of inp (in the
// order (0,0), (0,1), (1,0), (1,1)), 0 elsewhere and in a dropped odd last row or column; NHWC. One invocation per
// window of ceil(H/2) x ceil(W/2) (the last ones partial where H or W is odd: zeros) and group of CV channels (4
// where C is a multiple of 4, through vec4 views, else 1), grid-stride: every element written once, no scatter, the
// index decomposed once per 4 CV elements (integer division is the costly part on a software device). The kernel
// table's grid of B*H*W*C items leaves the invocations past the windows idle.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"
#include "kernel_params.h"
layout(local_size_x = 256, local_size_x_id = 0) in;  // the default; gpu::Kernels specializes it to the device

layout(std430, binding = 0) writeonly buffer Dinp { STORE_T dinp[]; };
layout(std430, binding = 0) writeonly buffer Dinp4 { STORE_VEC4 dinp4[]; };  // the same buffer, 4 at a time
layout(std430, binding = 1) readonly buffer Dout { STORE_T dout[]; };
layout(std430, binding = 1) readonly buffer Dout4 { STORE_VEC4 dout4[]; };
layout(std430, binding = 2) readonly buffer Inp { STORE_T inp[]; };
layout(std430, binding = 2) readonly buffer Inp4 { STORE_VEC4 inp4[]; };

layout(push_constant) uniform Push { MaxPoolParams p; };

void main() {
  const uint CV = p.C % 4 == 0 ? 4 : 1, groups = p.C / CV;
  const uint WH = (p.H + 1) / 2, WW = (p.W + 1) / 2;  // windows down and across, partial ones included
  const uint n = p.B * WH * WW * groups, stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < n; i += stride) {
    uint g = i % groups, t = i / groups, wx = t % WW, t2 = t / WW, wy = t2 % WH, b = t2 / WH;
    uint at = ((b * p.H + 2 * wy) * p.W + 2 * wx) * p.C + g * CV, row = p.W * p.C;
    // The window's elements (0,0), (0,1), (1,0), (1,1); in a partial window only those inside the image exist.
    const uint e[4] = uint[4](at, at + p.C, at + row, at + row + p.C);
    const bool exists[4] = bool[4](true, 2 * wx + 1 < p.W, 2 * wy + 1 < p.H, 2 * wx + 1 < p.W && 2 * wy + 1 < p.H);
    if (wy >= p.OH || wx >= p.OW) {  // a dropped odd last row or column: no gradient
      [[unroll]] for (uint k = 0; k < 4; ++k) {
        if (!exists[k]) continue;
        if (CV == 4) dinp4[e[k] / 4] = store4_t(vec4(0.0));
        else dinp[e[k]] = store_t(0.0);
      }
      continue;
    }
    const uint o = ((b * p.OH + wy) * p.OW + wx) * p.C + g * CV;
    if (CV == 4) {
      vec4 m = load4_t(inp4[e[0] / 4]);
      uvec4 first = uvec4(0);
      [[unroll]] for (uint k = 1; k < 4; ++k) {
        vec4 v = load4_t(inp4[e[k] / 4]);
        bvec4 later = greaterThan(v, m);  // strictly greater: the first maximum wins ties
        m = mix(m, v, later);
        first = mix(first, uvec4(k), later);
      }
      vec4 grad = load4_t(dout4[o / 4]);
      [[unroll]] for (uint k = 0; k < 4; ++k) dinp4[e[k] / 4] = store4_t(mix(vec4(0.0), grad, equal(first, uvec4(k))));
    } else {
      float m = load_t(inp[e[0]]);
      uint first = 0;
      [[unroll]] for (uint k = 1; k < 4; ++k) {
        float v = load_t(inp[e[k]]);
        if (v > m) {
          m = v;
          first = k;
        }
      }
      float grad = load_t(dout[o]);
      [[unroll]] for (uint k = 0; k < 4; ++k) dinp[e[k]] = store_t(k == first ? grad : 0.0);
    }
  }
}
