// Measuring a running session's device peaks while its training is paused (session_peaks.hpp).
#include "run/session_peaks.hpp"

#include <fmt/format.h>

#include <chrono>

#include "core/error.hpp"
#include "run/peaks.hpp"

namespace run {
namespace {

// Thrown from the progress callback to abandon a measurement when the dashboard closes.
struct Abandoned {};

}  // namespace

SessionPeaks::SessionPeaks(Session& session, std::vector<std::string> backends, int device,
                           std::filesystem::path cache, Measure measure)
    : session_(session), device_(device), cache_(std::move(cache)), measure_(std::move(measure)) {
  state_.backends = cached_peaks(backends, device_, cache_);
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
  return false;
}

SessionPeaks::State SessionPeaks::state() const {
  std::lock_guard lock(mutex_);
  return state_;
}

void SessionPeaks::set_stage(const std::string& stage) {
  std::lock_guard lock(mutex_);
  state_.stage = stage;
}

void SessionPeaks::measure(bool only_missing) {
  {
    std::lock_guard lock(mutex_);
    if (state_.measuring || stop_) return;
    state_.measuring = true;
    state_.stage = "pausing training";
  }
  if (thread_.joinable()) thread_.join();  // the previous measurement's thread, finished
  thread_ = std::thread([this, only_missing] { run(only_missing); });
}

bool SessionPeaks::wait_until_paused() {
  using namespace std::chrono;
  const auto deadline =
      steady_clock::now() + duration_cast<steady_clock::duration>(duration<double>(kPauseTimeoutSeconds));
  for (;;) {
    bool quiet = true;
    for (const auto& r : session_.snapshot())
      quiet = quiet && (r.finished || (r.paused && !r.building));
    if (quiet) return true;
    std::unique_lock lock(mutex_);
    const steady_clock::time_point next = steady_clock::now() + milliseconds(50);
    if (stop_cv_.wait_until(lock, std::min(deadline, next), [&] { return stop_.load(); }) ||
        steady_clock::now() >= deadline)
      return false;
  }
}

void SessionPeaks::run(bool only_missing) {
  const bool paused_by_user = session_.pause_requested();
  if (!paused_by_user) session_.post(Command(Command::Kind::Pause));
  std::string message;
  if (!wait_until_paused()) {
    message = fmt::format("peaks not measured: training did not pause within {:.0f} s (a step takes that long?); "
                          "press Re-measure peaks again when the steps are shorter",
                          kPauseTimeoutSeconds);
  } else {
    std::vector<std::string> names;
    {
      std::lock_guard lock(mutex_);
      for (const auto& b : state_.backends)
        if (!only_missing || !b.peaks) names.push_back(b.backend);
    }
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::string> failed;
    for (const auto& name : names) {
      const core::PeakProgress progress = [this](const std::string& what) {
        if (stop_) throw Abandoned{};
        set_stage(what);
      };
      core::BackendPeaks b;
      b.backend = name;
      try {
        set_stage(name + ": starting");
        const PeaksLookup found = measure_ ? measure_(name, progress)
                                           : lookup_peaks(name, device_, PeaksPolicy::Remeasure, cache_, progress);
        b.peaks = found.peaks;
        b.source = "measured";
        b.note = found.warning;
      } catch (const Abandoned&) {
        break;
      } catch (const core::Error& e) {
        b.source = "not measured";
        b.note = e.what();
        failed.push_back(fmt::format("{}: {}", name, e.what()));
      }
      std::lock_guard lock(mutex_);
      for (auto& old : state_.backends)
        if (old.backend == name && (b.peaks || !old.peaks)) old = b;  // a failure keeps figures measured before
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    message = failed.empty() ? fmt::format("peaks measured in {:.1f} s with training paused", seconds)
                             : fmt::format("peaks not measured: {}", fmt::join(failed, "; "));
  }
  if (!paused_by_user && !stop_) session_.post(Command(Command::Kind::Resume));
  std::lock_guard lock(mutex_);
  state_.measuring = false;
  state_.stage.clear();
  state_.message = message;
}

}  // namespace run
