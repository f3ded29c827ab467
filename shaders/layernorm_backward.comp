// layernorm_backward: the gradient of a LayerNorm's input (Ba et al. 2016), each row on its own.
//   xhat = (in - mean) * rstd, dxhat = dout * gamma
//   din (rows,C) = [din +] rstd * (dxhat - mean over the row of dxhat - xhat * mean over the row of dxhat * xhat)
// One invocation per row: one pass for the two means, one for din. Its parameters' gradients are
// layernorm_backward_params (a sum over rows: another grid).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"
#include "kernel_params.h"
layout(local_size_x = 64, local_size_x_id = 0) in;  // the default; gpu::Kernels specializes it to the device (workgroup_size)

layout(std430, binding = 0) buffer Din { STORE_T din[]; };  // read as well where the entry accumulates
layout(std430, binding = 1) readonly buffer Dout { STORE_T dout[]; };
layout(std430, binding = 2) readonly buffer In { STORE_T in_[]; };
layout(std430, binding = 3) readonly buffer Gamma { STORE_T gamma[]; };
layout(std430, binding = 4) readonly buffer Mean { float mean_[]; };
layout(std430, binding = 5) readonly buffer Rstd { float rstd_[]; };

layout(push_constant) uniform Push { LayerNormParams p; };

void main() {
  uint r = gl_GlobalInvocationID.x;
  if (r >= p.rows) return;
  uint base = r * p.C;
  float m = mean_[r], s = rstd_[r];
  float mean_d = 0.0, mean_dx = 0.0;
  for (uint c = 0u; c < p.C; ++c) {
    float dxhat = load_t(dout[base + c]) * load_t(gamma[c]);
    mean_d += dxhat;
    mean_dx += dxhat * (load_t(in_[base + c]) - m) * s;
  }
  mean_d /= float(p.C);
  mean_dx /= float(p.C);
  for (uint c = 0u; c < p.C; ++c) {
    float xhat = (load_t(in_[base + c]) - m) * s;
    float v = s * (load_t(dout[base + c]) * load_t(gamma[c]) - mean_d - xhat * mean_dx);
    din[base + c] = store_t(p.accumulate != 0u ? load_t(din[base + c]) + v : v);
  }
}
