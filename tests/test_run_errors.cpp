// Vulkan failures as the user meets them: the vk layer's errors carry their kind, the VkResult and the size asked for,
// and say nothing of the command line; run::explain adds the option that helps, once.
#include <doctest/doctest.h>

#include <string>

#include "gpu_test_util.hpp"
#include "run/explain.hpp"
#include "vk/buffer.hpp"
#include "vk/context.hpp"
#include "vk/error.hpp"
#include "vk/setup.hpp"

namespace {

vk::Error caught(VkResult r) {
  try {
    vk::check(r, "vkQueueSubmit (training step)");
  } catch (const vk::Error& e) {
    return e;
  }
  FAIL("vk::check did not throw");
  return vk::Error(vk::Failure::CallFailed, "");
}

}  // namespace

TEST_CASE("vk::check: the kind and the VkResult, no command-line advice; run::explain adds it once") {
  const vk::Error oom = caught(VK_ERROR_OUT_OF_DEVICE_MEMORY);
  CHECK(oom.failure() == vk::Failure::OutOfMemory);
  CHECK(oom.result() == VK_ERROR_OUT_OF_DEVICE_MEMORY);
  CHECK(oom.kind() == core::ErrorKind::Vulkan);
  CHECK(std::string(oom.what()) == "Vulkan: vkQueueSubmit (training step) failed: VK_ERROR_OUT_OF_DEVICE_MEMORY");
  CHECK(run::explain(oom) == std::string(oom.what()) + " (try a smaller --batch or smaller --hidden sizes)");
  CHECK(run::explain(oom, run::Doing::Rendering) == std::string(oom.what()) + " (try a smaller --size)");
  // A hint is added once: a caller that already advised keeps its advice.
  const vk::Error hinted = oom.with_hint("try a smaller --size");
  CHECK(hinted.hint() == "try a smaller --size");
  CHECK(run::explain(hinted) == std::string(hinted.what()));
  CHECK(hinted.failure() == vk::Failure::OutOfMemory);

  const vk::Error lost = caught(VK_ERROR_DEVICE_LOST);
  CHECK(lost.failure() == vk::Failure::DeviceLost);
  CHECK(run::explain(lost).find("the CPU backend keeps running") != std::string::npos);
  const vk::Error other = caught(VK_ERROR_INITIALIZATION_FAILED);
  CHECK(other.failure() == vk::Failure::CallFailed);
  CHECK(run::explain(other) == std::string(other.what()));

  CHECK(run::explain(vk::Error(vk::Failure::MissingLayer, "Vulkan: no layer")).find("--validation") !=
        std::string::npos);
  CHECK(run::explain(vk::Error(vk::Failure::DeviceIndex, "Vulkan: no device 3")).find("--device") != std::string::npos);
  CHECK(vk::Error(vk::Failure::DeviceIndex, "x").kind() == core::ErrorKind::InvalidArgument);
  CHECK(run::explain(core::Error(core::ErrorKind::Data, "a corrupt file")) == "a corrupt file");
}

TEST_CASE("an allocation the device cannot hold: refused with the bytes asked for, the buffer named") {
  if (!test::vulkan_device_or_skip("the out-of-memory allocation")) return;
  vk::Context ctx(vk::ContextOptions{-1, false});  // no validation: the layer rightly objects to a size above the heap
  const VkDeviceSize bytes = VkDeviceSize(1) << 50;  // 1 PiB
  try {
    vk::Buffer b(ctx, bytes, vk::MemoryKind::DeviceLocal, "x_batch");
    FAIL("1 PiB was allocated");
  } catch (const vk::Error& e) {
    // Past the device's maxBufferSize, refused before the driver is asked (the driver's own out-of-memory, which a
    // smaller buffer meets, is injected in test_run_faults and test_gpu_split_k).
    CHECK(e.failure() == vk::Failure::Limit);
    CHECK(std::string(e.what()).find("(maxBufferSize ") != std::string::npos);
    CHECK(e.bytes() >= bytes);
    const std::string what = e.what();
    CHECK(what.find("x_batch") != std::string::npos);
    CHECK(what.find("1048576.0 GiB") != std::string::npos);
    CHECK(what.find("--") == std::string::npos);  // the vk layer knows no command line
    CHECK(run::explain(e).find("--batch") != std::string::npos);
  }
}
