// Measuring a running session's device peaks while its training is paused (session_peaks.hpp).
#include "run/session_peaks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "core/error.hpp"
#include "run/peaks.hpp"

namespace run {
namespace {

// Thrown from the progress callback to abandon a measurement when the dashboard closes.
struct Abandoned {};

}  // namespace

SessionPeaks::SessionPeaks(Session& session, std::vector<std::string> backends, int device,
                           std::filesystem::path cache, Measure measure, double load_now)
    : session_(session), device_(device), cache_(std::move(cache)), measure_(std::move(measure)),
      load_now_(load_now) {
  state_.backends = cached_peaks(backends, device_, cache_);
  const int threads = static_cast<int>(std::thread::hardware_concurrency());
  for (auto& b : state_.backends)
    if (b.peaks && core::measured_under_load(*b.peaks, load_now_, threads)) {
      stale_.push_back(b.backend);
      b.note = fmt::format("measured at load {:.1f} on {} hardware threads; measured again now that the machine is "
                           "quiet (load {:.1f})",
                           b.peaks->load_average, threads, load_now_);
    }
}

SessionPeaks::~SessionPeaks() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  stop_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool SessionPeaks::missing() const {
  std::lock_guard lock(mutex_);
  for (const auto& b : state_.backends)
    if (!b.peaks) return true;
  return !stale_.empty();
}

SessionPeaks::State SessionPeaks::state() const {
  std::lock_guard lock(mutex_);
  return state_;
}

void SessionPeaks::set_stage(const std::string& stage) {
  std::lock_guard lock(mutex_);
  state_.stage = stage;
}

void SessionPeaks::measure(bool only_missing, std::optional<BetweenTurns> between_turns) {
  {
    std::lock_guard lock(mutex_);
    if (state_.measuring || stop_) return;
    state_.measuring = true;
    state_.training_between = between_turns.has_value();
    state_.stage = between_turns ? "training first" : "pausing training";
  }
  if (thread_.joinable()) thread_.join();  // the previous measurement's thread, finished
  thread_ = std::thread([this, only_missing, between_turns] { run(only_missing, between_turns); });
}

bool SessionPeaks::sleep_for(double seconds) {
  using namespace std::chrono;
  std::unique_lock lock(mutex_);
  return !stop_cv_.wait_for(lock, duration_cast<steady_clock::duration>(duration<double>(seconds)),
                            [&] { return stop_.load(); });
}

bool SessionPeaks::wait_until_paused() { return wait_until(true, kPauseTimeoutSeconds); }

bool SessionPeaks::wait_until(bool paused, double seconds) {
  using namespace std::chrono;
  const auto deadline = steady_clock::now() + duration_cast<steady_clock::duration>(duration<double>(seconds));
  for (;;) {
    const std::vector<core::BackendRun> runs = session_.snapshot();
    bool quiet = !runs.empty();  // no trainer yet: it may still start stepping
    for (const auto& r : runs)
      quiet = quiet && (r.finished || !r.error.empty() || (paused ? r.paused && !r.building : !r.paused));
    if (quiet) return true;
    std::unique_lock lock(mutex_);
    const steady_clock::time_point next = steady_clock::now() + milliseconds(50);
    if (stop_cv_.wait_until(lock, std::min(deadline, next), [&] { return stop_.load(); }) ||
        steady_clock::now() >= deadline)
      return false;
  }
}

// One backend's figures; a failure is a record saying why (and a line of `failed`). Throws Abandoned when stopped.
core::BackendPeaks SessionPeaks::measure_one(const std::string& name, const core::PeakProgress& progress,
                                             bool between_turns, std::vector<std::string>& failed) {
  core::BackendPeaks b;
  b.backend = name;
  try {
    set_stage(name + ": starting");
    const PeaksLookup found = measure_ ? measure_(name, progress)
                                       : lookup_peaks(name, device_, PeaksPolicy::Remeasure, cache_, progress);
    b.peaks = found.peaks;
    b.source = "measured";
    b.note = found.warning;
    // Between turns the probes' own load reading counts this session's training: the machine's load is the
    // one before training started.
    if (between_turns && load_now_ >= 0 && found.saved) {
      b.peaks->load_average = load_now_;
      try {
        core::save_peaks(cache_, *b.peaks);
      } catch (const core::Error& e) {
        b.note = e.what();
      }
    }
  } catch (const core::Error& e) {
    b.source = "not measured";
    b.note = e.what();
    failed.push_back(fmt::format("{}: {}", name, e.what()));
  }
  return b;
}

// Records b unless it is a failure for a backend measured before, and clears its staleness once measured.
void SessionPeaks::keep(const core::BackendPeaks& b) {
  std::lock_guard lock(mutex_);
  for (auto& old : state_.backends)
    if (old.backend == b.backend && (b.peaks || !old.peaks)) old = b;  // a failure keeps figures measured before
  if (b.peaks) stale_.erase(std::remove(stale_.begin(), stale_.end(), b.backend), stale_.end());
}

std::vector<std::string> SessionPeaks::to_measure(bool only_missing) const {
  std::vector<std::string> names;
  std::lock_guard lock(mutex_);
  for (const auto& b : state_.backends)
    if (!only_missing || !b.peaks || std::find(stale_.begin(), stale_.end(), b.backend) != stale_.end())
      names.push_back(b.backend);
  return names;
}

void SessionPeaks::run(bool only_missing, std::optional<BetweenTurns> between_turns) {
  // Between turns: the class sees training first; a user's pause (then or later) is kept.
  if (between_turns && !sleep_for(between_turns->warmup_s)) return finish("");
  const bool paused_by_user = session_.pause_requested();
  if (!paused_by_user) session_.post(Command(Command::Kind::Pause));
  {
    std::lock_guard lock(mutex_);
    state_.training_between = false;
    state_.stage = "pausing training";
  }
  std::string message;
  int figures = 0;  // measured so far: training runs between two of them (between turns)
  if (!wait_until_paused()) {
    message = fmt::format("peaks not measured: training did not pause within {:.0f} s (a step takes that long?); "
                          "press Re-measure peaks again when the steps are shorter",
                          kPauseTimeoutSeconds);
  } else {
    const std::vector<std::string> names = to_measure(only_missing);
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::string> failed;
    for (const auto& name : names) {
      const core::PeakProgress progress = [&](const std::string& what) {
        if (stop_) throw Abandoned{};
        // Between turns: training runs between two figures (unless the user paused it), each figure measured once
        // every trainer has stopped stepping again.
        if (between_turns && figures++ > 0 && !paused_by_user) {
          {
            std::lock_guard lock(mutex_);
            state_.training_between = true;
            state_.stage = fmt::format("training between figures ({} measured)", figures - 1);
          }
          session_.post(Command(Command::Kind::Resume));
          // The turn starts once every trainer says it runs again: a snapshot that still says "paused" from before
          // the resume would otherwise pass for the pause that follows it (a starved worker, seen under load).
          wait_until(false, kPauseTimeoutSeconds);
          const bool go_on = sleep_for(between_turns->turn_s);
          session_.post(Command(Command::Kind::Pause));
          {
            std::lock_guard lock(mutex_);
            state_.training_between = false;
            state_.stage = "pausing training";
          }
          if (!go_on || !wait_until_paused()) throw Abandoned{};
        }
        set_stage(what);
      };
      core::BackendPeaks b;
      try {
        b = measure_one(name, progress, between_turns.has_value(), failed);
      } catch (const Abandoned&) {
        break;
      }
      keep(b);
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    message = !failed.empty() ? fmt::format("peaks not measured: {}", fmt::join(failed, "; "))
              : between_turns     ? fmt::format("peaks measured in {:.1f} s, each figure with training paused, "
                                                "training between them", seconds)
                                  : fmt::format("peaks measured in {:.1f} s with training paused", seconds);
  }
  if (!paused_by_user && !stop_) session_.post(Command(Command::Kind::Resume));
  finish(message);
}

void SessionPeaks::finish(const std::string& message) {
  std::lock_guard lock(mutex_);
  state_.measuring = false;
  state_.training_between = false;
  state_.stage.clear();
  if (!message.empty()) state_.message = message;
}

}  // namespace run
