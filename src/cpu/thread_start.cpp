// cpu::start_thread's refusal and its test-only injection (thread_start.hpp).
#include "cpu/thread_start.hpp"

#include <fmt/format.h>

#include <atomic>

#include "core/error.hpp"

namespace cpu {
namespace {
std::atomic<long> g_refuse_after{-1};
}  // namespace

void fail_thread_start_after(long k) { g_refuse_after.store(k); }

bool injected_thread_refusal() {
  long k = g_refuse_after.load();
  while (k >= 0) {
    if (g_refuse_after.compare_exchange_weak(k, k - 1)) return k == 0;
  }
  return false;
}

void throw_thread_refused(const std::string& what, const std::string& reason, const std::string& advice) {
  throw core::Error(core::ErrorKind::InvalidArgument,
                    fmt::format("cannot start {}: the system refused another thread ({}); a limit on processes and "
                                "threads is reached (a container's pids limit, `ulimit -u`): {}",
                                what, reason, advice));
}

}  // namespace cpu
