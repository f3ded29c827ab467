// platform/system on POSIX systems (system.hpp): Linux's /proc and sysconf, with getloadavg/sysctl elsewhere.
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/syscall.h>
#endif
#ifdef __APPLE__
#include <sys/sysctl.h>
#endif

#include <climits>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "platform/system.hpp"

namespace platform {

double load_average() {
#ifdef __linux__
  std::ifstream in("/proc/loadavg");
  double load = -1;
  in >> load;
  return in ? load : -1;
#else
  double load[1] = {-1};
  return ::getloadavg(load, 1) == 1 ? load[0] : -1;
#endif
}

std::tm local_time(std::time_t t) {
  std::tm tm{};
  ::localtime_r(&t, &tm);
  return tm;
}

double available_memory_bytes() {
#ifdef __APPLE__
  return -1;  // macOS: host_statistics64 would tell; not yet wired (docs/macos.md)
#else
  const long pages = ::sysconf(_SC_AVPHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : -1;
#endif
}

uint64_t physical_memory_bytes() {
#ifdef __APPLE__
  uint64_t bytes = 0;
  size_t size = sizeof bytes;
  return ::sysctlbyname("hw.memsize", &bytes, &size, nullptr, 0) == 0 ? bytes : 0;
#else
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
#endif
}

double address_space_limit_bytes() {
  rlimit l{};
  if (::getrlimit(RLIMIT_AS, &l) != 0 || l.rlim_cur == RLIM_INFINITY) return -1;
  return static_cast<double>(l.rlim_cur);
}

long user_thread_limit() {
#ifdef RLIMIT_NPROC
  rlimit l{};
  // fork(2): the limit does not apply to root (nor to CAP_SYS_ADMIN/CAP_SYS_RESOURCE; root is the common case).
  if (::getuid() == 0 || ::getrlimit(RLIMIT_NPROC, &l) != 0 || l.rlim_cur == RLIM_INFINITY) return -1;
  return l.rlim_cur > static_cast<rlim_t>(LONG_MAX) ? -1 : static_cast<long>(l.rlim_cur);
#else
  return -1;
#endif
}

long real_user_id() { return static_cast<long>(::getuid()); }

uint64_t last_level_cache_bytes() {
#if defined(__APPLE__)
  for (const char* name : {"hw.l3cachesize", "hw.l2cachesize"}) {
    uint64_t bytes = 0;
    size_t size = sizeof bytes;
    if (::sysctlbyname(name, &bytes, &size, nullptr, 0) == 0 && bytes > 0) return bytes;
  }
  return 0;
#elif defined(_SC_LEVEL3_CACHE_SIZE)  // glibc
  long llc = ::sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (llc <= 0) llc = ::sysconf(_SC_LEVEL2_CACHE_SIZE);
  return llc > 0 ? static_cast<uint64_t>(llc) : 0;
#else
  return 0;
#endif
}

std::string cpu_model_name() {
#ifdef __APPLE__
  char name[256] = {};
  size_t size = sizeof name - 1;
  return ::sysctlbyname("machdep.cpu.brand_string", name, &size, nullptr, 0) == 0 ? name : "";
#else
  // /proc/cpuinfo: "model name : AMD EPYC 9B14" (x86); on ARM often no model name, but "Model : Raspberry Pi 4
  // Model B Rev 1.4" (the board), or the device tree's model.
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string board;
  for (std::string line; std::getline(cpuinfo, line);) {
    const bool model_name = line.rfind("model name", 0) == 0, model = line.rfind("Model", 0) == 0;
    if (!model_name && !model) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const auto begin = line.find_first_not_of(" \t", colon + 1);
    if (begin == std::string::npos) continue;
    if (model_name) return line.substr(begin);
    board = line.substr(begin);
  }
  if (board.empty()) {
    std::ifstream tree("/proc/device-tree/model");
    std::getline(tree, board, '\0');
  }
  return board;
#endif
}

double thread_cpu_seconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

void lower_this_thread_priority() {
#ifdef __linux__
  // Linux's nice value is per thread (setpriority on the thread id); threads started afterwards inherit it.
  ::setpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)), 10);
#else
  // Elsewhere setpriority(PRIO_PROCESS, 0) would lower the whole process, window included: leave it.
#endif
}

bool normal_priority_thread_cpu_seconds(std::map<long, double>& seconds_by_thread) {
#ifdef __linux__
  // /proc/self/task/TID/stat (proc(5)): "TID (comm) state ..." with utime (field 14), stime (15), nice (19) in clock
  // ticks; comm may hold spaces and parentheses, so the fields are counted from its last ')'.
  const double hz = static_cast<double>(::sysconf(_SC_CLK_TCK));
  if (hz <= 0) return false;
  std::error_code ec;
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
    const long tid = std::atol(entry.path().filename().c_str());
    seconds_by_thread[tid] = (std::atof(f[11].c_str()) + std::atof(f[12].c_str())) / hz;
  }
  return !ec;
#else
  (void)seconds_by_thread;
  return false;
#endif
}

bool stderr_is_terminal() { return ::isatty(STDERR_FILENO) != 0; }

int stderr_terminal_columns() {
  winsize w{};
  if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col > 0) return w.ws_col;
  return 0;
}

StdoutToStderr::StdoutToStderr() {
  saved_ = ::dup(STDOUT_FILENO);
  if (saved_ >= 0) ::dup2(STDERR_FILENO, STDOUT_FILENO);
}

StdoutToStderr::~StdoutToStderr() {
  if (saved_ >= 0) ::dup2(saved_, STDOUT_FILENO), ::close(saved_);
}

}  // namespace platform
