// The GEMMs of the CPU twins where no SIMD micro-kernel runs (a CPU without AVX2: cpu::active_micro_kernel() is null):
// register-blocked loops the compiler vectorizes. Each output is one chain of std::fma over k ascending from 0, as in
// gemm.hpp, so results do not depend on the thread count.
#pragma once
#include <functional>

namespace cpu {

class ThreadPool;

// out (I,J) = A (I,K) · Bm (K,J), overwritten; A(i,k) = a[i * a_is + k * a_ks] (a matrix or a transposed one), Bm
// row-major and contiguous. Parallel over tiles of 5 rows x 16 columns.
void portable_gemm(float* out, const float* a, long a_is, long a_ks, const float* bm, long I, long J, long K,
                   ThreadPool& pool);

// The forward form: sums (B,OC) = inp (B,C) · weight (OC,C)ᵀ, overwritten; then, for each finished block of batch rows
// [b0, b0 + width) x outputs [o0, o1), epilogue(b0, width, o0, o1) on the thread that computed it (bias and activation).
using PortableEpilogue = std::function<void(long b0, long width, long o0, long o1)>;
void portable_gemm_forward(float* sums, const float* inp, const float* weight, long B, long C, long OC, ThreadPool& pool,
                           const PortableEpilogue& epilogue);

}  // namespace cpu
