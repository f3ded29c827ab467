// Frame-time statistics (mean, 95th percentile, max) for the dashboard's frame loop.
#include "ui/frame.hpp"

#include <algorithm>
#include <cmath>

namespace ui {

FrameTimer::FrameTimer() : bins_(10001, 0) {}

void FrameTimer::add(double ms) {
  if (!(ms >= 0)) return;  // NaN or a clock going backwards
  const auto bin = std::min(bins_.size() - 1, static_cast<size_t>(ms / kBinMs));
  bins_[bin]++;
  stats_.frames++;
  stats_.last_ms = ms;
  stats_.max_ms = std::max(stats_.max_ms, ms);
  sum_ms_ += ms;
}

FrameStats FrameTimer::stats() const {
  FrameStats s = stats_;
  if (s.frames == 0) return s;
  s.mean_ms = sum_ms_ / static_cast<double>(s.frames);
  // Nearest-rank percentile: the smallest bin holding at least 95% of the frames; reported at the bin's upper edge.
  const auto rank = static_cast<int64_t>(std::ceil(0.95 * static_cast<double>(s.frames)));
  int64_t seen = 0;
  for (size_t i = 0; i < bins_.size(); ++i) {
    seen += bins_[i];
    if (seen >= rank) {
      s.p95_ms = std::min(s.max_ms, static_cast<double>(i + 1) * kBinMs);
      break;
    }
  }
  return s;
}

}  // namespace ui
