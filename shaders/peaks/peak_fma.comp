// Arithmetic-throughput probe (`trainscope peaks`, gpu/peak_probe), after vkpeak's method: each invocation runs
// CHAINS independent chains acc = fma(acc, m, c) for `iterations` rounds, so that the FMA units never wait for a
// result; nothing is loaded or stored inside the loop. Variants (shaders.cmake): scalar fp32, VEC4 (vec4 fp32),
// FP16 (f16vec4, needs shaderFloat16). FLOP = invocations x iterations x CHAINS x lanes x 2.
#version 450
#ifdef FP16
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#define T f16vec4
#define S float16_t
#elif defined(VEC4)
#define T vec4
#define S float
#else
#define T float
#define S float
#endif
layout(local_size_x = 256, local_size_x_id = 0) in;  // specialized to the device (gpu/peak_probe.cpp)

layout(push_constant) uniform Push {
  uint iterations;
  float m;  // 0.999: with c = 0.001 the chains converge to 1 and never overflow or become denormal
  float c;
} pc;

// Written only if the sum is impossible (m, c come from the host, so the compiler cannot know it never is), so the
// loop cannot be removed and costs no memory traffic.
layout(std430, binding = 0) writeonly buffer Out { float sink[]; };

void main() {
  const T m = T(S(pc.m));
  const T c = T(S(pc.c));
  const S x = S(float(gl_LocalInvocationID.x) * 1e-4);
  T a0 = T(x), a1 = T(x + S(0.1)), a2 = T(x + S(0.2)), a3 = T(x + S(0.3));
  T a4 = T(x + S(0.4)), a5 = T(x + S(0.5)), a6 = T(x + S(0.6)), a7 = T(x + S(0.7));
  for (uint i = 0; i < pc.iterations; ++i) {
    a0 = fma(a0, m, c); a1 = fma(a1, m, c); a2 = fma(a2, m, c); a3 = fma(a3, m, c);
    a4 = fma(a4, m, c); a5 = fma(a5, m, c); a6 = fma(a6, m, c); a7 = fma(a7, m, c);
  }
  const T sum = ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7));
#if defined(FP16) || defined(VEC4)
  const float total = float(sum.x) + float(sum.y) + float(sum.z) + float(sum.w);
#else
  const float total = sum;
#endif
  if (total == -1.0) sink[0] = total;
}
