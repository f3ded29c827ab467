// bias_backward: dbias (OC) = sum over b of dout (B,OC). One invocation per output feature; neighbouring invocations
// read neighbouring addresses of each row.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"
#include "kernel_params.h"
layout(local_size_x = 64, local_size_x_id = 0) in;  // the default; gpu::Kernels specializes it to the device (workgroup_size)

layout(std430, binding = 0) writeonly buffer Dbias { STORE_T dbias[]; };
layout(std430, binding = 1) readonly buffer Dout { STORE_T dout[]; };

layout(push_constant) uniform Push { BiasBackwardParams p; };

void main() {
  uint o = gl_GlobalInvocationID.x;
  if (o >= p.OC) return;
  float sum = 0.0;
  for (uint b = 0; b < p.B; ++b) sum += load_t(dout[b * p.OC + o]);
  dbias[o] = store_t(sum);
}
