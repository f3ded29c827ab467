// act_backward: dpreact (N) = dout (N) * act'(preact (N)). Runs in place (dpreact and dout may be one buffer):
// each invocation reads its element before writing it.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"
#include "kernel_params.h"
layout(local_size_x = 256) in;

layout(std430, binding = 0) buffer Dpreact { STORE_T dpreact[]; };
layout(std430, binding = 1) readonly buffer Dout { STORE_T dout[]; };
layout(std430, binding = 2) readonly buffer Preact { STORE_T preact[]; };

layout(push_constant) uniform Push { ActBackwardParams p; };

#include "activation.glsl"

void main() {
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.N; i += stride) 
    dpreact[i] = store_t(load_t(dout[i]) * act_derivative(load_t(preact[i]), p.act));
}
