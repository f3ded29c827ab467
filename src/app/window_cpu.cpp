// Reading the process's threads' CPU times from /proc (window_cpu.hpp).
#include "app/window_cpu.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace app {

double WindowCpu::sample(double now_s, double interval_s) {
  if (last_s_ >= 0 && now_s - last_s_ < interval_s) return figure_;
  // /proc/self/task/TID/stat (proc(5)): "TID (comm) state ..." with utime (field 14), stime (15), nice (19) in clock
  // ticks; comm may hold spaces and parentheses, so the fields are counted from its last ')'.
  std::error_code ec;
  double total = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    std::ifstream in(entry.path() / "stat");
    std::string line;
    if (!std::getline(in, line)) continue;
    const size_t close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream fields(line.substr(close + 2));
    std::string f[17];  // fields 3..19
    for (auto& x : f) fields >> x;
    if (!fields || f[16] != "0") continue;  // nice: training threads run at +10
    const int tid = std::atoi(entry.path().filename().c_str());
    const double ticks = std::atof(f[11].c_str()) + std::atof(f[12].c_str());
    ticks_[tid] = ticks;
  }
  for (const auto& [tid, ticks] : ticks_) total += ticks;
  const double hz = static_cast<double>(sysconf(_SC_CLK_TCK));
  if (last_s_ >= 0 && now_s > last_s_ && hz > 0) figure_ = (total - last_ticks_) / hz / (now_s - last_s_);
  last_s_ = now_s;
  last_ticks_ = total;
  return figure_;
}

}  // namespace app
