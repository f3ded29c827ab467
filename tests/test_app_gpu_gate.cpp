// The command line against the device's limits and the validation layer, as a user meets them:
//   - one full epoch of Fashion-MNIST on the GPU under the validation layer (synchronization validation included):
//     batch 4096, so 14 steps, and the 188 MB training set bound past lavapipe's 128 MiB maxStorageBufferRange
//     (gathered in chunks): not one message, exit 0 (--hidden 16 keeps it to seconds; the GEMMs are not what it
//     tests);
//   - a run in which the layer reports something exits 1 and says why (TRAINSCOPE_INJECT_FAULT=validation-message);
//   - a batch whose activations no device binding can hold is refused before training, naming the limit (exit 2);
//   - a bad TRAINSCOPE_DEVICE_PROFILE is one line, exit 2.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>

#include "cli_test_util.hpp"
#include "core/dataset.hpp"
#include "gpu_test_util.hpp"

namespace {

// Sets an environment variable for the lifetime of the object (the spawned trainscope inherits it).
struct EnvVar {
  EnvVar(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) saved_ = old;
    platform::set_env(name, value);
  }
  ~EnvVar() {
    if (saved_) platform::set_env(name_, *saved_);
    else platform::unset_env(name_);
  }
  EnvVar(const EnvVar&) = delete;
  EnvVar& operator=(const EnvVar&) = delete;
  const char* name_;
  std::optional<std::string> saved_;
};

}  // namespace

TEST_CASE("--validation as a gate: a full Fashion-MNIST epoch past lavapipe's storage range, then a run with a message") {
  if (!test::vulkan_device_or_skip("the validation gate")) return;
  if (!std::filesystem::exists(core::kDefaultFashionMnistDir)) {
    test::skip("the Fashion-MNIST epoch under validation", "Debian's dataset-fashion-mnist is not installed");
  } else {
    const test::Result r = test::run_cli({"train", "--backend", "gpu", "--validation", "--epochs", "1", "--batch",
                                          "4096", "--hidden", "16"});
    INFO("stdout: " << r.out << "\nstderr: " << r.err);
    CHECK(r.code == 0);
    CHECK(r.out.find("13 steps timed with Vulkan timestamp queries") != std::string::npos);  // 14, 1 warm-up
    CHECK(r.out.find("Vulkan validation: no errors, no warnings") != std::string::npos);
  }
  const EnvVar fault("TRAINSCOPE_INJECT_FAULT", "validation-message");
  const test::Result r = test::run_cli({"train", "--dataset", "spiral", "--backend", "gpu", "--epochs", "1",
                                        "--spiral-points", "64", "--hidden", "8", "--batch", "32", "--validation"});
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.code == 1);
  CHECK(r.out.find("[error] 1x VUID-VkBufferCreateInfo-size-00912") != std::string::npos);
  CHECK(r.err.find("trainscope: error: the Vulkan validation layer reported 1 error and 0 warnings (listed above); a "
                   "run under --validation fails on any message") != std::string::npos);
}

TEST_CASE("a batch past the device's storage range is refused before training, naming the limit and what to change") {
  if (!test::vulkan_device_or_skip("the device-limit refusal")) return;
  // 60000 x 18000 fp32 activations: 4.32 GB, past every device's binding (lavapipe's is 128 MiB), though within the
  // 16 GiB cap on the whole model.
  const test::Result r = test::run_cli({"train", "--dataset", "spiral", "--spiral-points", "20000", "--backend", "gpu",
                                        "--epochs", "1", "--batch", "60000", "--hidden", "18000"});
  INFO("stderr: " << r.err);
  CHECK(r.code == 2);
  CHECK(r.out.find("epoch 1/1") == std::string::npos);  // nothing trained
  CHECK(r.err.rfind("trainscope: error: --batch 60000 needs a 4.32 GB buffer for layer 1's activations (60000 x 18000 "
                    "fp32); ",
                    0) == 0);
  CHECK(r.err.find("(maxStorageBufferRange): use --batch <= ") != std::string::npos);
}

TEST_CASE("TRAINSCOPE_DEVICE_PROFILE: a built-in profile shows in the device's name, a bad one is one line") {
  if (!test::vulkan_device_or_skip("device profiles on the command line")) return;
  {
    const EnvVar profile("TRAINSCOPE_DEVICE_PROFILE", "spec-min");
    const test::Result r = test::run_cli({"devices"});
    CHECK(r.code == 0);
    CHECK(r.out.find("device profile spec-min (TRAINSCOPE_DEVICE_PROFILE)") != std::string::npos);
    CHECK(r.out.find("max workgroup 128 invocations") != std::string::npos);
  }
  const EnvVar profile("TRAINSCOPE_DEVICE_PROFILE", "spec-minimum");
  const test::Result r = test::run_cli({"train", "--dataset", "spiral", "--backend", "gpu", "--epochs", "1"});
  CHECK(r.code == 2);
  CHECK(r.err == "trainscope: error: TRAINSCOPE_DEVICE_PROFILE: 'spec-minimum' is neither a built-in profile "
                 "(spec-min, desktop-discrete) nor a file\n");
}
