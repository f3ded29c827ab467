// The CPU kernels on 16-bit storage (see kernels16.hpp): widen, run the fp32 kernel, round back. The element-wise
// kernels run the fp32 kernel chunk by chunk on a 1-thread pool inside each chunk of the caller's pool, so that the
// fp32 copies of a chunk stay in L1 and the arithmetic is still exactly the fp32 kernel's (it is per element).
#include "cpu/kernels16.hpp"

#include <algorithm>
#include <atomic>
#include <initializer_list>

#include "core/half.hpp"
#include "cpu/kernels.hpp"
#include "cpu/thread_pool.hpp"

namespace cpu {
namespace {

// Elements per parallel_for chunk of a plain conversion (about 10 us of F16C work: waking a worker costs more below).
constexpr size_t kConvertGrain = 16384;

void widen(float* dst, const uint16_t* src, size_t n, Storage16 s) {
  if (s == Storage16::FP16) core::from_fp16(dst, src, n);
  else core::from_bf16(dst, src, n);
}

void narrow(uint16_t* dst, const float* src, size_t n, Storage16 s) {
  if (s == Storage16::FP16) core::to_fp16(dst, src, n);
  else core::to_bf16(dst, src, n);
}

// A pool of one thread (the caller: parallel_for runs fn inline), for running an fp32 kernel on one chunk from inside
// a chunk of the caller's pool (ThreadPool::parallel_for is not re-entrant). One per thread, so nothing is shared.
ThreadPool& inline_pool() {
  thread_local ThreadPool pool(1);
  return pool;
}

// Grow-only per-thread fp32 buffer i (0..3) of at least n floats, for the chunks of the element-wise kernels.
float* chunk_buffer(int i, size_t n) {
  thread_local std::vector<float> buffers[4];
  auto& b = buffers[i];
  if (b.size() < n) b.resize(std::max(n, kChunk16));
  return b.data();
}

// Several conversions of one kernel in one parallel_for (one wake-up of the pool instead of one per operand).
struct Widen {
  float* dst;
  const uint16_t* src;
  size_t n;
};
struct Narrow {
  uint16_t* dst;
  const float* src;
  size_t n;
};

// Calls fn(op, offset, count) for the parts of ops that fall into [g0, g1) of their concatenation.
template <typename Op, typename Fn>
void for_each_part(const Op* ops, int count, size_t g0, size_t g1, Fn fn) {
  size_t base = 0;
  for (int i = 0; i < count; ++i) {
    const size_t b = std::max(g0, base), e = std::min(g1, base + ops[i].n);
    if (b < e) fn(ops[i], b - base, e - b);
    base += ops[i].n;
  }
}

void widen_all(std::initializer_list<Widen> ops, Storage16 s, ThreadPool& pool) {
  size_t total = 0;
  for (const auto& op : ops) total += op.n;
  pool.parallel_for(total, kConvertGrain, [&](size_t g0, size_t g1) {
    for_each_part(ops.begin(), static_cast<int>(ops.size()), g0, g1,
                  [s](const Widen& op, size_t off, size_t n) { widen(op.dst + off, op.src + off, n, s); });
  });
}

void narrow_all(std::initializer_list<Narrow> ops, Storage16 s, ThreadPool& pool) {
  size_t total = 0;
  for (const auto& op : ops) total += op.n;
  pool.parallel_for(total, kConvertGrain, [&](size_t g0, size_t g1) {
    for_each_part(ops.begin(), static_cast<int>(ops.size()), g0, g1,
                  [s](const Narrow& op, size_t off, size_t n) { narrow(op.dst + off, op.src + off, n, s); });
  });
}

size_t sz(long n) { return static_cast<size_t>(n); }

constexpr size_t kAlign = 16;  // Workspace16: floats; each region starts 64 bytes after a multiple of the arena's start

// g (n) *= grad_scale; 1 leaves the widened grads untouched (bit for bit the unscaled update).
void scale_grads(float* g, size_t n, float grad_scale) {
  if (grad_scale == 1.0f) return;
  for (size_t i = 0; i < n; ++i) g[i] *= grad_scale;
}

}  // namespace

const char* to_string(Storage16 s) { return s == Storage16::FP16 ? "fp16" : "bf16"; }

size_t Workspace16::floats_for(const size_t* sizes, int count) {
  size_t total = 0;
  for (int i = 0; i < count; ++i) total += (sizes[i] + kAlign - 1) / kAlign * kAlign;
  return total;
}

void Workspace16::reserve(size_t floats) {
  // A fresh vector of exactly `floats` (resize() could double the capacity); the old contents need not survive.
  if (arena_.size() < floats) arena_ = std::vector<float>(floats);
}

void Workspace16::carve(float** regions, const size_t* sizes, int count) {
  reserve(floats_for(sizes, count));
  float* p = arena_.data();
  for (int i = 0; i < count; ++i) {
    regions[i] = p;
    p += (sizes[i] + kAlign - 1) / kAlign * kAlign;
  }
}

void widen16(float* dst, const uint16_t* src, size_t n, Storage16 s, ThreadPool& pool) {
  widen_all({{dst, src, n}}, s, pool);
}

void narrow16(uint16_t* dst, const float* src, size_t n, Storage16 s, ThreadPool& pool) {
  narrow_all({{dst, src, n}}, s, pool);
}

void gather_batch16(uint16_t* x_out, int32_t* y_out, const float* x, const int32_t* y, const uint32_t* indices,
                    long B, long C, Storage16 s, ThreadPool& pool) {
  // The fp32 gather is a copy, so rounding each source row directly is round(fp32 gather).
  const size_t grain = std::max<size_t>(1, kConvertGrain / std::max<size_t>(1, sz(C)));
  pool.parallel_for(sz(B), grain, [&](size_t b0, size_t b1) {
    for (size_t b = b0; b < b1; ++b) {
      narrow(x_out + b * sz(C), x + static_cast<size_t>(indices[b]) * sz(C), sz(C), s);
      y_out[b] = y[indices[b]];
    }
  });
}

void matmul_forward16(uint16_t* out, uint16_t* preact, const uint16_t* inp, const uint16_t* weight,
                      const uint16_t* bias, long B, long C, long OC, bool apply_act, core::Activation act, Storage16 s,
                      Workspace16& ws, ThreadPool& pool) {
  float* r[5];  // inp, weight, bias, out, preact
  const size_t sizes[5] = {sz(B * C), sz(OC * C), bias ? sz(OC) : 0, sz(B * OC), apply_act ? sz(B * OC) : 0};
  ws.carve(r, sizes, 5);
  if (bias)
    widen_all({{r[0], inp, sizes[0]}, {r[1], weight, sizes[1]}, {r[2], bias, sizes[2]}}, s, pool);
  else
    widen_all({{r[0], inp, sizes[0]}, {r[1], weight, sizes[1]}}, s, pool);
  matmul_forward(r[3], apply_act ? r[4] : nullptr, r[0], r[1], bias ? r[2] : nullptr, B, C, OC, apply_act, act, pool);
  if (apply_act) narrow_all({{out, r[3], sizes[3]}, {preact, r[4], sizes[4]}}, s, pool);
  else narrow_all({{out, r[3], sizes[3]}}, s, pool);
}

void softmax_xent_forward_backward16(float* losses, uint16_t* dlogits, int32_t* correct, const uint16_t* logits,
                                     const int32_t* labels, long B, long K, float dloss_scale, Storage16 s,
                                     ThreadPool& pool) {
  // Rows are independent: widen a block of rows, run the fp32 kernel on it, round its dlogits.
  const size_t rows_per_block = std::max<size_t>(1, kChunk16 / std::max<size_t>(1, sz(K)));
  const size_t grain = std::max<size_t>(1, 65536 / (20 * std::max<size_t>(1, sz(K))));  // as the fp32 kernel
  pool.parallel_for(sz(B), grain, [&](size_t b0, size_t b1) {
    float* z = chunk_buffer(0, rows_per_block * sz(K));
    float* d = dlogits ? chunk_buffer(1, rows_per_block * sz(K)) : nullptr;
    for (size_t r0 = b0; r0 < b1; r0 += rows_per_block) {
      const size_t rows = std::min(rows_per_block, b1 - r0), n = rows * sz(K);
      widen(z, logits + r0 * sz(K), n, s);
      softmax_xent_forward_backward(losses + r0, d, correct ? correct + r0 : nullptr, z, labels + r0,
                                    static_cast<long>(rows), K, dloss_scale, inline_pool());
      if (d) narrow(dlogits + r0 * sz(K), d, n, s);
    }
  });
}

void bias_add16(uint16_t* out, const uint16_t* bias, long B, long OC, Storage16 s, ThreadPool& pool) {
  pool.parallel_for(static_cast<size_t>(B), std::max<size_t>(1, kChunk16 / std::max<size_t>(1, sz(OC))),
                    [&](size_t b0, size_t b1) {
                      float* bs = chunk_buffer(0, sz(OC));
                      float* row = chunk_buffer(1, sz(OC));
                      widen(bs, bias, sz(OC), s);
                      for (size_t b = b0; b < b1; ++b) {
                        uint16_t* o = out + b * sz(OC);
                        widen(row, o, sz(OC), s);
                        for (size_t c = 0; c < sz(OC); ++c) row[c] += bs[c];
                        narrow(o, row, sz(OC), s);
                      }
                    });
}

void act_forward16(uint16_t* preact, uint16_t* out, size_t N, core::Activation act, Storage16 s, ThreadPool& pool) {
  const size_t grain = act == core::Activation::ReLU ? 32 * kChunk16 : 4 * kChunk16;  // GELU: a tanh per element
  pool.parallel_for(N, grain, [&](size_t i0, size_t i1) {
    float* p = chunk_buffer(0, kChunk16);
    float* o = chunk_buffer(1, kChunk16);
    for (size_t c0 = i0; c0 < i1; c0 += kChunk16) {
      const size_t n = std::min(kChunk16, i1 - c0);
      std::copy(out + c0, out + c0 + n, preact + c0);  // the stored value is the pre-activation: copied as it is
      widen(p, out + c0, n, s);
      for (size_t i = 0; i < n; ++i) o[i] = activation(p[i], act);
      narrow(out + c0, o, n, s);
    }
  });
}

void act_backward16(uint16_t* dpreact, const uint16_t* dout, const uint16_t* preact, size_t N, core::Activation act,
                    Storage16 s, ThreadPool& pool) {
  const size_t grain = act == core::Activation::ReLU ? 32 * kChunk16 : 4 * kChunk16;  // GELU: a tanh per element
  pool.parallel_for(N, grain, [&](size_t i0, size_t i1) {
    float* g = chunk_buffer(0, kChunk16);
    float* p = chunk_buffer(1, kChunk16);
    float* d = chunk_buffer(2, kChunk16);
    for (size_t c0 = i0; c0 < i1; c0 += kChunk16) {
      const size_t n = std::min(kChunk16, i1 - c0);
      widen(g, dout + c0, n, s);
      widen(p, preact + c0, n, s);
      act_backward(d, g, p, n, act, inline_pool());
      narrow(dpreact + c0, d, n, s);
    }
  });
}

void matmul_backward_weight16(uint16_t* dweight, const uint16_t* dout, const uint16_t* inp, long B, long C, long OC,
                              Storage16 s, Workspace16& ws, ThreadPool& pool) {
  float* r[3];  // dout, inp, dweight
  const size_t sizes[3] = {sz(B * OC), sz(B * C), sz(OC * C)};
  ws.carve(r, sizes, 3);
  widen_all({{r[0], dout, sizes[0]}, {r[1], inp, sizes[1]}}, s, pool);
  matmul_backward_weight(r[2], r[0], r[1], B, C, OC, pool);
  narrow_all({{dweight, r[2], sizes[2]}}, s, pool);
}

void bias_backward16(uint16_t* dbias, const uint16_t* dout, long B, long OC, Storage16 s, Workspace16& ws,
                     ThreadPool& pool) {
  float* r[2];  // dout, dbias
  const size_t sizes[2] = {sz(B * OC), sz(OC)};
  ws.carve(r, sizes, 2);
  widen_all({{r[0], dout, sizes[0]}}, s, pool);
  bias_backward(r[1], r[0], B, OC, pool);
  narrow(dbias, r[1], sizes[1], s);  // OC elements: not worth a pool wake-up
}

void matmul_backward_data16(uint16_t* dinp, const uint16_t* dout, const uint16_t* weight, long B, long C, long OC,
                            Storage16 s, Workspace16& ws, ThreadPool& pool) {
  float* r[3];  // dout, weight, dinp
  const size_t sizes[3] = {sz(B * OC), sz(OC * C), sz(B * C)};
  ws.carve(r, sizes, 3);
  widen_all({{r[0], dout, sizes[0]}, {r[1], weight, sizes[1]}}, s, pool);
  matmul_backward_data(r[2], r[0], r[1], B, C, OC, pool);
  narrow_all({{dinp, r[2], sizes[2]}}, s, pool);
}

bool check_finite_grads16(const uint16_t* grads, size_t N, Storage16 s, ThreadPool& pool) {
  const uint16_t exp = s == Storage16::FP16 ? 0x7c00u : 0x7f80u;  // inf and NaN: every exponent bit set
  std::atomic<bool> found_inf{false};
  pool.parallel_for(N, 16 * kConvertGrain, [&](size_t i0, size_t i1) {
    uint32_t bad = 0;  // an OR-reduction without an early exit vectorizes
    for (size_t i = i0; i < i1; ++i) bad |= (grads[i] & exp) == exp ? 1u : 0u;
    if (bad) found_inf.store(true, std::memory_order_relaxed);
  });
  return found_inf.load(std::memory_order_relaxed);
}

void adamw_update16(float* params, float* m, float* v, uint16_t* params16, const uint16_t* grads, size_t N, float lr,
                    float beta1, float beta2, float eps, float weight_decay, long t, Storage16 s, ThreadPool& pool,
                    float grad_scale) {
  // One pass: per chunk, widen the grads, update the chunk with the fp32 kernel while params/m/v are in L1, round.
  pool.parallel_for(N, 8 * kChunk16, [&](size_t i0, size_t i1) {
    float* g = chunk_buffer(0, kChunk16);
    for (size_t c0 = i0; c0 < i1; c0 += kChunk16) {
      const size_t n = std::min(kChunk16, i1 - c0);
      widen(g, grads + c0, n, s);
      scale_grads(g, n, grad_scale);
      adamw_update(params + c0, m + c0, v + c0, g, n, lr, beta1, beta2, eps, weight_decay, t, inline_pool());
      narrow(params16 + c0, params + c0, n, s);
    }
  });
}

void sgd_update16(float* params, float* momentum_buf, uint16_t* params16, const uint16_t* grads, size_t N, float lr,
                  float momentum, float weight_decay, long t, Storage16 s, ThreadPool& pool, float grad_scale) {
  pool.parallel_for(N, 16 * kChunk16, [&](size_t i0, size_t i1) {
    float* g = chunk_buffer(0, kChunk16);
    for (size_t c0 = i0; c0 < i1; c0 += kChunk16) {
      const size_t n = std::min(kChunk16, i1 - c0);
      widen(g, grads + c0, n, s);
      scale_grads(g, n, grad_scale);
      sgd_update(params + c0, momentum_buf + c0, g, n, lr, momentum, weight_decay, t, inline_pool());
      narrow(params16 + c0, params + c0, n, s);
    }
  });
}

}  // namespace cpu
