// platform/system: what trainscope asks of the machine and the process: load, memory, caches, the CPU's name, time
// and threads, the terminal. POSIX (system_posix.cpp: Linux's /proc, with other Unix where it can) and Win32
// (system_win32.cpp) implementations. Where a system cannot tell, the function says "unknown" in its own way
// (a negative number, 0 bytes, an empty string), never a made-up figure.
#pragma once
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <map>
#include <string>

namespace platform {

// The 1-minute load average (/proc/loadavg, getloadavg), or -1 where the system has none (Windows).
double load_average();

// The local time of `t` (localtime_r / localtime_s).
std::tm local_time(std::time_t t);

// The bytes of physical memory available to new allocations, as the system counts them, or -1 when unknown. (On Linux
// core::host_memory reads /proc/meminfo and the cgroups itself, so that tests can point it at a fake /proc; this is
// for systems without /proc: Windows' GlobalMemoryStatusEx, macOS' vm statistics.)
double available_memory_bytes();
// The machine's physical memory in bytes, or 0 when unknown.
uint64_t physical_memory_bytes();
// This process's soft limits (getrlimit), or -1 where there is none (unlimited; Windows has neither):
// the address space in bytes (RLIMIT_AS: `ulimit -v`, `prlimit --as`): every mapping counts, reserved or not;
double address_space_limit_bytes();
// the processes and threads of this process's real user, all processes together (RLIMIT_NPROC: `ulimit -u`,
// `prlimit --nproc`); also -1 for root, whom the kernel does not hold to it.
long user_thread_limit();
// This process's real user id (the owner that RLIMIT_NPROC counts threads of), or -1 where there is none (Windows).
long real_user_id();
// The size of the last-level cache (L3, else L2) in bytes, or 0 when unknown.
uint64_t last_level_cache_bytes();
// The CPU's model name ("AMD EPYC 9B14"), or "" when the system does not say.
std::string cpu_model_name();

// The CPU time the calling thread has used, in seconds (CLOCK_THREAD_CPUTIME_ID / GetThreadTimes).
double thread_cpu_seconds();
// Lowers the calling thread's scheduling priority (nice +10 on Linux, below normal on Windows), so that the window
// stays responsive while it trains (the trainers' threads and the sweep's). Linux's nice value is per thread and
// inherited by the threads this one creates (thread pool, driver workers), so call it first on the thread that will
// create them.
void lower_this_thread_priority();
// The CPU seconds used so far by each of this process's threads that run at normal priority (nice 0), by thread id;
// false where the system cannot tell them apart (then the map is left as it was).
bool normal_priority_thread_cpu_seconds(std::map<long, double>& seconds_by_thread);

// Whether standard error is a terminal, and its width in columns (0 when it is not one or cannot be told).
bool stderr_is_terminal();
int stderr_terminal_columns();

// Standard output sent to standard error for the lifetime of the object, then restored (train --report -, where
// stdout carries the report and progress text must not mix into it).
class StdoutToStderr {
 public:
  StdoutToStderr();
  ~StdoutToStderr();
  StdoutToStderr(const StdoutToStderr&) = delete;
  StdoutToStderr& operator=(const StdoutToStderr&) = delete;

 private:
  int saved_ = -1;
};

}  // namespace platform
