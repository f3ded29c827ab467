// run::Worker: one backend's training loop (epochs, steps, read-backs, evaluation), run on its own thread, taking
// commands (pause, batch size, learning rate, ...) at the next step boundary and keeping a BackendRun that any thread
// can copy.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include "core/metrics.hpp"
#include "core/model_view.hpp"
#include "core/timeline.hpp"
#include "core/trainer.hpp"
#include "run/command.hpp"
#include "run/session_types.hpp"
#include "run/turns.hpp"

namespace run {

// Results are read back about this often (wall-clock seconds), and after every step when a step takes longer: the
// figures on screen are never much older than this, and a command waits at most for the steps in flight.
inline constexpr double kReadbackSeconds = 0.25;

// A backend's samples/s (BackendRun::recent_samples_per_s, and so the speedup) is shown once its rate window spans at
// least this many training seconds at the settings in force (timed alone when taking turns), its first step after a
// change left out: a rate over a few steps jumps from read-back to read-back (the issue saw "the CPU is 5.4x as
// fast" with both curves at step 7). Until then the header says "measuring samples/s".
inline constexpr double kSteadySeconds = 1.0;


// How many steps a worker queues between read-backs: as many as take about kReadbackSeconds at `seconds_per_step`
// (the wall time of a recent step), at least 1 (a slow step is read back as soon as it is done) and at most `ring`
// (the trainer's read-back capacity, TrainConfig::readback_interval). seconds_per_step <= 0 (not known yet): 1.
int steps_per_readback(double seconds_per_step, int ring);

// Training seconds: a stopwatch that runs only while the worker trains (not while paused, evaluating or rebuilding).
class ActiveClock {
 public:
  void start();
  void stop();
  double seconds() const;  // total running time so far
  void reset() { total_ = 0, running_ = false; }

 private:
  using Clock = std::chrono::steady_clock;
  bool running_ = false;
  Clock::time_point since_{};
  double total_ = 0;
};

// TRAINSCOPE_TEST_SLOW_BACKEND=BACKEND:MS (e.g. cpu:40): the milliseconds added to each step of `backend` (gpu or
// cpu), so that tests can play lessons on a backend slower than this machine's; 0 when unset or for the other one.
// Throws core::Error(InvalidArgument) naming the variable when it is malformed.
double test_slowdown_ms(const std::string& backend);

class Worker {
 public:
  // A command this worker refused (e.g. out of memory for a new batch size), with the settings it keeps running.
  using RefusalFn = std::function<void(const Command& refused, const core::TrainConfig& running)>;

  // keep_alive: after the last epoch (or an error) wait for a Reset instead of returning (the dashboard).
  // lower_priority: see SessionOptions. on_refused: called on the worker's thread; may be empty.
  Worker(BackendSpec spec, core::TrainConfig cfg, std::shared_ptr<const core::DataSplit> data,
         std::shared_ptr<const std::vector<float>> init_params, Observer& observer, const std::atomic<bool>& stop,
         bool keep_alive, bool lower_priority = false, size_t timeline_steps = 8, RefusalFn on_refused = {});

  void run();  // the thread body: never throws
  // The session's turns (fair mode), this worker's index among them; before run(). Null: no turns.
  void set_turns(Turns* turns, size_t index) { turns_ = turns, turn_index_ = index; }
  void post(const Command& command);
  void wake();  // after the session's stop flag is set: ends a pause or an idle wait
  core::BackendRun snapshot(bool with_step_rows = false) const;  // see Session::snapshot
  const std::string& name() const { return spec_.name; }

 private:
  enum class Next { Train, Restart, Stop };

