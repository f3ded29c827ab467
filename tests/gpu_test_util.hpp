// Shared by the GPU tests: a Vulkan context with the validation layer (when installed), buffers from vectors,
// one-dispatch runs, and the comparison measures of CONVENTIONS.md.
#pragma once
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "vk/buffer.hpp"
#include "vk/context.hpp"

namespace test {

// A context on the default device with validation, or null (and a visible MESSAGE) when there is no Vulkan at all.
inline std::unique_ptr<vk::Context> make_context() {
  try {
    return std::make_unique<vk::Context>(vk::ContextOptions{-1, true});
  } catch (const core::Error& e) {
    MESSAGE("GPU test skipped: ", e.what());
    return nullptr;
  }
}

// Fails the test on any validation message of error severity, printing the first ones.
inline void check_no_validation_errors(const vk::Context& ctx) {
  const auto& log = ctx.validation_log();
  for (const auto& m : const_cast<vk::ValidationLog&>(log).first_messages) MESSAGE(m);
  CHECK(log.errors.load() == 0);
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

inline std::vector<float> random_vector(size_t n, uint64_t seed, float lo = -1, float hi = 1) {
  core::Pcg32 rng(seed, 7);
  std::vector<float> v(n);
  for (auto& x : v) x = rng.uniform(lo, hi);
  return v;
}

// Normalized mean squared error sum((a-b)^2) / sum(b^2) (b the reference); prints the first mismatches.
inline double nmse(const std::vector<float>& a, const std::vector<float>& ref, const std::string& what) {
  REQUIRE(a.size() == ref.size());
  double num = 0, den = 0;
  int shown = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    double d = double(a[i]) - double(ref[i]);
    num += d * d;
    den += double(ref[i]) * double(ref[i]);
    if (std::fabs(d) > 1e-5 + 1e-3 * std::fabs(ref[i]) && shown < 5) {
      MESSAGE(what, "[", i, "]: gpu ", a[i], " cpu ", ref[i]);
      ++shown;
    }
  }
  return den > 0 ? num / den : num;
}

}  // namespace test
