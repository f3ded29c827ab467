// The thread budget (thread_budget.hpp): how many more threads the pids cgroups and RLIMIT_NPROC let this process
// start, what a training run starts, and the one-line refusal.
#include "core/thread_budget.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <thread>

#include "core/cgroups.hpp"
#include "core/error.hpp"
#include "platform/system.hpp"

namespace core {
namespace {

// The whole number at the start of `text` ("64\n"), or -1 ("max", absent).
long number_in(std::string_view text) {
  long v = -1;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  return ec == std::errc() && ptr != text.data() ? v : -1;
}

// The number after "key:" in a /proc/PID/status text, or -1.
long status_value(const std::string& status, std::string_view key) {
  const size_t at = status.find(key);
  if (at == std::string::npos) return -1;
  const size_t begin = status.find_first_not_of(" \t", at + key.size());
  return begin == std::string::npos ? -1 : number_in(std::string_view(status).substr(begin));
}

void take(ThreadRoom& r, long room, std::string source) {
  room = std::max(0L, room);
  if (r.room < 0 || room < r.room) r.room = room, r.source = std::move(source);
}

// Every pids cgroup level from this process's up to the root, v2 ("0::/a/b") and v1 ("3:pids:/a/b").
void from_cgroups(ThreadRoom& r, const std::string& root) {
  for_each_cgroup_level(root, "pids", [&](const std::string& dir, const std::string& path, bool) {
    const long most = number_in(read_text(dir + "/pids.max"));
    if (most < 0) return;
    const long current = std::max(0L, number_in(read_text(dir + "/pids.current")));
    take(r, most - current, fmt::format("the pids cgroup {} (pids.max {}, {} in use)", path, most, current));
  });
}

// The threads of all processes whose real user is `uid` (what RLIMIT_NPROC counts).
long user_threads(const std::string& root, long uid) {
  long threads = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(root + "/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string status = read_text(entry.path().string() + "/status");
    if (status_value(status, "Uid:") == uid) threads += std::max(0L, status_value(status, "Threads:"));
  }
  return threads;
}

unsigned hardware_threads() { return std::max(1u, std::thread::hardware_concurrency()); }

}  // namespace

ThreadRoom thread_room(const std::string& root, long user_limit, long uid) {
  ThreadRoom r;
  from_cgroups(r, root);
  if (user_limit >= 0 && uid >= 0) {
    const long running = user_threads(root, uid);
    take(r, user_limit - running,
         fmt::format("ulimit -u {} (RLIMIT_NPROC, the user's processes and threads: {} running)", user_limit, running));
  }
  return r;
}

ThreadRoom thread_room() { return thread_room("", platform::user_thread_limit(), platform::real_user_id()); }

ThreadNeed training_thread_need(const TrainConfig& c, const std::vector<NewTrainer>& trainers) {
  ThreadNeed need;
  for (const NewTrainer& t : trainers) {
    need.others += 1;  // the backend's worker
    if (t.backend == "cpu")
      need.cpu_pool += (c.threads > 0 ? c.threads : static_cast<long>(hardware_threads())) - 1;
    else if (t.on_host)
      need.others += static_cast<long>(hardware_threads()) + 4;  // lavapipe: measured 7 on 2 CPUs
    if (c.input.host()) need.loaders += c.input.loader_threads;
  }
  return need;
}

void check_training_threads(const TrainConfig& c, const std::vector<NewTrainer>& trainers, const ThreadRoom& room) {
  const ThreadNeed need = training_thread_need(c, trainers);
  if (room.room < 0 || need.total() <= room.room) return;
  const long excess = need.total() - room.room;
  std::string parts;
  const auto part = [&](std::string_view what, long n) {
    if (n > 0) parts += fmt::format("{}{}: {}", parts.empty() ? "" : ", ", what, n);
  };
  part("the CPU trainer's pool", need.cpu_pool);
  part("input loaders", need.loaders);
  part("workers and the GPU driver's", need.others);
  // The setting that fixes it: fewer CPU threads if that is enough, else fewer loader threads, else nothing does.
  const long cpu_threads = need.cpu_pool + 1;
  const long loader_trainers = c.input.host() ? static_cast<long>(trainers.size()) : 0;
  std::string todo;
  if (need.cpu_pool >= excess) {
    todo = fmt::format("use --threads {} or fewer, or raise the limit", cpu_threads - excess);
  } else if (loader_trainers > 0 && need.cpu_pool + need.loaders - loader_trainers >= excess) {
    // At least one loader thread each; the CPU pool's threads first.
    const long fewer = (excess - need.cpu_pool + loader_trainers - 1) / loader_trainers;
    todo = fmt::format("use {}--loader-threads {} or fewer, or raise the limit",
                       need.cpu_pool > 0 ? "--threads 1 and " : "", c.input.loader_threads - fewer);
  } else {
    todo = "no thread setting makes it fit: raise the limit";
  }
  throw Error(ErrorKind::InvalidArgument,
              fmt::format("--threads/--loader-threads: this run starts {} threads ({}), but this process may start "
                          "{} more ({}); {} (ulimit -u, or the cgroup's pids.max)",
                          need.total(), parts, room.room, room.source, todo));
}

void check_training_threads(const TrainConfig& c, const std::vector<NewTrainer>& trainers) {
  check_training_threads(c, trainers, thread_room());
}

}  // namespace core