  void train_until_done();
  void start_fresh();
  Next apply_commands();
  Next handle(const Command& c);
  // The settings commands that check their value first (worker_commands.cpp): each applies c or refuses it.
  void set_learning_rate(const Command& c);
  void set_batch(const Command& c);
  void set_precision(const Command& c);
  void set_input(const Command& c);
  void set_threads(const Command& c);
  void rebuild(const Command& c, const core::TrainConfig& next, const std::string& label);
  void refuse(const Command& c, const std::string& message);
  void collect();
  // 2-D data: the decision boundary of the current weights into run_.boundary, at most every kBoundarySeconds unless
  // `now`; the training clock stands still meanwhile (its time is not training time).
  void update_boundary(bool now = false);
  void prepare_boundary();  // the grid and the points to draw, for the data of this run (start_fresh)
  // Image data: what the model sees (run_.model_view), at most every kModelViewSeconds unless `now`, at most a tenth
  // of the time; called with update_boundary (worker_view.cpp). prepare_model_view: the images, at start_fresh.
  void update_model_view(bool now);
  void prepare_model_view();
  void generate(core::ModelView& view);  // text: the model's continuation of each sequence's first half
  void account_step(const core::StepRecord& r, const core::StepPlan& plan, double seconds);  // under run_mutex_
  // Device, memory and supported precisions of trainer_ into run_; returns the device name.
  std::string publish_trainer_info();
  // Throws core::Error(Diverged) when a read-back step shows that training cannot recover (see worker.cpp).
  void check_divergence(const std::vector<core::StepRecord>& records);
  void set_status(const std::string& message);
  // A trainer is being built (`what`: "batch 128 -> 512", "start"): the dashboard shows it with its stage.
  void begin_build(const std::string& what);
  void set_build_stage(std::string_view stage);
  void end_build();
  bool wait_for_reset();
  // Fair mode (run/turns.hpp): take the turn before training (the clock stopped while waiting for it), give it up
  // while not training, pass it on after a read-back once the slice is over. No-ops without turns. take_turn returns
  // false when a command came while it waited (the turn not taken: the command is applied first).
  bool take_turn();
  void leave_turn();
  void pass_turn_if_over();
  std::string turns_rate_note() const;  // BackendRun::rate_note: "" unless a step outlasts the turns
  // One piece of BackendSpec::background, its time not training time.
  void run_background();

  const BackendSpec spec_;
  Observer& observer_;
  const std::atomic<bool>& stop_;
  const bool keep_alive_;
  const bool lower_priority_;
  const RefusalFn on_refused_;

  // Worker-thread state.
  core::TrainConfig cfg_;
  std::shared_ptr<const core::DataSplit> data_;
  std::shared_ptr<const std::vector<float>> init_params_;
  std::unique_ptr<core::Trainer> trainer_;
  std::vector<uint32_t> order_;  // this epoch's sample order
  ActiveClock clock_;
  int in_flight_ = 0;            // steps queued since the last read-back
  int in_flight_limit_ = 1;      // steps_per_readback() of the current trainer's measured pace
  double slow_ms_ = 0;           // test_slowdown_ms: added to each step (tests only)
  double last_collect_s_ = 0;    // core::monotonic_seconds() of the last read-back
  std::vector<float> boundary_inputs_;  // the grid's cell centres (empty: no 2-D data, or predict() unsupported)
  core::BoundaryGrid boundary_grid_;
  double last_boundary_s_ = 0;
  double boundary_cost_s_ = 0;
  std::shared_ptr<const core::ModelView> view_base_;  // the test images and labels, not predicted (null: no images)
  double last_view_s_ = 0;
  double view_cost_s_ = 0;  // how long the last map took: the next waits at least 4 times that (<= 20% of time)
  long samples_this_epoch_ = 0;
  double loss_sum_ = 0;          // this epoch's step losses, read back so far
  long losses_ = 0;
  std::deque<std::pair<double, long>> rate_window_;  // (training seconds, samples trained) of recent read-backs
  long samples_total_ = 0;
  bool paused_ = false;
  int step_budget_ = 0;          // steps a SingleStep allows while paused
  long steps_since_build_ = 0;   // steps read back from the current trainer (its first is warm-up for PrecisionRow)
  // fp16: the run of consecutive skipped steps not yet turned into a marker (count 0: none).
  long skip_run_count_ = 0;
  long skip_run_first_step_ = 0;
  double skip_run_seconds_ = 0;
  float skip_run_first_scale_ = 0;
  core::TimelineRecorder timeline_;  // the last few steps, for BackendRun::timeline
  double last_step_end_s_ = 0;       // when the previous step read back ended (StepRow::wall_ms); 0: none since a
                                     // start or a change
  Command pending_reset_;
  long generation_ = 0;  // runs started (BackendRun::generation)
  Turns* turns_ = nullptr;
  size_t turn_index_ = 0;
  long shared_mark_ = 0;  // Turns::shared_since's mark of this worker's last read-back
  bool background_done_ = false;
  double background_due_s_ = 0;  // training seconds before the next background piece (half the time at most)

  // Shared with other threads.
  mutable std::mutex run_mutex_;  // guards run_ and step_rows_
  core::BackendRun run_;
  std::vector<core::StepRow> step_rows_;  // every step of this run (BackendRun::step_rows of an export snapshot)
  std::mutex queue_mutex_;        // guards queue_
  std::condition_variable queue_cv_;
  std::deque<Command> queue_;
  std::atomic<bool> commands_waiting_{false};  // queue_ is not empty (set under queue_mutex_): ends a wait for the turn
};

}  // namespace run
