// 16-bit storage types for mixed-precision kernels: bf16 and fp16 <-> float, the GLSL twins of core/half.hpp.
// Values travel as uint: either one 16-bit value per uint16_t element (GL_EXT_shader_16bit_storage; the kernel
// converts with uint(v) on load and uint16_t(bits) on store) or two values packed in one uint, element 2i in the
// low half and 2i+1 in the high half (the byte order of a host uint16_t array on a little-endian machine).
//
// bf16 (Kalamkar et al. 2019, "A Study of BFLOAT16 for Deep Learning Training"; Google Cloud TPU docs): the upper
// 16 bits of an IEEE binary32. The conversions are integer operations on the bit pattern, so they give the same
// bits as core::float_to_bf16 / core::bf16_to_float on every device: round to nearest even on the 16 dropped bits
// (overflow to inf, float subnormals rounded on the bit pattern), NaN kept as a quiet NaN with its sign.
// Caveat: the bits are exact, but float *arithmetic* on a subnormal may flush it to zero on devices without
// shaderDenormPreserveFloat32; floatBitsToUint/uintBitsToFloat themselves never flush.
//
// fp16 (IEEE 754-2008 binary16):
//   - unpack_fp16x2 (unpackHalf2x16) is exact: every fp16 value is a float.
//   - pack_fp16x2 (packHalf2x16) rounds in an implementation-defined way: the GLSL and SPIR-V (GLSL.std.450
//     PackHalf2x16) specifications do not fix the rounding mode of the float -> 16-bit conversion, so a device may
//     round to nearest even or toward zero, and may handle overflow, subnormals and NaN payloads its own way.
//     Tests of kernels using it compare with the host's round-to-nearest-even within one fp16 ulp (rtol 1e-3 is
//     above that) and accept any NaN for a NaN, not bit for bit. Measured on lavapipe (llvmpipe, LLVM 15): round to
//     nearest even at every fp16 midpoint, overflow and subnormals as the host; every NaN becomes 0x7e00/0xfe00.
//   - float_to_fp16_rne is the bit-exact alternative (integer operations, the same bits as core::float_to_fp16),
//     for kernels and tests that need the host's exact results; it costs a dozen integer instructions.
//
// Storage type of the kernels' tensors, one define per compiled variant (shaders/shaders.cmake); arithmetic and
// accumulation stay fp32 in every variant:
//   DTYPE_FP32 (default)  STORE_T float        load_t/store_t are the identity.
//   DTYPE_FP16            STORE_T float16_t    (GL_EXT_shader_16bit_storage) load_t = float(v), exact;
//                         store_t rounds to nearest even with float_to_fp16_rne, then casts the value, which is now
//                         representable, so the cast is exact whatever the device's OpFConvert rounding mode (Vulkan
//                         leaves it to the implementation without shaderRoundingModeRTEFloat16).
//   DTYPE_BF16            STORE_T uint16_t     (GL_EXT_shader_16bit_storage) the bf16 bits; float_to_bf16 (RNE) and
//                         bf16_to_float, bit-exact on every device.
// `float load_t(STORE_T v)` and `STORE_T store_t(float x)` are macros in the 16-bit variants: with storage-only 16-bit
// support (storageBuffer16BitAccess, no shaderFloat16/shaderInt16), 16-bit types may appear only in buffer blocks and
// conversions, not as function parameters. Each argument is evaluated once.
// Include this file before the first declaration of a kernel: the #extension must precede non-preprocessor tokens.
// Caveat (fp16): a device without shaderDenormPreserveFloat16 may flush fp16 subnormals (|x| < 2^-14) to zero when
// converting; the integer rounding itself is exact.
#ifndef TRAINSCOPE_DTYPE_GLSL
#define TRAINSCOPE_DTYPE_GLSL

#if defined(DTYPE_FP16) && defined(DTYPE_BF16)
#error "define at most one of DTYPE_FP16 and DTYPE_BF16"
#endif
#if defined(DTYPE_FP16) || defined(DTYPE_BF16)
#extension GL_EXT_shader_16bit_storage : require
#define DTYPE_16BIT 1
#else
#define DTYPE_16BIT 0
#endif
// fp16 trains with dynamic loss scaling (LossScalerBuffer in kernel_params.h): the softmax scales dlogits by the scale,
// the optimizers skip overflowed steps and unscale the gradients. bf16 has fp32's exponent range and needs none.
// The GEMM operands of the texel variant (gemm_texel.glsl): fp32 and fp16 through float views (RGBA32F / R32F,
// RGBA16F / R16F: the fetch widens fp16 exactly), bf16 through integer views of its bits (RGBA16UI / R16UI).
// [[unroll]]: loops over a register block must unroll, or its array is indexed at run time and lives in memory.
#extension GL_EXT_control_flow_attributes : require
#if defined(GEMM_TEXEL)
#if defined(DTYPE_BF16)
#define TEXEL_SAMPLER usamplerBuffer
#else
#define TEXEL_SAMPLER samplerBuffer
#endif
#endif
#if defined(DTYPE_FP16)
#define LOSS_SCALING 1
#else
#define LOSS_SCALING 0
#endif

