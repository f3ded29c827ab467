// app::WindowCpu: the dashboard's own CPU use, for the quick bar's "window 6%". The training threads (the workers,
// the CPU backend's thread pool, the software GPU's threads that train) run at nice +10 (run::SessionOptions::
// lower_priority) and the threads they start inherit it; everything else of the process (the window's thread, its own
// Vulkan device's threads, which rasterize the frames on a software GPU, data loading) runs at nice 0. So the
// window's share is the CPU time of the process's nice-0 threads (platform::normal_priority_thread_cpu_seconds: Linux's
// /proc/self/task/*/stat; no figure where the system cannot tell), over wall time.
#pragma once
#include <map>

namespace app {

class WindowCpu {
 public:
  // The cores the process's nice-0 threads used since the previous call that returned a figure (1.0: one core busy
  // the whole time), at most every `interval_s` seconds; < 0 until there is a figure (the first call, or too soon).
  double sample(double now_s, double interval_s = 2.0);

 private:
  double last_s_ = -1;
  double last_total_ = 0;           // summed CPU seconds of the normal-priority threads seen then
  std::map<long, double> seconds_;  // per thread id: its CPU seconds at the last look (an ended thread keeps its share)
  double figure_ = -1;
};

}  // namespace app
