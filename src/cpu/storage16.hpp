// 16-bit storage on the CPU: tensors kept as fp16 or bf16 bits in uint16_t (core/half.hpp), arithmetic in fp32. The
// CPU twin of a kernel is written once, in fp32; its 16-bit variant widens the kernel's 16-bit operands to fp32
// (exactly), runs the fp32 twin and rounds its 16-bit outputs back (round to nearest even), so a 16-bit result is bit
// for bit round(fp32 twin(widened inputs)): the same arithmetic as fp32 with half the bytes in the tensors
// (cpu/kernel_calls.cpp does it for every kernel from the table's element types). This file holds the conversions
// and the fp32 scratch they widen into.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/model.hpp"

namespace cpu {

class ThreadPool;

// Grow-only fp32 scratch for the widened operands. One arena, carved per call into one region per operand (each
// rounded up to 16 floats = 64 bytes). Memory held: bytes() = 4 bytes x the largest call's total (for a training step,
// the largest kernel's 16-bit operands; cpu::workspace_floats). It grows only on the first call with a larger shape,
// so a steady state of training allocates nothing. Not thread-safe: one Workspace16 per training thread (the
// conversions split their work over the pool themselves).
class Workspace16 {
 public:
  // Returns `count` disjoint regions of sizes[i] floats each (contents unspecified), valid until the next call.
  void carve(float** regions, const size_t* sizes, int count);
  // The arena floats one carve(regions, sizes, count) needs (each size rounded up to 16), so that an owner can size
  // the arena up front for its largest call.
  static size_t floats_for(const size_t* sizes, int count);
  // Grows the arena to at least `floats` (never shrinks): afterwards no call needing at most that many allocates.
  void reserve(size_t floats);
  size_t bytes() const { return arena_.capacity() * sizeof(float); }  // memory held, in bytes
  void release() { arena_ = std::vector<float>(); }

 private:
  std::vector<float> arena_;
};

// One conversion of n elements between a 16-bit tensor and its fp32 copy.
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

// Several conversions in one parallel_for (one wake-up of the pool instead of one per operand), in chunks of at least
// 16k elements. precision: FP16 or BF16 (the format of the 16-bit side). dst and src must not overlap.
void widen_all(std::span<const Widen> ops, core::Precision precision, ThreadPool& pool);
void narrow_all(std::span<const Narrow> ops, core::Precision precision, ThreadPool& pool);

// Elements per chunk of 16-bit code that converts chunk by chunk (the optimizers' own 16-bit variants): the fp32
// copies of a chunk, per-thread buffers of 4 KiB each, stay in L1.
constexpr size_t kChunk16 = 1024;
// Grow-only per-thread fp32 buffer i (0..3) of at least n floats (at least kChunk16).
float* chunk_buffer(int i, size_t n);

// One conversion each, on the calling thread (no pool).
void widen(float* dst, const uint16_t* src, size_t n, core::Precision precision);
void narrow(uint16_t* dst, const float* src, size_t n, core::Precision precision);

}  // namespace cpu
