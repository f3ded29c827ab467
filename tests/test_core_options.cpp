// core/options: one set of rules for every numeric setting; strict parsing (no saturation, no trailing text, empty
// named as empty, NaN and infinities refused) and core::validate using the same rules.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>

#include "core/config.hpp"
#include "core/error.hpp"
#include "core/options.hpp"

namespace {

// The message of the core::Error(InvalidArgument) that f throws.
template <typename F>
std::string refusal(F&& f) {
  try {
    f();
  } catch (const core::Error& e) {
    CHECK(e.kind() == core::ErrorKind::InvalidArgument);
    return e.what();
  }
  FAIL("expected a refusal");
  return "";
}

}  // namespace

TEST_CASE("parse_int: strict, never saturating, empty named as empty") {
  using core::rules::batch;
  CHECK(core::parse_int("128", batch) == 128);
  CHECK(core::parse_int("65536", batch) == 65536);
  CHECK(refusal([] { core::parse_int("", core::rules::batch); }) ==
        "--batch: the value is empty; the batch size must be 1..65536");
  CHECK(refusal([] { core::parse_int("0", core::rules::batch); }) == "--batch 0: the batch size must be 1..65536");
  CHECK(refusal([] { core::parse_int("65537", core::rules::batch); }).find("must be 1..65536") != std::string::npos);
  CHECK(refusal([] { core::parse_int("12x", core::rules::batch); }).find("not a whole number") != std::string::npos);
  CHECK(refusal([] { core::parse_int("1.5", core::rules::batch); }).find("not a whole number") != std::string::npos);
  CHECK(refusal([] { core::parse_int(" 1", core::rules::batch); }).find("not a whole number") != std::string::npos);
  CHECK(refusal([] { core::parse_int("99999999999999999999", core::rules::batch); }).find("too large") !=
        std::string::npos);
  CHECK(refusal([] { core::parse_int("-99999999999999999999", core::rules::batch); }).find("too small") !=
        std::string::npos);
  CHECK(core::parse_int("-1", core::rules::device) == -1);
  // Issue 25, item 12: --max-fps 0.01 redrew every 100 s; a cap is whole frames per second, 0 (none) or 1..1000.
  CHECK(refusal([] { core::parse_int("0.01", core::rules::max_fps); }).rfind("--max-fps 0.01: ", 0) == 0);
  CHECK(refusal([] { core::parse_int("", core::rules::max_fps); }).rfind("--max-fps: the value is empty", 0) == 0);
  CHECK(core::parse_int("0", core::rules::max_fps) == 0);
  CHECK(core::parse_int("1000", core::rules::max_fps) == 1000);
  CHECK(refusal([] { core::parse_int("-2", core::rules::device); }) ==
        "--device -2: the Vulkan device index must be -1..1023 (-1: the best device)");
}

TEST_CASE("parse_real: finite numbers in range only") {
  CHECK(core::parse_real("0.001", core::rules::lr) == doctest::Approx(0.001));
  CHECK(core::parse_real("1e-3", core::rules::lr) == doctest::Approx(0.001));
  CHECK(core::parse_real("0", core::rules::weight_decay) == 0);
  for (const char* bad : {"nan", "NaN", "-nan", "inf", "-inf", "infinity"}) {
    CAPTURE(bad);
    CHECK(refusal([&] { core::parse_real(bad, core::rules::momentum); }).find("not a finite number") !=
          std::string::npos);
  }
  CHECK(refusal([] { core::parse_real("-0.01", core::rules::weight_decay); }) ==
        "--weight-decay -0.01: the decoupled weight decay must be in [0, 1]");
  CHECK(refusal([] { core::parse_real("1", core::rules::momentum); }) == "--momentum 1: SGD momentum must be in [0, 1)");
  CHECK(refusal([] { core::parse_real("0", core::rules::lr); }) ==
        "--lr 0: the learning rate must be a number > 0 and <= 10");
  CHECK(refusal([] { core::parse_real("", core::rules::font_size); }).rfind("--font-size: the value is empty", 0) == 0);
  CHECK(refusal([] { core::parse_real("1e999", core::rules::loss_scale); }).find("out of range") != std::string::npos);
  CHECK(refusal([] { core::parse_real("0.5", core::rules::loss_scale); }) ==
        "--loss-scale 0.5: the initial fp16 loss scale must be a finite number >= 1 (default 65536)");
  CHECK(refusal([] { core::parse_real("0x10", core::rules::font_size); }).find("not a number") != std::string::npos);
}

TEST_CASE("parse_seed: 0..2^64-1 without saturation") {
  CHECK(core::parse_seed("0") == 0);
  CHECK(core::parse_seed("18446744073709551615") == std::numeric_limits<uint64_t>::max());
  CHECK(refusal([] { core::parse_seed("18446744073709551616"); }).rfind("--seed 18446744073709551616: too large", 0) ==
        0);
  CHECK(refusal([] { core::parse_seed("-1"); }).find("negative") != std::string::npos);
  CHECK(refusal([] { core::parse_seed(""); }).rfind("--seed: the value is empty", 0) == 0);
  CHECK(refusal([] { core::parse_seed("42abc"); }).find("not a whole number") != std::string::npos);
}

TEST_CASE("validate: the same rules for a TrainConfig from the dashboard or a script") {
  core::validate(core::TrainConfig{});
  auto refused = [](auto change) {
    core::TrainConfig c;
    change(c);
    return refusal([&] { core::validate(c); });
  };
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // Before the fix: -0.01 trained with the optimizer's 0.01 (negative meant "default"), NaN passed every check.
  CHECK(refused([](core::TrainConfig& c) { c.weight_decay = -0.01f; }).rfind("--weight-decay -0.01:", 0) == 0);
  CHECK(refused([&](core::TrainConfig& c) { c.weight_decay = nan; }).rfind("--weight-decay nan:", 0) == 0);
  CHECK(refused([&](core::TrainConfig& c) { c.momentum = nan; }).rfind("--momentum nan:", 0) == 0);
  CHECK(refused([&](core::TrainConfig& c) { c.spiral_noise = nan; }).rfind("--spiral-noise nan:", 0) == 0);
  CHECK(refused([&](core::TrainConfig& c) { c.lr = std::numeric_limits<float>::infinity(); }).rfind("--lr inf:", 0) ==
        0);
  CHECK(refused([](core::TrainConfig& c) { c.batch = 0; }) == "--batch 0: the batch size must be 1..65536");
  CHECK(refused([](core::TrainConfig& c) { c.threads = -1; }).rfind("--threads -1:", 0) == 0);
  CHECK(refused([](core::TrainConfig& c) { c.device = -2; }).rfind("--device -2:", 0) == 0);
  CHECK(refused([](core::TrainConfig& c) { c.hidden = {64, 0}; }).rfind("--hidden 0:", 0) == 0);
  core::TrainConfig sgd;
  sgd.optimizer = core::Optimizer::SGD;
  CHECK(sgd.effective_weight_decay() == 0.0f);
  sgd.weight_decay = 0.5f;
  core::validate(sgd);
  CHECK(sgd.effective_weight_decay() == 0.5f);
}
