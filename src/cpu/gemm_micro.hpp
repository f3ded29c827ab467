// What each SIMD level's file (gemm_avx512.cpp, gemm_avx2.cpp, gemm_neon.cpp; compiled with that level's flags and
// called only when the CPU has that level, simd.hpp) provides: the register-blocked micro-kernels of the CPU GEMM
// (gemm.hpp), the innermost loop of a packed GEMM, and the loop of the FMA-peak probe (fma_probe.hpp).
//
// A micro-kernel computes one mr x nr tile of C from packed operands (the layout the packers of gemm.cpp write):
//   a: kc x mr, k-major (a[k*mr + i] = A(i, k)),  b: kc x nr, k-major (b[k*nr + j] = B(k, j)),  both 64-byte aligned;
//   c (mr x nr, row stride ldc floats) = (accumulate ? c : 0) + sum over k of a(i,k) * b(k,j)
// as one chain of fused multiply-adds per output, k ascending: acc = fma(a(i,k), b(k,j), acc). That is exactly what
// a plain loop `acc = std::fma(a, b, acc)` computes, so results do not depend on the tile sizes, the blocking of K
// (a stored partial sum is exact) or how the tiles are spread over threads.
#pragma once
#include <cstddef>
#include <cstdint>

namespace cpu {

// The calling thread's panel for the column micro-kernels of simd_kernels.inc (which: 0 in place, 1 indirect), at
// least `floats` long, made at its first use and freed when the thread ends (per_thread.hpp). Defined in gemm.cpp,
// compiled for any x86-64, and handed out as a plain pointer: the level files call no std::vector member, because an
// inline function or template they instantiate (vector::resize's _M_default_append, std::construct_at<float>) is a
// weak definition that the linker may keep as the one copy for the whole program, compiled with AVX-512 flags
// (test_cpu_simd_symbols: cmake/check_simd_symbols.cmake).
float* micro_kernel_panel(int which, std::size_t floats);

// What gemm() uses a micro-kernel of a table for (gemm.cpp, kernel_for_shape): the level's default tile; the tile of
// the same width for row counts the default fits badly; the narrow tile for products narrower than the default's;
// the column tile (vectors along the rows, a broadcast per column) where it pads fewer columns than those (the output
// layer's 10 classes); or none (a spare, kept for measuring with gemm()'s `kernel` argument).
enum class GemmKernelRole { Default, Rows, Narrow, Columns, Spare };

struct GemmMicroKernel {
  const char* name;  // e.g. "AVX-512 8x32": the SIMD level and the register tile, rows x columns
  int mr, nr;        // the tile: mr rows of A (broadcast), nr columns of B (nr / lanes vector registers)
  void (*run)(long kc, const float* a, const float* b, float* c, long ldc, bool accumulate);
  // The same, for products too small for packing to pay (gemm.cpp), from operands read in place and over `tiles`
  // tiles one below the other (rows t * mr .. t * mr + mr - 1 of A and C, t < tiles): A(i, k) = a[i * ars + k * acs]
  // (any strides), B(k, j) = b[k * ldb + j] (rows of nr contiguous floats, any alignment), C overwritten. The same
  // fma chains in the same order as run: the results are bit-identical.
  void (*run_in_place)(long tiles, long kc, const float* a, long ars, long acs, const float* b, long ldb, float* c,
                       long ldc);
  // The transposing copy of the packing at the same SIMD level: d[k * ldd + j] = s[j * lds + k] for j < rows,
  // k < cols (the packers use it for operands that are contiguous in k: A of the forward and backward-data forms,
  // B = weightᵀ of the forward form).
  void (*transpose)(float* d, long ldd, const float* s, long lds, long rows, long cols);
  // The plain copy of the packing at the same SIMD level (gemm_pack_rows.inc), for operands contiguous across their
  // micro-panels: kc rows of `width` floats (row k at src + k * ld) as micro-panels of w floats, dst[(j / w) * kc * w
  // + k * w + j % w], zero-padded to a multiple of w (A of backward weight with w = mr; B of backward data and weight
  // with w = nr).
  void (*pack_rows)(float* dst, const float* src, long ld, long kc, long width, long w);
  // The tile of an indirect convolution (cpu/conv.cpp): c (mr x nr, overwritten) = sum over t < taps, k < kc of
  // rows[t * mr + i][k] * B(t * kc + k, j), with b packed as for run over taps * kc values of k. Each row of A is read
  // through one pointer per tap (a pixel of the image, or zeros where the patch overhangs it): no im2col panel.
  void (*run_indirect)(long taps, long kc, const float* const* rows, const float* b, float* c, long ldc);
  GemmKernelRole role;
};

// The kernels of each level (nullptr where the compiler or the platform lacks that instruction set). The first is
// the level's default (the fastest measured on the development machine); each kernel's role says when gemm() picks
// it; the spares are kept for measuring with gemm()'s `kernel` argument (test_cpu_gemm checks every one).
const GemmMicroKernel* avx512_micro_kernels(int& count);
const GemmMicroKernel* avx2_micro_kernels(int& count);
const GemmMicroKernel* neon_micro_kernels(int& count);

// The FMA-peak loop of a level (fma_probe.hpp): run(iterations) performs iterations x chains vector FMAs of `lanes`
// floats on independent accumulators. nullptr where the compiler or the platform lacks that instruction set.
struct SimdFmaLoop {
  float (*run)(int64_t iterations);  // int64_t: long is 32 bits on Windows
  int lanes, chains;
  const char* width;  // "zmm (16 x fp32)"
};
const SimdFmaLoop* avx512_fma_loop();
const SimdFmaLoop* avx2_fma_loop();
const SimdFmaLoop* neon_fma_loop();

}  // namespace cpu
