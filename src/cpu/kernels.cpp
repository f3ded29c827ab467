// The CPU kernels (see kernels.hpp). A fair baseline: the fp32 GEMMs run the packed, register-blocked SIMD GEMM of
// gemm.hpp (AVX-512 or AVX2 micro-kernels chosen at run time); double (the finite-difference checks) and CPUs without
// AVX2 run the portable register-blocked loops below, which the compiler vectorizes. Neither uses -ffast-math.
// std::fma is spelled out because ISO C++ mode does not contract a*b+c into an FMA; it also makes every output
// bit-identical however the work is tiled or split over threads (each output is always the same chain of fmas in
// the same order, k ascending from 0), so results depend neither on the thread count nor on the SIMD path.
#include "cpu/kernels.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <type_traits>
#include <vector>

#include "cpu/gemm.hpp"
#include "cpu/thread_pool.hpp"

namespace cpu {
namespace {

using core::Activation;

// Items per parallel_for chunk so that a chunk holds at least ~64k flops (or element updates): below that,
// waking a worker costs more than it saves.
size_t grain_for(double work_per_item) {
  constexpr double kMinChunkWork = 65536;
  return static_cast<size_t>(std::max(1.0, std::ceil(kMinChunkWork / std::max(work_per_item, 1.0))));
}

// e^z for float without a libm call, so that the loops around it vectorize (always_inline: gcc vectorizes only
// what it has inlined by then): Cody-Waite range reduction
// z = n ln2 + r (|r| <= ln2/2, ln2 split into a 16-bit head and a tail) and the degree-7 Taylor polynomial of e^r
// (truncation < 5e-9); measured relative error <= 1.3 ulp. Saturates to ~1e-38 / ~2e38 outside [-87, 88].
[[gnu::always_inline]] inline float exp_approx(float z) {
  const float n = std::clamp((z * 1.44269504f + 12582912.0f) - 12582912.0f, -126.0f, 127.0f);  // round(z/ln2)
  float r = std::fma(n, -0.693145751953125f, z);
  r = std::clamp(std::fma(n, -1.4286068203094173e-06f, r), -0.35f, 0.35f);
  float p = std::fma(1.0f / 5040, r, 1.0f / 720);  // Horner, from the r^7 coefficient 1/7! down
  p = std::fma(p, r, 1.0f / 120);
  p = std::fma(p, r, 1.0f / 24);
  p = std::fma(p, r, 1.0f / 6);
  p = std::fma(p, r, 0.5f);
  p = std::fma(p, r, 1.0f);
  p = std::fma(p, r, 1.0f);
  return p * std::bit_cast<float>((static_cast<int32_t>(n) + 127) << 23);  // p * 2^n
}

template <typename T>
[[gnu::always_inline]] inline T exp_of(T z) {
  if constexpr (std::is_same_v<T, float>) return exp_approx(z);
  else return std::exp(z);
}

// sqrt for the AdamW loop. With -fno-math-errno (gcc then defines __NO_MATH_ERRNO__) std::sqrt vectorizes to
// vsqrtps; otherwise its errno contract keeps the loop scalar (5x slower), so float uses the inverse square root by
// the bit-level first guess (constant 0x5f375a86, C. Lomont, "Fast inverse square root", 2003) and three Newton
// steps y <- y(1.5 - 0.5 v y²): measured relative error <= 1.7e-7 for v in [1e-30, 1e30], sqrt(0) = 0.
template <typename T>
[[gnu::always_inline]] inline T sqrt_of(T v) {
#if defined(__NO_MATH_ERRNO__)
  return std::sqrt(v);
#else
  if constexpr (std::is_same_v<T, float>) {
    float y = std::bit_cast<float>(0x5f375a86 - (std::bit_cast<int32_t>(v) >> 1));
    y = y * (1.5f - 0.5f * v * y * y);  // written out: a loop here is left rolled and blocks vectorization
    y = y * (1.5f - 0.5f * v * y * y);
    y = y * (1.5f - 0.5f * v * y * y);
    return v * y;
  } else {
    return std::sqrt(v);
  }
#endif
}

// The tanh-approximated GELU, rewritten with 0.5(1 + tanh u) = sigmoid(2u) (no cancellation for x << 0):
//   gelu(x) = x sigmoid(2u),  u = sqrt(2/pi)(x + 0.044715 x³)  (Hendrycks & Gimpel 2016; torch approximate='tanh')
//   gelu'(x) = sigmoid(2u) + 2x sigmoid(2u)(1 - sigmoid(2u)) u',  u' = sqrt(2/pi)(1 + 3 * 0.044715 x²)
constexpr double kGeluScale = 0.7978845608028654, kGeluCubic = 0.044715;

template <typename T>
[[gnu::always_inline]] inline T gelu_sigmoid(T x) {
  const T u = T(kGeluScale) * (x + T(kGeluCubic) * x * x * x);
  return T(1) / (T(1) + exp_of(T(-2) * u));
}

template <typename T>
[[gnu::always_inline]] inline T gelu_grad(T x) {
  const T sg = gelu_sigmoid(x);
  const T du = T(kGeluScale) * (T(1) + T(3 * kGeluCubic) * x * x);
  return sg + T(2) * x * sg * (T(1) - sg) * du;
}

// --- out (I,J) = A (I,K) · Bm (K,J) as rank-1 updates along the contiguous rows of Bm: per k, 2 vectors of Bm
// stay in registers and each of the kNnRows values of A is broadcast against them. A is read with strides (a_is per
// row, a_ks per k), so it can be a matrix or a transposed one. ---

constexpr int kNnRows = 5, kNnCols = 16;  // 10 accumulators + 2 Bm vectors + 1 broadcast: 7 loads per 10 fmas

// One tile: rows [0, ri) (ri <= kNnRows) x kNnCols columns, storing columns [0, nj). A tile with fewer rows repeats its
// last row instead of having its own instance: gcc vectorizes the 5-row loop nest reliably, not the smaller ones.
// kOutT stores the tile transposed: out[j*ldo + i]. noinline: compiled on its own, the register allocation of the
// loop does not depend on the caller (inlined into the forward pass, gcc spilled and ran 35% slower).
// With accumulate, the tile continues the sums already in out (a later block of K; the chain of fmas per output is
// the same as in one pass, the float stored in between is exact).
template <typename T, bool kOutT>
[[gnu::noinline]] void nn_tile(T* out, long ldo, int ri, int nj, const T* a, long a_is, long a_ks, const T* bm,
                               long ldb, long K, bool accumulate = false) {
  constexpr int NJ = kNnCols;
  long row[kNnRows];
  for (int i = 0; i < kNnRows; ++i) row[i] = std::min(i, ri - 1) * a_is;
  T acc[kNnRows][NJ] = {};
  if (accumulate)
    for (int i = 0; i < ri; ++i)
      for (int j = 0; j < nj; ++j) acc[i][j] = kOutT ? out[j * ldo + i] : out[i * ldo + j];
  for (long k = 0; k < K; ++k) {
    const T* brow = bm + k * ldb;
#pragma GCC unroll 8
    for (int i = 0; i < kNnRows; ++i) {
      const T av = a[row[i] + k * a_ks];
      for (int j = 0; j < NJ; ++j) acc[i][j] = std::fma(av, brow[j], acc[i][j]);
    }
  }
  for (int i = 0; i < ri; ++i)
    for (int j = 0; j < nj; ++j) (kOutT ? out[j * ldo + i] : out[i * ldo + j]) = acc[i][j];
}

// out (I,J) = A (I,K) · Bm (K,J), parallel over tiles. Tiles are numbered column strip by column strip; a chunk of
// consecutive tiles copies its strip of Bm (K x kNnCols, zero-padded past J) once into a contiguous buffer, and
// walks down its rows block of kKBlock rows of the strip by block, so that the block (16 KB) stays in L1. (Read in
// place, a strip with a power-of-two row stride such as C = 256 maps onto a handful of cache sets and is evicted:
// 25% slower; without the blocks, K = batch 1024 ran 30% slower.)
constexpr long kKBlock = 256;

template <typename T>
void matmul_nn(T* out, const T* a, long a_is, long a_ks, const T* bm, long I, long J, long K, ThreadPool& pool) {
  const long row_tiles = (I + kNnRows - 1) / kNnRows;
  const long strips = (J + kNnCols - 1) / kNnCols;
  const size_t grain = grain_for(2.0 * kNnRows * kNnCols * static_cast<double>(K));
  pool.parallel_for(static_cast<size_t>(row_tiles * strips), grain, [&](size_t t0, size_t t1) {
    thread_local std::vector<T> packed;  // (K, kNnCols), one per thread
    packed.resize(std::max(packed.size(), static_cast<size_t>(K * kNnCols)));
    for (long t = static_cast<long>(t0); t < static_cast<long>(t1);) {
      const long strip = t / row_tiles, end = std::min(static_cast<long>(t1), (strip + 1) * row_tiles);
      const long j0 = strip * kNnCols, width = std::min<long>(kNnCols, J - j0);
      T* dst = packed.data();
      if (width < kNnCols) std::fill(dst, dst + K * kNnCols, T(0));
      for (long k = 0; k < K; ++k) std::copy_n(bm + k * J + j0, width, dst + k * kNnCols);
      for (long k0 = 0; k0 < K; k0 += kKBlock)
        for (long tile = t; tile < end; ++tile) {
          const long i0 = (tile % row_tiles) * kNnRows;
          nn_tile<T, false>(out + i0 * J + j0, J, static_cast<int>(std::min<long>(kNnRows, I - i0)),
                            static_cast<int>(width), a + i0 * a_is + k0 * a_ks, a_is, a_ks, dst + k0 * kNnCols,
                            kNnCols, std::min(kKBlock, K - k0), k0 > 0);
        }
      t = end;
    }
  });
}

// Rows [b0, b0 + width) x columns [o0, o1) of the sums in out (B,OC), or in preact with apply_act: adds the bias
// and applies the activation from preact into out.
template <typename T>
void forward_epilogue(T* out, T* preact, const T* bias, long OC, long b0, long width, long o0, long o1, bool apply_act,
                      Activation act) {
  if (bias == nullptr) return;  // --unfused: the plain sums; bias_add and act_forward follow
  const long n = o1 - o0;
  const T* bs = bias + o0;
  for (long j = 0; j < width; ++j) {
    T* o = out + (b0 + j) * OC + o0;
    if (!apply_act) {
      for (long c = 0; c < n; ++c) o[c] += bs[c];
      continue;
    }
    T* p = preact + (b0 + j) * OC + o0;
    for (long c = 0; c < n; ++c) p[c] += bs[c];
    if (act == Activation::ReLU) {
      for (long c = 0; c < n; ++c) o[c] = p[c] > T(0) ? p[c] : T(0);
    } else {
      for (long c = 0; c < n; ++c) o[c] = p[c] * gelu_sigmoid(p[c]);
    }
  }
}

}  // namespace

template <typename T>
T activation(T x, Activation act) {
  if (act == Activation::ReLU) return x > T(0) ? x : T(0);
  return x * gelu_sigmoid(x);
}

template <typename T>
void gather_batch(T* x_out, int32_t* y_out, const float* x, const int32_t* y, const uint32_t* indices, long B, long C,
                  ThreadPool& pool) {
  pool.parallel_for(static_cast<size_t>(B), grain_for(static_cast<double>(C)), [&](size_t b0, size_t b1) {
    for (size_t b = b0; b < b1; ++b) {
      const float* src = x + static_cast<size_t>(indices[b]) * static_cast<size_t>(C);
      T* dst = x_out + b * static_cast<size_t>(C);
      for (long c = 0; c < C; ++c) dst[c] = static_cast<T>(src[c]);
      y_out[b] = y[indices[b]];
    }
  });
}

template <typename T>
void matmul_forward(T* out, T* preact, const T* inp, const T* weight, const T* bias, long B, long C, long OC,
                    bool apply_act, Activation act, ThreadPool& pool) {
  if constexpr (std::is_same_v<T, float>) {
    if (active_micro_kernel() != nullptr) {  // the packed SIMD GEMM (gemm.hpp), bias and activation per finished tile
      const GemmEpilogue epilogue = [&](long m0, long m1, long n0, long n1) {
        forward_epilogue(out, preact, bias, OC, m0, m1 - m0, n0, n1, apply_act, act);
      };
      gemm(apply_act ? preact : out, OC, {inp, C, 1}, {weight, 1, C}, B, OC, C, pool, bias ? &epilogue : nullptr);
      return;
    }
  }
  // The portable path: outᵀ (OC,B) = weight (OC,C) · inpᵀ (C,B): weight is the broadcast operand (its rows are contiguous in C) and a
  // strip of kNnCols batch rows, packed transposed into (C, kNnCols), is the vector operand. Tiles are stored
  // transposed into preact (or out); the epilogue adds the bias and applies the activation.
  T* sums = apply_act ? preact : out;
  const long strips = (B + kNnCols - 1) / kNnCols;
  // With few strips, OC is split into groups too so that every thread gets work; a group keeps >= 40 outputs so that
  // packing its strip (16 x C copies) stays small next to its 2 x 16 x C x 40 flops.
  const long want_tasks = 4L * pool.size();
  const long groups = std::clamp((want_tasks + strips - 1) / strips, 1L, std::max(1L, OC / 40));
  const long group_rows = ((OC + groups - 1) / groups + kNnRows - 1) / kNnRows * kNnRows;
  const long n_groups = (OC + group_rows - 1) / group_rows;
  const size_t grain = grain_for(2.0 * kNnCols * static_cast<double>(group_rows) * static_cast<double>(C));
  pool.parallel_for(static_cast<size_t>(strips * n_groups), grain, [&](size_t t0, size_t t1) {
    thread_local std::vector<T> packed;  // (C, kNnCols), one per thread
    packed.resize(std::max(packed.size(), static_cast<size_t>(C * kNnCols)));
    long packed_strip = -1;
    for (size_t t = t0; t < t1; ++t) {
      const long strip = static_cast<long>(t) / n_groups, group = static_cast<long>(t) % n_groups;
      const long b0 = strip * kNnCols, width = std::min<long>(kNnCols, B - b0);
      if (strip != packed_strip) {
        T* dst = packed.data();
        if (width < kNnCols) std::fill(dst, dst + C * kNnCols, T(0));  // the tile computes all 16 columns
        for (long c0 = 0; c0 < C; c0 += 64) {  // 64 columns at a time: the written lines stay in L1
          const long c1 = std::min(C, c0 + 64);
          for (long j = 0; j < width; ++j) {
            const T* src = inp + (b0 + j) * C;
            for (long c = c0; c < c1; ++c) dst[c * kNnCols + j] = src[c];
          }
        }
        packed_strip = strip;
      }
      const long o0 = group * group_rows, o1 = std::min(OC, o0 + group_rows);
      for (long i0 = o0; i0 < o1; i0 += kNnRows) {
        const int ri = static_cast<int>(std::min<long>(kNnRows, o1 - i0));
        nn_tile<T, true>(sums + b0 * OC + i0, OC, ri, static_cast<int>(width), weight + i0 * C, C, 1, packed.data(),
                         kNnCols, C);
      }
      forward_epilogue(out, preact, bias, OC, b0, width, o0, o1, apply_act, act);
    }
  });
}

template <typename T>
void softmax_xent_forward_backward(T* losses, T* dlogits, int32_t* correct, const T* logits, const int32_t* labels,
                                   long B, long K, T dloss_scale, ThreadPool& pool) {
  pool.parallel_for(static_cast<size_t>(B), grain_for(20.0 * static_cast<double>(K)), [=](size_t b0, size_t b1) {
    for (size_t b = b0; b < b1; ++b) {
      const T* z = logits + b * static_cast<size_t>(K);
      long argmax = 0;
      for (long k = 1; k < K; ++k)
        if (z[k] > z[argmax]) argmax = k;
      const T zmax = z[argmax];
      // Each exp once: in training kept in the row's dlogits (a vectorized loop) for the gradient, then summed in
      // order (the same sum as without keeping them).
      T* d = dlogits ? dlogits + b * static_cast<size_t>(K) : nullptr;
      T sum = 0;
      if (d) {
        for (long k = 0; k < K; ++k) d[k] = exp_of(z[k] - zmax);
        for (long k = 0; k < K; ++k) sum += d[k];
      } else {
        for (long k = 0; k < K; ++k) sum += exp_of(z[k] - zmax);
      }
      const long label = labels[b];
      // -log(exp(z_label - max) / sum), in the stable form
      losses[b] = std::log(sum) - (z[label] - zmax);
      if (correct) correct[b] = argmax == label ? 1 : 0;
      if (d) {
        const T inv_sum = T(1) / sum;
        for (long k = 0; k < K; ++k) d[k] = (d[k] * inv_sum - (k == label ? T(1) : T(0))) * dloss_scale;
      }
    }
  });
}

template <typename T>
T loss_reduce(const T* losses, long B) {
  double sum = 0;
  for (long b = 0; b < B; ++b) sum += static_cast<double>(losses[b]);
  return static_cast<T>(B > 0 ? sum / static_cast<double>(B) : 0.0);
}

template <typename T>
void bias_add(T* out, const T* bias, long B, long OC, ThreadPool& pool) {
  pool.parallel_for(static_cast<size_t>(B), grain_for(static_cast<double>(OC)), [=](size_t b0, size_t b1) {
    for (size_t b = b0; b < b1; ++b) {
      T* row = out + b * static_cast<size_t>(OC);
      for (long o = 0; o < OC; ++o) row[o] += bias[o];
    }
  });
}

template <typename T>
void act_forward(T* preact, T* out, size_t N, Activation act, ThreadPool& pool) {
  const double work = act == Activation::ReLU ? 1.0 : 30.0;  // GELU: a tanh per element
  // One pass: each element read once, both outputs written from the register.
  pool.parallel_for(N, grain_for(work), [=](size_t i0, size_t i1) {
    if (act == Activation::ReLU) {
      for (size_t i = i0; i < i1; ++i) {
        const T x = out[i];
        preact[i] = x;
        out[i] = x > T(0) ? x : T(0);
      }
    } else {
      for (size_t i = i0; i < i1; ++i) {
        const T x = out[i];
        preact[i] = x;
        out[i] = x * gelu_sigmoid(x);
      }
    }
  });
}

template <typename T>
void act_backward(T* dpreact, const T* dout, const T* preact, size_t N, Activation act, ThreadPool& pool) {
  const double work = act == Activation::ReLU ? 1.0 : 30.0;  // GELU: a tanh per element
  pool.parallel_for(N, grain_for(work), [=](size_t i0, size_t i1) {
    if (act == Activation::ReLU) {
      for (size_t i = i0; i < i1; ++i) {
        const T d = dout[i];  // loaded unconditionally, so that the select vectorizes
        dpreact[i] = preact[i] > T(0) ? d : T(0);
      }
    } else {
      for (size_t i = i0; i < i1; ++i) dpreact[i] = dout[i] * gelu_grad(preact[i]);
    }
  });
}

template <typename T>
void matmul_backward_weight(T* dweight, const T* dout, const T* inp, long B, long C, long OC, ThreadPool& pool) {
  // dweight (OC,C) = A (OC,B) · inp (B,C) with A(o,b) = dout[b*OC + o]
  if constexpr (std::is_same_v<T, float>) {
    if (active_micro_kernel() != nullptr) return gemm(dweight, C, {dout, 1, OC}, {inp, C, 1}, OC, C, B, pool);
  }
  matmul_nn(dweight, dout, 1, OC, inp, OC, C, B, pool);
}

template <typename T>
void bias_backward(T* dbias, const T* dout, long B, long OC, ThreadPool& pool) {
  // Columns split over threads; each sums down the rows with contiguous (vectorizable) row segments.
  pool.parallel_for(static_cast<size_t>(OC), std::max<size_t>(8, grain_for(static_cast<double>(B))),
                    [&](size_t o0, size_t o1) {
                      for (size_t o = o0; o < o1; ++o) dbias[o] = 0;
                      for (long b = 0; b < B; ++b) {
                        const T* row = dout + b * OC;
                        for (size_t o = o0; o < o1; ++o) dbias[o] += row[o];
                      }
                    });
}

template <typename T>
void matmul_backward_data(T* dinp, const T* dout, const T* weight, long B, long C, long OC, ThreadPool& pool) {
  // dinp (B,C) = dout (B,OC) · weight (OC,C)
  if constexpr (std::is_same_v<T, float>) {
    if (active_micro_kernel() != nullptr) return gemm(dinp, C, {dout, OC, 1}, {weight, C, 1}, B, C, OC, pool);
  }
  matmul_nn(dinp, dout, OC, 1, weight, B, C, OC, pool);
}

template <typename T>
void adamw_update(T* params, T* m, T* v, const T* grads, size_t N, float lr, float beta1, float beta2, float eps,
                  float weight_decay, long t, ThreadPool& pool) {
  // torch's order of operations: decay, moments, then p -= step_size * m / (sqrt(v) / sqrt(bc2) + eps).
  const double bc1 = 1.0 - std::pow(static_cast<double>(beta1), static_cast<double>(t));
  const double bc2 = 1.0 - std::pow(static_cast<double>(beta2), static_cast<double>(t));
  const T decay = static_cast<T>(1.0 - static_cast<double>(lr) * weight_decay);
  const T step_size = static_cast<T>(lr / bc1), inv_bc2_sqrt = static_cast<T>(1.0 / std::sqrt(bc2));
  const T b1 = beta1, b2 = beta2, e = eps;
  // [=]: the scalars are copied into the lambda; by reference, gcc cannot prove the stores to params/m/v leave them
  // unchanged, reloads them every element and does not vectorize.
  pool.parallel_for(N, grain_for(8.0), [=](size_t i0, size_t i1) {
    for (size_t i = i0; i < i1; ++i) {
      const T g = grads[i];
      const T mi = b1 * m[i] + (T(1) - b1) * g;
      const T vi = b2 * v[i] + (T(1) - b2) * g * g;
      m[i] = mi;
      v[i] = vi;
      params[i] = params[i] * decay - step_size * mi / (sqrt_of(vi) * inv_bc2_sqrt + e);
    }
  });
}

template <typename T>
void sgd_update(T* params, T* momentum_buf, const T* grads, size_t N, float lr, float momentum, float weight_decay,
                long t, ThreadPool& pool) {
  const T mu = momentum, wd = weight_decay, step = lr;
  const bool first = t <= 1;
  pool.parallel_for(N, grain_for(4.0), [=](size_t i0, size_t i1) {
    for (size_t i = i0; i < i1; ++i) {
      const T g = grads[i] + wd * params[i];
      const T buf = first ? g : mu * momentum_buf[i] + g;
      momentum_buf[i] = buf;
      params[i] -= step * buf;
    }
  });
}

#define TRAINSCOPE_CPU_KERNELS(T)                                                                                     \
  template T activation<T>(T, Activation);                                                                            \
  template void gather_batch<T>(T*, int32_t*, const float*, const int32_t*, const uint32_t*, long, long,              \
                                ThreadPool&);                                                                         \
  template void matmul_forward<T>(T*, T*, const T*, const T*, const T*, long, long, long, bool, Activation,           \
                                  ThreadPool&);                                                                       \
  template void softmax_xent_forward_backward<T>(T*, T*, int32_t*, const T*, const int32_t*, long, long, T,           \
                                                 ThreadPool&);                                                        \
  template T loss_reduce<T>(const T*, long);                                                                          \
  template void bias_add<T>(T*, const T*, long, long, ThreadPool&);                                                  \
  template void act_forward<T>(T*, T*, size_t, Activation, ThreadPool&);                                              \
  template void act_backward<T>(T*, const T*, const T*, size_t, Activation, ThreadPool&);                             \
  template void matmul_backward_weight<T>(T*, const T*, const T*, long, long, long, ThreadPool&);                     \
  template void bias_backward<T>(T*, const T*, long, long, ThreadPool&);                                              \
  template void matmul_backward_data<T>(T*, const T*, const T*, long, long, long, ThreadPool&);                       \
  template void adamw_update<T>(T*, T*, T*, const T*, size_t, float, float, float, float, float, long, ThreadPool&);  \
  template void sgd_update<T>(T*, T*, const T*, size_t, float, float, float, long, ThreadPool&);

TRAINSCOPE_CPU_KERNELS(float)
TRAINSCOPE_CPU_KERNELS(double)

}  // namespace cpu
