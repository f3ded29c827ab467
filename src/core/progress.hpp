// Progress of a long set-up (a trainer being built: pipelines compiled, the dataset uploaded), reported from inside it
// to whoever waits for it, without threading a callback through every constructor: the waiting code installs a
// ScopedProgress on its thread, and the set-up calls report_progress() at each stage (a no-op when nobody listens).
//
//   core::ScopedProgress listen([&](std::string_view stage) { show(stage); });
//   auto trainer = make_trainer(...);   // calls core::report_progress("uploading 210 MiB of data") inside
#pragma once
#include <functional>
#include <string_view>

namespace core {

using ProgressFn = std::function<void(std::string_view stage)>;

// Installs `fn` as this thread's progress listener until destroyed (the previous one is restored then).
class ScopedProgress {
 public:
  explicit ScopedProgress(ProgressFn fn);
  ~ScopedProgress();
  ScopedProgress(const ScopedProgress&) = delete;
  ScopedProgress& operator=(const ScopedProgress&) = delete;

 private:
  ProgressFn fn_;
  ProgressFn* previous_;
};

// Tells this thread's listener (if any) which stage a set-up has reached, e.g. "compiling pipelines".
// The listener must not throw; report_progress never does.
void report_progress(std::string_view stage) noexcept;

}  // namespace core
