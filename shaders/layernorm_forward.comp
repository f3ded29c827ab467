// layernorm_forward: each row of C features normalized (torch.nn.LayerNorm; Ba et al. 2016).
//   mean (rows), rstd (rows) = the row's mean and 1 / sqrt(its biased variance + eps), fp32
//   out (rows,C) = (in - mean) * rstd * gamma + beta
// One invocation per row: two passes over the row (the variance of the centred values, which does not cancel), then
// the output. Neighbouring invocations read rows C apart: fine for a transformer's few hundred rows per step, where a
// row is C = 64..768 features.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"
#include "kernel_params.h"
layout(local_size_x = 64, local_size_x_id = 0) in;  // the default; gpu::Kernels specializes it to the device (workgroup_size)

layout(std430, binding = 0) writeonly buffer Out { STORE_T out_[]; };
layout(std430, binding = 1) writeonly buffer Mean { float mean_[]; };
layout(std430, binding = 2) writeonly buffer Rstd { float rstd_[]; };
layout(std430, binding = 3) readonly buffer In { STORE_T in_[]; };
layout(std430, binding = 4) readonly buffer Gamma { STORE_T gamma[]; };
layout(std430, binding = 5) readonly buffer Beta { STORE_T beta[]; };

layout(push_constant) uniform Push { LayerNormParams p; };

void main() {
  uint r = gl_GlobalInvocationID.x;
  if (r >= p.rows) return;
  uint base = r * p.C;
  float m = 0.0;
  for (uint c = 0u; c < p.C; ++c) m += load_t(in_[base + c]);
  m /= float(p.C);
  float var = 0.0;
  for (uint c = 0u; c < p.C; ++c) {
    float d = load_t(in_[base + c]) - m;
    var += d * d;
  }
  float s = 1.0 / sqrt(var / float(p.C) + p.eps);
  mean_[r] = m;
  rstd_[r] = s;
  for (uint c = 0u; c < p.C; ++c)
    out_[base + c] = store_t((load_t(in_[base + c]) - m) * s * load_t(gamma[c]) + load_t(beta[c]));
}
