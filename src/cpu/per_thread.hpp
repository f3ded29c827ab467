// cpu::per_thread: an object of the calling thread's own (a packing buffer, an edge tile, a one-thread pool), made at
// its first use on that thread and freed when the thread ends, where the kernels would write `thread_local T x;`.
// A thread_local object with a destructor is destroyed after its storage is freed on Windows (mingw-w64's emulated
// thread-local storage: platform/threads.hpp); a thread_local pointer has no destructor, and the object it points to
// is freed by platform::at_thread_exit. Use:
//   thread_local std::vector<float>* panel_slot = nullptr;   // one slot per use site, as a thread_local was
//   std::vector<float>& panel = per_thread(panel_slot);
#pragma once
#include <memory>
#include <utility>

#include "platform/threads.hpp"

namespace cpu {

template <typename T, typename... Args>
T& per_thread(T*& slot, Args&&... args) {
  if (slot == nullptr) {
    auto object = std::make_unique<T>(std::forward<Args>(args)...);
    platform::at_thread_exit([](void* p) { delete static_cast<T*>(p); }, object.get());
    slot = object.release();
  }
  return *slot;
}

}  // namespace cpu
