// act_backward: dpreact (N) = dout (N) * act'(preact (N)). Runs in place (dpreact and dout may be one buffer):
// each invocation reads its elements before writing them.
// One pass, 4-wide: grid-stride over the N/4 groups of four elements, then the last N % 4 one per invocation.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"
#include "kernel_params.h"
layout(local_size_x = 256, local_size_x_id = 0) in;  // the default; gpu::Kernels specializes it to the device (workgroup_size)

// Each binding twice: element by element (the tail) and 4 at a time (the same buffer).
layout(std430, binding = 0) buffer Dpreact { STORE_T dpreact[]; };
layout(std430, binding = 0) buffer Dpreact4 { STORE_VEC4 dpreact4[]; };
layout(std430, binding = 1) readonly buffer Dout { STORE_T dout[]; };
layout(std430, binding = 1) readonly buffer Dout4 { STORE_VEC4 dout4[]; };
layout(std430, binding = 2) readonly buffer Preact { STORE_T preact[]; };
layout(std430, binding = 2) readonly buffer Preact4 { STORE_VEC4 preact4[]; };

layout(push_constant) uniform Push { ActBackwardParams p; };

#include "activation.glsl"

void main() {
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x, n4 = p.N / 4;
  for (uint i = gl_GlobalInvocationID.x; i < n4; i += stride)
    dpreact4[i] = store4_t(load4_t(dout4[i]) * act_derivative(load4_t(preact4[i]), p.act));
  uint i = 4 * n4 + gl_GlobalInvocationID.x;
  if (i < p.N) dpreact[i] = store_t(load_t(dout[i]) * act_derivative(load_t(preact[i]), p.act));
}
