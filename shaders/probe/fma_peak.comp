// fma_peak: the device's fp32 fused multiply-add rate, for the "% of peak" of `trainscope bench`'s GPU rows.
// Each invocation runs 32 independent chains of x = fma(x, m, c) (8 vec4 accumulators: enough independent work to
// hide the FMA latency on GPUs and on llvmpipe, whose SIMD lanes are the invocations and whose registers hold one
// component each), 4 fmas per chain and loop iteration (loop overhead, and llvmpipe's masking of loop-carried values,
// paid once per 4), `iterations` times; one fma is 2 FLOPs: 256 FLOPs per invocation and iteration. m and c come from push constants, so the compiler cannot fold the chains, and the sums are written out, so
// it cannot drop them. On llvmpipe fma() compiles to a multiply and an add; that is what its GEMMs run too.
#version 450
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) writeonly buffer Out { float out_[]; };
layout(push_constant) uniform Push {
  uint iterations;
  float m;  // close to 1 and c small: the values stay finite
  float c;
} p;

void main() {
  float seed = float(gl_GlobalInvocationID.x) * 1e-6;
  vec4 x[8];
  [[unroll]] for (uint a = 0; a < 8; ++a) x[a] = vec4(seed + float(a));
  const vec4 m = vec4(p.m), c = vec4(p.c);
  for (uint i = 0; i < p.iterations; ++i)
    [[unroll]] for (uint r = 0; r < 4; ++r)
      [[unroll]] for (uint a = 0; a < 8; ++a) x[a] = fma(x[a], m, c);
  vec4 s = ((x[0] + x[1]) + (x[2] + x[3])) + ((x[4] + x[5]) + (x[6] + x[7]));
  out_[gl_GlobalInvocationID.x] = (s.x + s.y) + (s.z + s.w);
}
