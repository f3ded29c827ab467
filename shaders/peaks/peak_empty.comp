// Dispatch-overhead probe (`trainscope peaks`, gpu/peak_probe): a dispatch that does nothing, so that what it costs
// is the cost of a dispatch (and of the barrier after it). The binding is never touched; it keeps the pipeline layout
// like every other kernel's.
#version 450
layout(local_size_x = 1) in;
layout(std430, binding = 0) writeonly buffer Out { float sink[]; };
void main() {}
