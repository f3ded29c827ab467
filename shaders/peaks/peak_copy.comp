// Memory-bandwidth probe (`trainscope peaks`, gpu/peak_probe): dst = src, 16 bytes (a vec4) per element, each
// invocation striding over the buffer by the whole grid, so that a fixed grid covers any size with coalesced accesses.
#version 450
layout(local_size_x = 256, local_size_x_id = 0) in;  // specialized to the device (gpu/peak_probe.cpp)

layout(push_constant) uniform Push {
  uint count;  // vec4 elements of this range
} pc;

layout(std430, binding = 0) readonly buffer Src { vec4 src[]; };
layout(std430, binding = 1) writeonly buffer Dst { vec4 dst[]; };

void main() {
  const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < pc.count; i += stride) dst[i] = src[i];
}
