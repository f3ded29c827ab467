// core::LossScaler (torch.cuda.amp.GradScaler semantics) step by step on scripted overflow sequences, growth at the
// exact interval, repeated backoff, state export/import, option checks, and all_finite() on inf/-inf/NaN.
#include <doctest/doctest.h>

#include <cfloat>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

#include "core/error.hpp"
#include "core/loss_scaler.hpp"

namespace {

// One scripted step: the overflow flag given to update() and everything expected right after it.
struct Step {
  bool found_inf;
  bool applied;  // update()'s return value: may the optimizer step be applied
  float scale;
  uint32_t tracker;
  uint32_t skipped;
};

void run_script(core::LossScaler& s, const std::vector<Step>& script) {
  for (size_t i = 0; i < script.size(); ++i) {
    const Step& e = script[i];
    INFO("step ", i, " found_inf ", e.found_inf);
    CHECK(s.update(e.found_inf) == e.applied);
    CHECK(s.scale() == e.scale);
    CHECK(s.growth_tracker() == e.tracker);
    CHECK(s.skipped_steps() == e.skipped);
    CHECK(s.export_state().found_inf == (e.found_inf ? 1u : 0u));
  }
}

constexpr float k16 = 65536.0f;  // 2^16

}  // namespace

TEST_CASE("loss scaler: GradScaler's defaults") {
  core::LossScaler s;
  CHECK(s.scale() == k16);
  CHECK(s.inv_scale() == 1.0f / k16);
  CHECK(s.growth_tracker() == 0);
  CHECK(s.skipped_steps() == 0);
  CHECK(s.options().growth_factor == 2.0f);
  CHECK(s.options().backoff_factor == 0.5f);
  CHECK(s.options().growth_interval == 2000);
}

TEST_CASE("loss scaler: clean steps, an overflow, consecutive overflows, recovery (default options)") {
  core::LossScaler s;
  run_script(s, {
                    {false, true, k16, 1, 0},
                    {false, true, k16, 2, 0},
                    {false, true, k16, 3, 0},
                    {true, false, k16 / 2, 0, 1},  // 2^15, tracker reset, step skipped
                    {false, true, k16 / 2, 1, 1},
                    {true, false, k16 / 4, 0, 2},
                    {true, false, k16 / 8, 0, 3},  // consecutive overflows halve again each time
                    {true, false, k16 / 16, 0, 4},
                    {true, false, k16 / 32, 0, 5},
                    {false, true, k16 / 32, 1, 5},
                    {false, true, k16 / 32, 2, 5},
                });
}

TEST_CASE("loss scaler: growth after exactly growth_interval clean steps (interval 3)") {
  core::LossScaler s({1024.0f, 2.0f, 0.5f, 3});
  run_script(s, {
                    {false, true, 1024, 1, 0},
                    {false, true, 1024, 2, 0},
                    {false, true, 2048, 0, 0},  // third clean step: grows, tracker back to 0
                    {false, true, 2048, 1, 0},
                    {false, true, 2048, 2, 0},
                    {true, false, 1024, 0, 1},  // an overflow one step before growth restarts the count
                    {false, true, 1024, 1, 1},
                    {false, true, 1024, 2, 1},
                    {false, true, 2048, 0, 1},
                    {false, true, 2048, 1, 1},
                    {false, true, 2048, 2, 1},
                    {false, true, 4096, 0, 1},
                });
}

TEST_CASE("loss scaler: growth after exactly 2000 clean steps with the defaults, not one step earlier") {
  core::LossScaler s;
  for (int i = 1; i < 2000; ++i) {
    REQUIRE(s.update(false));
    REQUIRE(s.scale() == k16);
    REQUIRE(s.growth_tracker() == static_cast<uint32_t>(i));
  }
  CHECK(s.update(false));
  CHECK(s.scale() == 2 * k16);
  CHECK(s.growth_tracker() == 0);
  // An overflow at clean step 1999 of the next interval postpones growth by a whole interval.
  for (int i = 1; i < 2000; ++i) REQUIRE(s.update(false));
  CHECK_FALSE(s.update(true));
  CHECK(s.scale() == k16);
  for (int i = 1; i < 2000; ++i) REQUIRE(s.update(false));
  CHECK(s.scale() == k16);
  CHECK(s.update(false));
  CHECK(s.scale() == 2 * k16);
  CHECK(s.skipped_steps() == 1);
}

TEST_CASE("loss scaler: other growth and backoff factors; growth that would overflow float is not applied") {
  core::LossScaler s({100.0f, 4.0f, 0.25f, 1});
  run_script(s, {
                    {false, true, 400, 0, 0},
                    {true, false, 100, 0, 1},
                    {true, false, 25, 0, 2},
                    {false, true, 100, 0, 2},
                });
  core::LossScaler big({std::ldexp(1.0f, 126), 2.0f, 0.5f, 1});
  CHECK(big.update(false));
  CHECK(big.scale() == std::ldexp(1.0f, 127));
  CHECK(big.update(false));  // 2^128 would be inf: the scale stays, the tracker restarts
  CHECK(big.scale() == std::ldexp(1.0f, 127));
  CHECK(std::isfinite(big.scale()));
  CHECK(big.growth_tracker() == 0);
}

