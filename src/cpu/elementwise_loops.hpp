// The elementwise loops of the CPU kernels whose speed depends on the SIMD level (the GEMM and convolution epilogues'
// bias and act(x), act_backward's gradient, the softmaxes' e^x, AdamW's update and max pooling's rows),
// compiled once per SIMD level and chosen at run time like the GEMM's micro-kernels (simd.hpp): the GELU's and SiLU's
// e^x (fast_math.hpp) is a polynomial whose fused multiply-adds are cpu::fma, the FMA instruction where a file is
// compiled with it and a correctly rounded software FMA where not. A portable build (the downloads: baseline x86-64,
// no FMA) ran the software one in these loops, and its CPU trained the classic benchmark's GELU MLP at half the speed
// of a local build on the same CPU (2026-11-29: act_backward 24.7 ms a step against 0.51, the forward epilogue about
// 15 ms more): a GPU speedup on a teacher's laptop would have been twice too kind. Every level computes the same bits
// (cpu::fma is correctly rounded either way, and the level files do not contract a*b + c: src/CMakeLists.txt), so the
// choice changes only the speed.
// The same held for the softmaxes' e^x (the attention kernels' online softmax and recomputed probabilities,
// softmax_xent_forward_backward): the portable build trained the character transformer 4.7x slower than a native
// build, nearly all of it in those e^x loops. exp_row runs them at the level (exp_at_level below); measured
// 2026-11-29 on the 2-core EPYC (AVX-512), load 2.1-2.6, `train --model transformer --dataset fortunes --context 128
// --batch 16 --threads 2`, medians of alternating runs: portable build 65.4 -> 14.8 ms a step (native 12.35 -> 12.22),
// the fused attention forward 9.12 -> 0.88 ms, dq 9.43 -> 0.92, dkv 9.50 -> 1.05, softmax_xent 3.83 -> 0.28
// (docs/benchmarks.md, "e^x in the portable build").
#pragma once
#include "core/model.hpp"
#include "cpu/fast_math.hpp"
#include "cpu/pool_rows.hpp"

namespace cpu {

struct ElementwiseLoops {
  // out[i] = act(in[i]) for i < n (in and out may be the same array): fast_math.hpp's activate().
  void (*activate)(const float* in, float* out, long n, core::Activation act);
  // dpreact[i] = dout[i] * act'(preact[i]) for i < n (dpreact may be dout): fast_math.hpp's activation_gradient().
  void (*gradient)(const float* dout, const float* preact, float* dpreact, long n, core::Activation act);
  // The forward GEMMs' and convolutions' epilogue over rows of n values, ld apart: the bias added to the sums, then
  // with apply_act out = act(sums): fast_math.hpp's bias_activate_rows(). Per level for the add's width too: in the
  // portable build it was SSE2's 4 lanes, a tenth of the CNN's conv2d_forward there.
  void (*bias_activate_rows)(float* sums, const float* bias, float* out, long ld, long rows, long n, bool apply_act,
                             core::Activation act);
  // out[i] = e^z[i] for i < n (out may be z): fast_math.hpp's exp_row(), exp_approx() of each element.
  void (*exp_row)(const float* z, float* out, long n);
  // AdamW's update of params, m, v (i < n) from grads: fast_math.hpp's adamw_row(). Per level for its speed where the
  // parameters fit in the caches: in a portable build the loop is SSE2's 4 lanes, and the Fashion MLP's update (235k
  // parameters) took 2.4x the native build's time, about a tenth of the step.
  void (*adamw)(float* params, float* m, float* v, const float* grads, long n, AdamWCoefficients k);
  // 2x2 max pooling's rows (pool_rows.hpp): max_pool_forward's output row and max_pool_backward's two input rows.
  // Per level for their vector width: the portable build's SSE2 took 1.2x and 1.5x the native time on the CNN.
  void (*max_pool_row)(float* out, const float* i0, const float* i1, size_t OW, size_t C);
  void (*max_pool_gradient_row)(float* d0, float* d1, const float* i0, const float* i1, const float* g, size_t OW,
                                size_t C);
  const char* level;  // "portable", "AVX2", "AVX-512"
};

// The loops of the level the kernels use now (active_simd_level(); the portable ones where a level has none).
const ElementwiseLoops& elementwise_loops();

// Each level's loops, nullptr where the compiler or the platform lacks that instruction set (for the tests).
const ElementwiseLoops* avx2_elementwise_loops();
const ElementwiseLoops* avx512_elementwise_loops();
const ElementwiseLoops& portable_elementwise_loops();

// p[i] = e^arg(i) for i < n (arg may read p[i]), for a kernel outside the level files: where the calling file has the
// FMA instruction itself (a native build; AArch64) one loop of fast_math.hpp's exp_approx, as the kernels had it (the
// arguments stored first and a call per row of 64 scores cost the native build 5-15% in the attention backward);
// else (a portable x86 build) the arguments first, then `loops`'s exp_row over them. The same bits either way.
template <typename Arg>
[[gnu::always_inline]] inline void exp_at_level(const ElementwiseLoops& loops, float* p, long n, Arg arg) {
#if defined(__FMA__) || defined(__ARM_FEATURE_FMA)
  (void)loops;
  for (long i = 0; i < n; ++i) p[i] = exp_approx(arg(i));
#else
  for (long i = 0; i < n; ++i) p[i] = arg(i);
  loops.exp_row(p, p, n);
#endif
}

}  // namespace cpu
