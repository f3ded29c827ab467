// 16-bit conversions over the thread pool and the fp32 scratch they widen into (see storage16.hpp).
#include "cpu/storage16.hpp"

#include <algorithm>

#include "core/half.hpp"
#include "cpu/per_thread.hpp"
#include "cpu/thread_pool.hpp"

namespace cpu {
namespace {

// Elements per parallel_for chunk of a plain conversion (about 10 us of F16C work: waking a worker costs more below).
constexpr size_t kConvertGrain = 16384;
constexpr size_t kAlign = 16;  // Workspace16: floats; each region starts 64 bytes after a multiple of the arena's start

// Calls fn(op, offset, count) for the parts of ops that fall into [g0, g1) of their concatenation.
template <typename Op, typename Fn>
void for_each_part(std::span<const Op> ops, size_t g0, size_t g1, Fn fn) {
  size_t base = 0;
  for (const Op& op : ops) {
    const size_t b = std::max(g0, base), e = std::min(g1, base + op.n);
    if (b < e) fn(op, b - base, e - b);
    base += op.n;
  }
}

template <typename Op, typename Fn>
void convert_all(std::span<const Op> ops, ThreadPool& pool, Fn convert) {
  size_t total = 0;
  for (const Op& op : ops) total += op.n;
  if (total == 0) return;
  pool.parallel_for(total, kConvertGrain, [&](size_t g0, size_t g1) { for_each_part(ops, g0, g1, convert); });
}

}  // namespace

float* chunk_buffer(int i, size_t n) {
  thread_local std::vector<float>* buffer_slots[4] = {};
  auto& b = per_thread(buffer_slots[i]);
  if (b.size() < n) b.resize(std::max(n, kChunk16));
  return b.data();
}

void widen(float* dst, const uint16_t* src, size_t n, core::Precision p) {
  if (p == core::Precision::FP16) core::from_fp16(dst, src, n);
  else core::from_bf16(dst, src, n);
}

void narrow(uint16_t* dst, const float* src, size_t n, core::Precision p) {
  if (p == core::Precision::FP16) core::to_fp16(dst, src, n);
  else core::to_bf16(dst, src, n);
}

void widen_all(std::span<const Widen> ops, core::Precision p, ThreadPool& pool) {
  convert_all(ops, pool, [p](const Widen& op, size_t off, size_t n) { widen(op.dst + off, op.src + off, n, p); });
}

void narrow_all(std::span<const Narrow> ops, core::Precision p, ThreadPool& pool) {
  convert_all(ops, pool, [p](const Narrow& op, size_t off, size_t n) { narrow(op.dst + off, op.src + off, n, p); });
}

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

}  // namespace cpu
