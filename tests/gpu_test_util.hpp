// Shared by the tests that use Vulkan: whether this machine has a Vulkan device at all (the only reason a GPU test may
// skip), a context with the validation layer (a missing layer fails the test), checks that the validation layer
// reported nothing, buffers from vectors.
#pragma once
#include <doctest/doctest.h>

#include <algorithm>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "skip.hpp"
#include "vk/buffer.hpp"
#include "vk/context.hpp"
#include "vk/devices.hpp"
#include "vk/error.hpp"

namespace test {

// Why this machine has no Vulkan device at all (no driver, or a driver without devices), or nullopt when it has one.
// Any other failure to list the devices is thrown: it is a failure of the test, not a reason to skip.
inline const std::optional<std::string>& no_vulkan_device() {
  static const std::optional<std::string> reason = []() -> std::optional<std::string> {
    try {
      vk::list_devices();
      return std::nullopt;
    } catch (const vk::Error& e) {
      if (!e.no_device()) throw;
      return std::string(e.what());
    }
  }();
  return reason;
}

// True when a Vulkan device exists; otherwise records `what` as skipped (with the reason) and returns false.
inline bool vulkan_device_or_skip(const std::string& what) {
  if (const auto& reason = no_vulkan_device()) {
    skip(what, "no Vulkan device (" + *reason + ")");
    return false;
  }
  return true;
}

// Prints the first validation messages and checks that there were none (errors or warnings).
inline void check_no_validation_messages(int errors, int warnings, const std::vector<std::string>& first) {
  for (const auto& m : first) MESSAGE(m);
  CHECK_MESSAGE(errors == 0, "Vulkan validation errors");
  CHECK_MESSAGE(warnings == 0, "Vulkan validation warnings");
}

// For one context's validation messenger.
inline void check_no_validation_messages(const vk::ValidationLog& log) {
  auto& l = const_cast<vk::ValidationLog&>(log);
  std::vector<std::string> first;
  {
    std::lock_guard lock(l.mutex);
    first = l.first_messages;
  }
  check_no_validation_messages(l.errors.load(), l.warnings.load(), first);
}

// For every context made while it lives (the trainers' contexts, which the tests cannot reach): declared at the top of
// a test that enables validation, it checks when the test ends that no context reported anything since.
class ValidationWatch {
 public:
  ValidationWatch() : start_(vk::validation_totals()) {}
  ~ValidationWatch() {
    if (std::uncaught_exceptions() == 0) check();  // when the test threw, it has failed already
  }
  ValidationWatch(const ValidationWatch&) = delete;
  ValidationWatch& operator=(const ValidationWatch&) = delete;

 private:
  void check() const {
    const vk::ValidationTotals now = vk::validation_totals();
    std::vector<std::string> first(now.first_messages.begin() + static_cast<long>(std::min(
                                                                     start_.first_messages.size(),
                                                                     now.first_messages.size())),
                                   now.first_messages.end());
    check_no_validation_messages(now.errors - start_.errors, now.warnings - start_.warnings, first);
  }

  vk::ValidationTotals start_;
};

// A context on the default device with the validation layer, or null (recorded as a skip) when there is no Vulkan
// device at all. Every other error, a missing validation layer included, is thrown and fails the test.
inline std::unique_ptr<vk::Context> make_context(const std::string& what = "GPU test") {
  if (!vulkan_device_or_skip(what)) return nullptr;
  return std::make_unique<vk::Context>(vk::ContextOptions{-1, true});
}

template <typename T>
vk::Buffer to_buffer(vk::Context& ctx, const std::vector<T>& v, const char* name) {
  vk::Buffer b(ctx, std::max<size_t>(v.size() * sizeof(T), 16), vk::MemoryKind::DeviceLocal, name);
  b.upload(ctx, v.data(), v.size() * sizeof(T));
  return b;
}

template <typename T>
std::vector<T> from_buffer(vk::Context& ctx, const vk::Buffer& b, size_t n) {
  std::vector<T> v(n);
  b.download(ctx, v.data(), n * sizeof(T));
  return v;
}

}  // namespace test
