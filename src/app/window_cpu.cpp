// The dashboard's own CPU use from its threads' CPU times (window_cpu.hpp).
#include "app/window_cpu.hpp"

#include "platform/system.hpp"

namespace app {

double WindowCpu::sample(double now_s, double interval_s) {
  if (last_s_ >= 0 && now_s - last_s_ < interval_s) return figure_;
  if (!platform::normal_priority_thread_cpu_seconds(seconds_)) return figure_;  // cannot be told here: no figure
  double total = 0;
  for (const auto& [tid, seconds] : seconds_) total += seconds;
  if (last_s_ >= 0 && now_s > last_s_) figure_ = (total - last_total_) / (now_s - last_s_);
  last_s_ = now_s;
  last_total_ = total;
  return figure_;
}

}  // namespace app
