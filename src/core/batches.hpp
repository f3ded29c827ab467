// The shuffled sample order of each epoch, from core::Pcg32 so that both backends see the same batches.
#pragma once
#include <cstdint>
#include <vector>

namespace core {

// A permutation of [0, count) by Fisher-Yates with Pcg32(seed, stream = epoch + 1): epoch e's order depends only on
// (seed, e). Steps use order[s*B, (s+1)*B); the last partial batch of an epoch is dropped (torch drop_last=True).
std::vector<uint32_t> epoch_order(int count, uint64_t seed, int epoch);

inline int steps_per_epoch(int count, int batch) { return count / batch; }

}  // namespace core
