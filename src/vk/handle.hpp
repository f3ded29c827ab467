// vk::Handle: a small move-only owner of one Vulkan handle and the function that destroys it. Destruction order of a
// class's Handle members follows member order (last declared, first destroyed), as for any C++ member.
#pragma once
#include <vulkan/vulkan.h>

#include <functional>
#include <utility>

#include "vk/error.hpp"

namespace vk {

template <typename T>
class Handle {
 public:
  Handle() = default;
  Handle(T handle, std::function<void(T)> destroy) : handle_(handle), destroy_(std::move(destroy)) {}
  ~Handle() { reset(); }
  Handle(Handle&& o) noexcept : handle_(std::exchange(o.handle_, T{})), destroy_(std::move(o.destroy_)) {}
  Handle& operator=(Handle&& o) noexcept {
    if (this != &o) {
      reset();
      handle_ = std::exchange(o.handle_, T{});
      destroy_ = std::move(o.destroy_);
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;

  T get() const { return handle_; }
  explicit operator bool() const { return handle_ != T{}; }
  // Gives the handle up without destroying it (what a hung device may still use is never freed).
  T release() { return std::exchange(handle_, T{}); }
  void reset() {
    if (handle_ != T{} && destroy_) destroy_(handle_);
    handle_ = T{};
  }

 private:
  T handle_{};
  std::function<void(T)> destroy_;
};

}  // namespace vk
