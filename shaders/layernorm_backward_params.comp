// layernorm_backward_params: the gradients of a LayerNorm's gain and shift, sums over the rows.
//   dgamma (C) = sum over rows of dout * (in - mean) * rstd,  dbeta (C) = sum over rows of dout
// One invocation per feature; neighbouring invocations read neighbouring addresses of each row (as bias_backward).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"
#include "kernel_params.h"
layout(local_size_x = 64, local_size_x_id = 0) in;  // the default; gpu::Kernels specializes it to the device (workgroup_size)

layout(std430, binding = 0) writeonly buffer Dgamma { STORE_T dgamma[]; };
layout(std430, binding = 1) writeonly buffer Dbeta { STORE_T dbeta[]; };
layout(std430, binding = 2) readonly buffer Dout { STORE_T dout[]; };
layout(std430, binding = 3) readonly buffer In { STORE_T in_[]; };
layout(std430, binding = 4) readonly buffer Mean { float mean_[]; };
layout(std430, binding = 5) readonly buffer Rstd { float rstd_[]; };

layout(push_constant) uniform Push { LayerNormParams p; };

void main() {
  uint c = gl_GlobalInvocationID.x;
  if (c >= p.C) return;
  float g = 0.0, b = 0.0;
  for (uint r = 0u; r < p.rows; ++r) {
    float d = load_t(dout[r * p.C + c]);
    g += d * (load_t(in_[r * p.C + c]) - mean_[r]) * rstd_[r];
    b += d;
  }
  dgamma[c] = store_t(g);
  dbeta[c] = store_t(b);
}