// bf16 bits (low 16 bits of `bits`; the rest is ignored) -> float, exact; a signalling NaN comes back quiet.
float bf16_to_float(uint bits) {
  uint u = (bits & 0xffffu) << 16;
  if ((u & 0x7fffffffu) > 0x7f800000u) u |= 0x00400000u;
  return uintBitsToFloat(u);
}

// float -> bf16 bits in the low 16 bits (high 16 bits zero), round to nearest even. A NaN sets the quiet bit so that
// a payload held only in the dropped bits does not turn into inf.
uint float_to_bf16(float x) {
  uint u = floatBitsToUint(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (u >> 16) | 0x0040u;
  return (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
}

// Two bf16 packed in one uint -> (element 2i, element 2i+1).
vec2 unpack_bf16x2(uint packed) { return vec2(bf16_to_float(packed), bf16_to_float(packed >> 16)); }

// (element 2i, element 2i+1) -> two bf16 packed in one uint, each rounded to nearest even.
uint pack_bf16x2(vec2 v) { return float_to_bf16(v.x) | (float_to_bf16(v.y) << 16); }

// fp16 bits (low 16 bits of `bits`) -> float, exact (unpackHalf2x16 of the low half).
float fp16_to_float(uint bits) { return unpackHalf2x16(bits & 0xffffu).x; }

// Two fp16 packed in one uint -> (element 2i, element 2i+1), exact.
vec2 unpack_fp16x2(uint packed) { return unpackHalf2x16(packed); }

// (element 2i, element 2i+1) -> two fp16 in one uint. Rounding is the device's (see the top of this file).
uint pack_fp16x2(vec2 v) { return packHalf2x16(v); }

// float -> fp16 bits in the low 16 bits, round to nearest even on every device: subnormals below 2^-14, overflow to
// inf from 65520 on, NaN kept quiet with its sign and top payload bits. The same bits as core::float_to_fp16.
uint float_to_fp16_rne(float x) {
  uint u = floatBitsToUint(x);
  uint sign = (u >> 16) & 0x8000u;
  uint a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return sign | 0x7e00u | ((a >> 13) & 0x03ffu);  // NaN
  if (a >= 0x477ff000u) return sign | 0x7c00u;                         // >= 65520: inf
  if (a >= 0x38800000u) {                                              // normal in fp16: rebias 127 -> 15
    uint r = a - 0x38000000u;
    return sign | ((r + 0x0fffu + ((r >> 13) & 1u)) >> 13);
  }
  uint e = a >> 23;
  if (e < 102u) return sign;  // below 2^-25 (float subnormals included): +-0
  // Subnormal in fp16: the significand (implicit bit set) in units of 2^-24 is m >> (126 - e), rounded to even.
  uint m = (a & 0x007fffffu) | 0x00800000u;
  uint shift = 126u - e;  // 14 .. 24
  uint q = m >> shift;
  uint rem = m & ((1u << shift) - 1u);
  uint half_ulp = 1u << (shift - 1u);
  if (rem > half_ulp || (rem == half_ulp && (q & 1u) != 0u)) q += 1u;
  return sign | q;
}

// Two floats -> two fp16 in one uint, round to nearest even on every device.
uint pack_fp16x2_rne(vec2 v) { return float_to_fp16_rne(v.x) | (float_to_fp16_rne(v.y) << 16); }

// float -> the nearest fp16 value (ties to even) as a float, exact on every device.
float fp16_round(float x) { return fp16_to_float(float_to_fp16_rne(x)); }

// Four elements of one load (a second view of a kernel's buffer with STORE_VEC4 elements; the GEMMs' vector loads):
// STORE_VEC4 and `vec4 load4_t(STORE_VEC4 v)`, exact as load_t.
vec4 bf16x4_to_float(uvec4 b) {
  return vec4(bf16_to_float(b.x), bf16_to_float(b.y), bf16_to_float(b.z), bf16_to_float(b.w));
}
// And the other way, for the memory-bound kernels' 4-wide stores: `STORE_VEC4 store4_t(vec4 x)`, each lane rounded as
// store_t rounds it (the same bits).
vec4 fp16_round4(vec4 x) { return vec4(fp16_round(x.x), fp16_round(x.y), fp16_round(x.z), fp16_round(x.w)); }
uvec4 float_to_bf16x4(vec4 x) {
  return uvec4(float_to_bf16(x.x), float_to_bf16(x.y), float_to_bf16(x.z), float_to_bf16(x.w));
}
#if defined(DTYPE_FP16)
#define STORE_T float16_t
#define load_t(v) float(v)
#define store_t(x) float16_t(fp16_round(x))
#define STORE_VEC4 f16vec4
#define load4_t(v) vec4(v)
#define store4_t(x) f16vec4(fp16_round4(x))
#elif defined(DTYPE_BF16)
#define STORE_T uint16_t
#define load_t(v) bf16_to_float(uint(v))
#define store_t(x) uint16_t(float_to_bf16(x))
#define STORE_VEC4 u16vec4
#define load4_t(v) bf16x4_to_float(uvec4(v))
#define store4_t(x) u16vec4(float_to_bf16x4(x))
#else
#define STORE_T float
float load_t(float v) { return v; }
float store_t(float x) { return x; }
#define STORE_VEC4 vec4
#define load4_t(v) (v)
#define store4_t(x) (x)
#endif

#endif  // TRAINSCOPE_DTYPE_GLSL
