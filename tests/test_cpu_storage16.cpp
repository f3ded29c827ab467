// 16-bit storage on the CPU (cpu/storage16.hpp), the parts the kernel tests do not reach: the fp32 scratch of the
// widened operands grows to the largest call and then allocates nothing; its regions are disjoint and aligned; the
// conversions over the pool equal the scalar ones bit for bit (inf beyond fp16's range included). Whether the 16-bit
// kernels compute the right thing is tests/test_kernel_parity.cpp and tests/test_train_step.cpp.
#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/half.hpp"
#include "core/kernel_table.hpp"
#include "core/rng.hpp"
#include "cpu/kernel_calls.hpp"
#include "cpu/storage16.hpp"
#include "cpu/thread_pool.hpp"

using core::Precision;

namespace {

const Precision kFormats[] = {Precision::FP16, Precision::BF16};

// Same bits everywhere (compared by their bits, so that -0 != +0 and NaNs are caught); prints the first mismatches.
template <typename T>
void check_bits(const char* what, const std::vector<T>& got, const std::vector<T>& ref) {
  REQUIRE(got.size() == ref.size());
  size_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::memcmp(&got[i], &ref[i], sizeof(T)) == 0) continue;
    if (++bad <= 5) MESSAGE(what << "[" << i << "]: got " << +got[i] << ", expected " << +ref[i]);
  }
  CHECK(bad == 0);
}

// matmul_forward of a hidden layer in 16-bit storage, through cpu::run_kernel.
void forward16(long B, long C, long OC, Precision p, cpu::ThreadPool& pool, cpu::Workspace16& ws) {
  std::vector<uint16_t> out(B * OC), pre(B * OC), x(B * C), w(OC * C), bias(OC);
  const std::vector<void*> bindings{out.data(), pre.data(), x.data(), w.data(), bias.data()};
  cpu::run_kernel({.op = core::Op::matmul_forward, .activation = true, .B = B, .C = C, .OC = OC}, {}, bindings,
                  {p, pool, ws});
}

}  // namespace

TEST_CASE("Workspace16 grows to the largest call's fp32 operands, then allocates nothing") {
  cpu::ThreadPool pool(2);
  auto pad = [](long n) { return (static_cast<size_t>(n) + 15) / 16 * 16; };
  for (Precision p : kFormats) {
    CAPTURE(std::string(core::to_string(p)));
    cpu::Workspace16 ws;
    CHECK(ws.bytes() == 0);
    const long B = 33, C = 17, OC = 10;
    forward16(B, C, OC, p, pool, ws);
    // Its five 16-bit operands widened: inp, weight, bias, out, preact.
    const size_t expected = 4 * (pad(B * C) + pad(OC * C) + pad(OC) + 2 * pad(B * OC));
    CHECK(ws.bytes() == expected);
    const core::PlanEntry entry{.op = core::Op::matmul_forward, .activation = true, .B = B, .C = C, .OC = OC};
    CHECK(4 * cpu::workspace_floats(entry, p) == expected);  // what an owner reserves up front
    for (int i = 0; i < 3; ++i) {
      forward16(B, C, OC, p, pool, ws);
      forward16(7, 5, 3, p, pool, ws);
      CHECK(ws.bytes() == expected);
    }
    ws.release();
    CHECK(ws.bytes() == 0);
  }
}

TEST_CASE("Workspace16::carve: disjoint regions 64 bytes apart from the start, stable while large enough") {
  cpu::Workspace16 ws;
  float* r[3];
  const size_t sizes[3] = {5, 0, 33};
  ws.carve(r, sizes, 3);
  CHECK(r[1] - r[0] == 16);
  CHECK(r[2] - r[1] == 0);  // an empty region takes no room
  CHECK(ws.bytes() == 4 * (16 + 48));
  float* first = r[0];
  const size_t smaller[2] = {20, 20};
  ws.carve(r, smaller, 2);
  CHECK(r[0] == first);
  CHECK(r[1] - r[0] == 32);
  CHECK(ws.bytes() == 4 * 64);
}

TEST_CASE("widen_all / narrow_all over the pool equal the scalar conversions") {
  cpu::ThreadPool pool(2);
  core::Pcg32 rng(3);
  std::vector<float> v(70001);
  for (auto& x : v) x = rng.uniform(-70000.0f, 70000.0f);  // beyond fp16's range too: rounds to inf
  for (Precision p : kFormats) {
    CAPTURE(std::string(core::to_string(p)));
    const bool fp16 = p == Precision::FP16;
    // Two conversions in one call, split at an odd place: each lands in its own destination.
    std::vector<uint16_t> h(v.size()), want(v.size());
    const cpu::Narrow narrows[] = {{h.data(), v.data(), 12345}, {h.data() + 12345, v.data() + 12345, v.size() - 12345}};
    cpu::narrow_all(narrows, p, pool);
    for (size_t i = 0; i < v.size(); ++i) want[i] = fp16 ? core::float_to_fp16(v[i]) : core::float_to_bf16(v[i]);
    check_bits("narrow_all", h, want);
    std::vector<float> f(v.size()), back(v.size());
    const cpu::Widen widens[] = {{f.data(), h.data(), h.size()}};
    cpu::widen_all(widens, p, pool);
    for (size_t i = 0; i < h.size(); ++i) back[i] = fp16 ? core::fp16_to_float(h[i]) : core::bf16_to_float(h[i]);
    check_bits("widen_all", f, back);
  }
}
