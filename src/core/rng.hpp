// core::Pcg32: the one seeded random generator behind weight initialisation, batch order and the spiral dataset,
// so that both backends start from bit-identical weights and see the same batches.
// PCG-XSH-RR 64/32 (M. E. O'Neill, "PCG: A Family of Simple Fast Space-Efficient Statistically Good Algorithms
// for Random Number Generation", 2014): the constants below are the paper's.
#pragma once
#include <cstdint>

namespace core {

class Pcg32 {
 public:
  explicit Pcg32(uint64_t seed, uint64_t stream = 54) {
    inc_ = (stream << 1u) | 1u;
    next_u32();
    state_ += seed;
    next_u32();
  }

  uint32_t next_u32() {
    uint64_t old = state_;
    state_ = old * 6364136223846793005ULL + inc_;
    uint32_t xorshifted = static_cast<uint32_t>(((old >> 18u) ^ old) >> 27u);
    uint32_t rot = static_cast<uint32_t>(old >> 59u);
    return (xorshifted >> rot) | (xorshifted << ((32u - rot) & 31u));
  }

  // Uniform in [0, 1) with 24 random bits: exactly representable as float on every platform.
  float uniform() { return static_cast<float>(next_u32() >> 8) * (1.0f / 16777216.0f); }

  // Uniform in [lo, hi).
  float uniform(float lo, float hi) { return lo + (hi - lo) * uniform(); }

  // Uniform integer in [0, bound), unbiased (rejection of the short last range).
  uint32_t below(uint32_t bound) {
    uint32_t threshold = (0u - bound) % bound;
    for (;;) {
      uint32_t r = next_u32();
      if (r >= threshold) return r % bound;
    }
  }

 private:
  uint64_t state_ = 0;
  uint64_t inc_ = 0;
};

}  // namespace core
