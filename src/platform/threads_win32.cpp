// platform/threads on Windows (threads.hpp): the list of a thread's exit calls hangs in a fiber-local storage slot
// whose callback the system calls when the thread ends (FlsAlloc: "on fiber deletion, thread exit, and when an FLS
// index is freed"), not in a thread_local variable: mingw-w64's emulated thread_local storage is freed before
// thread_local destructors run (threads.hpp). The callback gets the list itself, so it reads nothing of that storage.
#include <windows.h>

#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "platform/threads.hpp"

namespace platform {
namespace {

struct ExitCalls {
  std::vector<std::pair<void (*)(void*), void*>> calls;
};

void WINAPI run_exit_calls(void* data) {
  auto* list = static_cast<ExitCalls*>(data);
  if (list == nullptr) return;
  for (auto it = list->calls.rbegin(); it != list->calls.rend(); ++it) it->first(it->second);
  delete list;
}

DWORD exit_calls_slot() {
  static const DWORD slot = FlsAlloc(run_exit_calls);  // once per process, never freed
  if (slot == FLS_OUT_OF_INDEXES)
    throw std::runtime_error("no fiber-local storage slot is free (FlsAlloc): cannot free per-thread memory at a "
                             "thread's end; the process holds too many of them");
  return slot;
}

}  // namespace

void at_thread_exit(void (*release)(void*), void* object) {
  const DWORD slot = exit_calls_slot();
  auto* list = static_cast<ExitCalls*>(FlsGetValue(slot));
  if (list == nullptr) {
    auto fresh = std::make_unique<ExitCalls>();
    if (!FlsSetValue(slot, fresh.get()))
      throw std::runtime_error("cannot set this thread's fiber-local storage (FlsSetValue)");
    list = fresh.release();
  }
  list->calls.emplace_back(release, object);
}

}  // namespace platform
