// max_pool_forward: out (B,OH,OW,C) = the maximum of each 2x2 window (stride 2) of inp (B,H,W,C), NHWC; OH = H / 2,
// OW = W / 2. One invocation per output, grid-stride. The first maximum in the order (0,0), (0,1), (1,0), (1,1), as
// max_pool_backward picks it.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"
#include "kernel_params.h"
layout(local_size_x = 256, local_size_x_id = 0) in;  // the default; gpu::Kernels specializes it to the device

layout(std430, binding = 0) writeonly buffer Out { STORE_T out_[]; };
layout(std430, binding = 1) readonly buffer Inp { STORE_T inp[]; };

layout(push_constant) uniform Push { MaxPoolParams p; };

void main() {
  uint n = p.B * p.OH * p.OW * p.C;
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < n; i += stride) {
    uint c = i % p.C, t = i / p.C, x = t % p.OW, t2 = t / p.OW, y = t2 % p.OH, b = t2 / p.OH;
    uint at = ((b * p.H + 2 * y) * p.W + 2 * x) * p.C + c, row = p.W * p.C;
    // the stored values are compared (a 16-bit value widens exactly), and the maximum is stored back unchanged
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
