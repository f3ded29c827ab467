// run::SessionPeaks: the measured peaks of a running session's devices (the dashboard's bandwidth shares and
// rooflines). They come from the per-device cache (run/peaks.hpp); a device missing from it, or every device when
// the user asks to measure again, is measured on a thread of its own while the session's training is paused, so
// that no trainer shares the cores or the memory bus with the probes, and training resumes afterwards. Measured
// between turns (the dashboard's start), training runs first and again between the figures, each figure still
// measured with training paused: the class sees the curves from the first seconds instead of a minute's pause.
#pragma once
#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/peaks.hpp"
#include "run/peaks.hpp"
#include "run/session.hpp"

namespace run {

// Measuring between turns: training runs `warmup_s` before the first figure (the first losses and the speedup
// appear) and `turn_s` between two figures; each figure is measured with training paused.
struct BetweenTurns {
  double warmup_s = 20;
  double turn_s = 3;
};

class SessionPeaks {
 public:
  // Measures one backend ("gpu" | "cpu") now and caches it (as lookup_peaks); `progress` names each figure as it
  // starts (and may throw to abandon the measurement). Throws core::Error when it cannot measure.
  using Measure = std::function<PeaksLookup(const std::string& backend, const core::PeakProgress& progress)>;

  // What the dashboard shows.
  struct State {
    std::vector<core::BackendPeaks> backends;  // in the session's backend order
    bool measuring = false;                    // a measurement is under way (training paused, or between figures)
    bool training_between = false;             // measuring between turns: training runs now, between two figures
    std::string stage;                         // while measuring: "pausing training", "gpu: fp32 FMA: vec4", ...
    std::string message;                       // the last measurement's outcome ("" before any)
  };

  // The peaks of `backends` (names as TrainConfig::backends) on Vulkan device `device` (-1: the best), cached in
  // `cache` (core::default_peaks_path(); empty: no cache). Reads the cache only; measuring starts with measure().
  // `measure` replaces the real probes (tests); empty: run::lookup_peaks(PeaksPolicy::Remeasure).
  // `load_now`: the machine's 1-minute load average before training started (core::load_average(); -1: unknown):
  // cached peaks measured under load are then measured again on this quiet machine (core::measured_under_load;
  // missing() says so), and peaks measured between turns record it as their load (the probes' own reading would
  // count this session's training).
  SessionPeaks(Session& session, std::vector<std::string> backends, int device, std::filesystem::path cache,
               Measure measure = {}, double load_now = -1);
  ~SessionPeaks();  // abandons a measurement at its next figure and joins the thread; destroy before the session
  SessionPeaks(const SessionPeaks&) = delete;
  SessionPeaks& operator=(const SessionPeaks&) = delete;

  // Whether a backend has no peaks, or peaks measured under load on what is now a quiet machine (then the dashboard
  // measures them at start, or says how to).
  bool missing() const;
  // Pauses training (unless the user paused it already), waits until every backend has stopped stepping, measures
  // `only_missing` ? the backends without peaks : every backend, caches them, and resumes training if it paused it.
  // Returns at once; the work runs on a thread of its own. Ignored while a measurement runs.
  // between_turns: training runs first and between the figures (BetweenTurns).
  void measure(bool only_missing, std::optional<BetweenTurns> between_turns = std::nullopt);
  State state() const;

  // How long measure() waits for the trainers to stop stepping (a huge batch on a software device can take seconds
  // per step) before it gives up and says so.
  static constexpr double kPauseTimeoutSeconds = 120;

 private:
  void run(bool only_missing, std::optional<BetweenTurns> between_turns);
  std::vector<std::string> to_measure(bool only_missing) const;  // the backends this run measures
  core::BackendPeaks measure_one(const std::string& name, const core::PeakProgress& progress, bool between_turns,
                                 std::vector<std::string>& failed);
  void keep(const core::BackendPeaks& b);
  bool wait_until_paused();  // false: stopped, or timed out
  // Until every trainer is paused (and not building) or runs, as `paused` says; false: stopped, or timed out.
  bool wait_until(bool paused, double seconds);
  bool sleep_for(double seconds);  // false: stopped meanwhile
  void finish(const std::string& message);  // the measurement is over ("": abandoned, the last message stays)
  void set_stage(const std::string& stage);

  Session& session_;
  const int device_;
  const std::filesystem::path cache_;
  const Measure measure_;
  const double load_now_;
  std::vector<std::string> stale_;  // backends whose cached peaks were measured under load (guarded by mutex_)
  std::atomic<bool> stop_{false};
  mutable std::mutex mutex_;  // guards state_
  std::condition_variable stop_cv_;
  State state_;
  std::thread thread_;
};

}  // namespace run