TEST_CASE("loss scaler: export/import round trip continues the same sequence") {
  core::LossScaler a({1024.0f, 2.0f, 0.5f, 5});
  for (bool f : {false, false, true, false, false, false, true, false, false}) a.update(f);
  const core::LossScalerState st = a.export_state();
  CHECK(st.scale == 256.0f);
  CHECK(st.growth_tracker == 2);
  CHECK(st.skipped == 2);
  CHECK(st.found_inf == 0);

  core::LossScaler b({1024.0f, 2.0f, 0.5f, 5});
  b.import_state(st);
  CHECK(b.scale() == a.scale());
  CHECK(b.growth_tracker() == a.growth_tracker());
  CHECK(b.skipped_steps() == a.skipped_steps());
  for (bool f : {false, false, false, true, false, false, false, false, false}) {
    CHECK(a.update(f) == b.update(f));
    CHECK(a.scale() == b.scale());
    CHECK(a.growth_tracker() == b.growth_tracker());
    CHECK(a.skipped_steps() == b.skipped_steps());
  }
  const core::LossScalerState sa = a.export_state(), sb = b.export_state();
  CHECK(sa.scale == sb.scale);
  CHECK(sa.growth_tracker == sb.growth_tracker);
  CHECK(sa.skipped == sb.skipped);
  CHECK(sa.found_inf == sb.found_inf);
}

TEST_CASE("loss scaler: the state layout is the GPU buffer's {float scale; uint tracker, skipped, found_inf}") {
  CHECK(offsetof(core::LossScalerState, scale) == 0);
  CHECK(offsetof(core::LossScalerState, growth_tracker) == 4);
  CHECK(offsetof(core::LossScalerState, skipped) == 8);
  CHECK(offsetof(core::LossScalerState, found_inf) == 12);
  CHECK(sizeof(core::LossScalerState) == 16);
}

TEST_CASE("loss scaler: options and imported states out of range are errors") {
  auto rejects = [](core::LossScalerOptions o) {
    try {
      core::LossScaler s(o);
    } catch (const core::Error& e) {
      return e.kind() == core::ErrorKind::InvalidArgument;
    }
    return false;
  };
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(rejects({0.0f, 2.0f, 0.5f, 2000}));
  CHECK(rejects({-1.0f, 2.0f, 0.5f, 2000}));
  CHECK(rejects({inf, 2.0f, 0.5f, 2000}));
  CHECK(rejects({nan, 2.0f, 0.5f, 2000}));
  CHECK(rejects({k16, 1.0f, 0.5f, 2000}));
  CHECK(rejects({k16, 2.0f, 1.0f, 2000}));
  CHECK(rejects({k16, 2.0f, 0.0f, 2000}));
  CHECK(rejects({k16, 2.0f, 0.5f, 0}));
  CHECK_FALSE(rejects({k16, 2.0f, 0.5f, 1}));

  core::LossScaler s({k16, 2.0f, 0.5f, 10});
  CHECK_THROWS_AS(s.import_state({nan, 0, 0, 0}), core::Error);
  CHECK_THROWS_AS(s.import_state({0.0f, 0, 0, 0}), core::Error);
  CHECK_THROWS_AS(s.import_state({1.0f, 10, 0, 0}), core::Error);  // tracker must be below the interval
  CHECK_THROWS_AS(s.import_state({1.0f, 0, 0, 2}), core::Error);
  CHECK(s.scale() == k16);  // unchanged by a rejected import
  s.import_state({8.0f, 9, 3, 1});
  CHECK(s.update(false));
  CHECK(s.scale() == 16.0f);
}

TEST_CASE("all_finite: inf, -inf and NaN found at the first, a middle and the last position") {
  const float specials[] = {std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::signaling_NaN()};
  CHECK(core::all_finite(nullptr, 0));
  for (size_t n : {size_t{1}, size_t{7}, size_t{4096}, size_t{4097}, size_t{100'003}}) {
    std::vector<float> g(n);
    for (size_t i = 0; i < n; ++i) g[i] = (i % 3 == 0 ? -1.0f : 1.0f) * static_cast<float>(i) * 1e-3f;
    g[0] = FLT_MAX;               // large but finite
    if (n > 2) g[1] = -FLT_MAX;
    if (n > 3) g[2] = 1e-45f;     // subnormal
    INFO("n ", n);
    CHECK(core::all_finite(g.data(), n));
    for (float bad : specials) {
      for (size_t pos : {size_t{0}, n / 2, n - 1}) {
        const float keep = g[pos];
        g[pos] = bad;
        INFO("value ", bad, " at ", pos);
        CHECK_FALSE(core::all_finite(g.data(), n));
        g[pos] = keep;
      }
    }
    CHECK(core::all_finite(g.data(), n));
  }
}
