// Dynamic loss scaling (torch.cuda.amp.GradScaler semantics) and the gradient overflow check.
#include "core/loss_scaler.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <string>

#include "core/error.hpp"

namespace core {

namespace {

bool valid_scale(float s) { return std::isfinite(s) && s > 0.0f; }

}  // namespace

LossScaler::LossScaler(const LossScalerOptions& options) : options_(options) {
  auto bad = [](const std::string& what) {
    throw Error(ErrorKind::InvalidArgument, "loss scaler: " + what);
  };
  if (!valid_scale(options.init_scale))
    bad(fmt::format("init_scale must be finite and > 0 (got {})", options.init_scale));
  if (!(options.growth_factor > 1.0f) || !std::isfinite(options.growth_factor))
    bad(fmt::format("growth_factor must be > 1 (got {})", options.growth_factor));
  if (!(options.backoff_factor > 0.0f && options.backoff_factor < 1.0f))
    bad(fmt::format("backoff_factor must be in (0, 1) (got {})", options.backoff_factor));
  if (options.growth_interval == 0) bad("growth_interval must be at least 1");
  state_.scale = options.init_scale;
}

bool LossScaler::update(bool found_inf) {
  state_.found_inf = found_inf ? 1u : 0u;
  if (found_inf) {
    state_.scale *= options_.backoff_factor;
    state_.growth_tracker = 0;
    ++state_.skipped;
    return false;
  }
  if (++state_.growth_tracker >= options_.growth_interval) {
    const float grown = state_.scale * options_.growth_factor;
    if (std::isfinite(grown)) state_.scale = grown;
    state_.growth_tracker = 0;
  }
  return true;
}

void LossScaler::import_state(const LossScalerState& state) {
  if (!valid_scale(state.scale))
    throw Error(ErrorKind::InvalidArgument,
                fmt::format("loss scaler state: scale must be finite and > 0 (got {})", state.scale));
  if (state.growth_tracker >= options_.growth_interval)
    throw Error(ErrorKind::InvalidArgument,
                fmt::format("loss scaler state: growth_tracker {} is not below growth_interval {}",
                            state.growth_tracker, options_.growth_interval));
  if (state.found_inf > 1)
    throw Error(ErrorKind::InvalidArgument,
                fmt::format("loss scaler state: found_inf must be 0 or 1 (got {})", state.found_inf));
  state_ = state;
}

bool all_finite(const float* grads, size_t n) {
  constexpr size_t block = 4096;
  for (size_t start = 0; start < n; start += block) {
    const size_t end = std::min(n, start + block);
    // inf and NaN are exactly the values with all exponent bits set; an OR-reduction over a block vectorizes.
    uint32_t bad = 0;
    for (size_t i = start; i < end; ++i)
      bad |= ((std::bit_cast<uint32_t>(grads[i]) & 0x7f800000u) == 0x7f800000u) ? 1u : 0u;
    if (bad) return false;
  }
  return true;
}

LossScalerState scaler_state(const LossScalerBuffer& b) { return {b.scale, b.growth_tracker, b.skipped, b.found_inf}; }

void set_scaler_state(LossScalerBuffer& b, const LossScalerState& s) {
  b.scale = s.scale;
  b.growth_tracker = s.growth_tracker;
  b.skipped = s.skipped;
  b.found_inf = s.found_inf;
}

}  // namespace core
