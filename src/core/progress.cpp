// The per-thread progress listener.
#include "core/progress.hpp"

namespace core {
namespace {
thread_local ProgressFn* g_listener = nullptr;
}  // namespace

ScopedProgress::ScopedProgress(ProgressFn fn) : fn_(std::move(fn)), previous_(g_listener) { g_listener = &fn_; }

ScopedProgress::~ScopedProgress() { g_listener = previous_; }

void report_progress(std::string_view stage) noexcept {
  if (!g_listener || !*g_listener) return;
  try {
    (*g_listener)(stage);
  } catch (...) {  // progress is a courtesy: it never stops the work it describes
  }
}

}  // namespace core
