// max_pool_forward: out (B,OH,OW,C) = the maximum of each 2x2 window (stride 2) of inp (B,H,W,C), NHWC; OH = H / 2,
// OW = W / 2. The first maximum in the order (0,0), (0,1), (1,0), (1,1), as max_pool_backward picks it. One invocation
// per output pixel and group of CV channels (4 where C is a multiple of 4, through vec4 views, else 1), grid-stride:
// the index is decomposed once per CV outputs (integer division is the costly part on a software device), and the
// kernel table's grid of B*OH*OW*C items leaves the invocations past the groups idle.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"
#include "kernel_params.h"
layout(local_size_x = 256, local_size_x_id = 0) in;  // the default; gpu::Kernels specializes it to the device

layout(std430, binding = 0) writeonly buffer Out { STORE_T out_[]; };
layout(std430, binding = 0) writeonly buffer Out4 { STORE_VEC4 out4[]; };  // the same buffer, 4 at a time
layout(std430, binding = 1) readonly buffer Inp { STORE_T inp[]; };
layout(std430, binding = 1) readonly buffer Inp4 { STORE_VEC4 inp4[]; };

layout(push_constant) uniform Push { MaxPoolParams p; };

void main() {
  const uint CV = p.C % 4 == 0 ? 4 : 1, groups = p.C / CV;
  const uint n = p.B * p.OH * p.OW * groups, stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < n; i += stride) {
    uint g = i % groups, t = i / groups, x = t % p.OW, t2 = t / p.OW, y = t2 % p.OH, b = t2 / p.OH;
    uint at = ((b * p.H + 2 * y) * p.W + 2 * x) * p.C + g * CV, row = p.W * p.C;
    // the stored values are compared (a 16-bit value widens exactly), and the maximum is stored back unchanged
    if (CV == 4) {
      vec4 m = load4_t(inp4[at / 4]);
      vec4 v = load4_t(inp4[(at + p.C) / 4]);
      m = mix(m, v, greaterThan(v, m));
      v = load4_t(inp4[(at + row) / 4]);
      m = mix(m, v, greaterThan(v, m));
      v = load4_t(inp4[(at + row + p.C) / 4]);
      out4[i] = store4_t(mix(m, v, greaterThan(v, m)));  // output (b, y, x, 4g) is element 4i
    } else {
      float m = load_t(inp[at]);
      float v = load_t(inp[at + p.C]);
      if (v > m) m = v;
      v = load_t(inp[at + row]);
      if (v > m) m = v;
      v = load_t(inp[at + row + p.C]);
      if (v > m) m = v;
      out_[i] = store_t(m);
    }
  }
}
