// Epoch sample order: a seeded Fisher-Yates shuffle.
#include "core/batches.hpp"

#include <cstddef>
#include <numeric>
#include <utility>

#include "core/rng.hpp"

namespace core {

std::vector<uint32_t> epoch_order(int count, uint64_t seed, int epoch) {
  std::vector<uint32_t> order(static_cast<size_t>(count));
  std::iota(order.begin(), order.end(), 0u);
  Pcg32 rng(seed, static_cast<uint64_t>(epoch) + 1);
  for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(static_cast<uint32_t>(i))]);
  return order;
}

}  // namespace core
