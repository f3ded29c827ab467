// The thread budget: how many threads a training run will start (the CPU trainer's pool, the input loaders, one
// worker per backend, a software GPU's own) against how many more this process may start (the pids cgroups above it,
// RLIMIT_NPROC for the user's threads), checked before anything is built, so that `--threads 64` under a pids limit
// is refused in one line with the figures and the setting to change (before: std::terminate, or a hang). A thread
// that still cannot start is an error too (cpu::start_thread).
#pragma once
#include <string>
#include <vector>

#include "core/config.hpp"
#include "core/memory_budget.hpp"

namespace core {

// How many more threads (and processes) this process may start, and what sets that figure.
struct ThreadRoom {
  long room = -1;      // -1: no limit known
  std::string source;  // "the pids cgroup /a (pids.max 64, 60 in use)", "ulimit -u 100 (RLIMIT_NPROC; 95 threads of
                       // this user running)"
};

// The smallest of: each pids cgroup's pids.max minus pids.current, from this process's cgroup up to the root (v2
// "0::/a/b": /sys/fs/cgroup/a/b/pids.max; v1 "N:pids:/a/b": /sys/fs/cgroup/pids/a/b/pids.max; "max": none), and
// RLIMIT_NPROC (`user_limit`, -1: none) minus the threads of processes of real user `uid` (/proc/PID/status "Uid:"
// and "Threads:"). `root` prefixes /proc and /sys/fs/cgroup (tests point it at a folder of the same layout); for the
// real root "" the limit and the uid are the process's own (platform::user_thread_limit, platform::real_user_id).
ThreadRoom thread_room(const std::string& root, long user_limit, long uid);
ThreadRoom thread_room();

// What a training run starts, part by part, in threads.
struct ThreadNeed {
  long cpu_pool = 0;     // the CPU trainer's pool (--threads less the calling worker thread)
  long loaders = 0;      // --loader-threads per trainer, with --input host
  long others = 0;       // one worker per backend; the software GPU driver's threads
  long total() const { return cpu_pool + loaders + others; }
};

// The threads of `trainers` for `c` (all of them new; a live change counts the new trainer while the old one's
// threads are still running, which thread_room sees). A software GPU (lavapipe) starts about one thread per CPU and
// a few of its own: counted as hardware threads + 4.
ThreadNeed training_thread_need(const TrainConfig& c, const std::vector<NewTrainer>& trainers);

// Refuses a run whose threads do not fit in `room`. Throws core::Error(InvalidArgument), one line:
// "--threads/--loader-threads: this run starts 70 threads (CPU trainer's pool: 63, ...), but this process may start
// 40 more (the pids cgroup ...); use --threads 33 or fewer, or raise the limit" — exit code 2.
void check_training_threads(const TrainConfig& c, const std::vector<NewTrainer>& trainers, const ThreadRoom& room);
void check_training_threads(const TrainConfig& c, const std::vector<NewTrainer>& trainers);  // thread_room()

}  // namespace core
