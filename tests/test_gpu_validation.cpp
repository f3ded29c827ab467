// What `--validation` prints: every distinct message of the validation layer once, with its count, and the totals
// (vk::validation_totals, vk::describe_validation); that any message fails the run (vk::validation_failed); that
// synchronization validation is on; and the device extensions a portability device needs. Real layer messages are
// provoked on purpose (a buffer of size 0, VUID-VkBufferCreateInfo-size-00912; two unordered writes of one buffer),
// so this suite does not use ValidationWatch.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "gpu_test_util.hpp"
#include "vk/device.hpp"
#include "vk/setup.hpp"

TEST_CASE("describe_validation: totals, then each distinct message once with its count") {
  CHECK(vk::describe_validation({}) == "Vulkan validation: no errors, no warnings\n");
  vk::ValidationTotals t;
  t.errors = 3;
  t.warnings = 1;
  t.distinct = {{true, "VUID-A", "first text of A", 3}, {false, "BestPractices-B", "text of B", 1}};
  CHECK(vk::describe_validation(t) ==
        "Vulkan validation: 3 errors, 1 warning (2 distinct messages)\n"
        "  [error] 3x VUID-A: first text of A\n"
        "  [warning] 1x BestPractices-B: text of B\n");
  t.errors = 10;  // more than the kinds kept account for
  CHECK(vk::describe_validation(t).find("... and 7 more of further kinds") != std::string::npos);
}

TEST_CASE("the same layer message five times is one distinct message with count 5") {
  auto ctx = test::make_context("validation message counting");
  if (!ctx) return;
  const std::string id = "VUID-VkBufferCreateInfo-size-00912";
  auto count_of = [&] {
    const vk::ValidationTotals t = vk::validation_totals();
    auto it = std::find_if(t.distinct.begin(), t.distinct.end(), [&](const auto& m) { return m.id == id; });
    return it == t.distinct.end() ? 0L : it->count;
  };
  const long before = count_of();
  const size_t kinds_before = vk::validation_totals().distinct.size();
  for (int i = 0; i < 5; ++i) {
    VkBufferCreateInfo bi{};
    bi.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
    bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
    bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    VkBuffer buffer = VK_NULL_HANDLE;
    if (vkCreateBuffer(ctx->device(), &bi, nullptr, &buffer) == VK_SUCCESS && buffer != VK_NULL_HANDLE)
      vkDestroyBuffer(ctx->device(), buffer, nullptr);
  }
  CHECK(count_of() == before + 5);
  const vk::ValidationTotals t = vk::validation_totals();
  CHECK(t.distinct.size() <= kinds_before + 1);  // one kind, however often it came
  const std::string text = vk::describe_validation(t);
  MESSAGE(text);
  CHECK(text.find("[error] " + std::to_string(before + 5) + "x " + id + ": ") != std::string::npos);
}

TEST_CASE("--validation fails a run on any message, error or warning") {
  std::string why;
  CHECK_FALSE(vk::validation_failed({}, &why));
  CHECK(why.empty());
  vk::ValidationTotals t;
  t.warnings = 1;
  CHECK(vk::validation_failed(t, &why));
  CHECK(why == "the Vulkan validation layer reported 0 errors and 1 warning (listed above); a run under --validation "
               "fails on any message");
  t.errors = 2;
  CHECK(vk::validation_failed(t));
}

TEST_CASE("synchronization validation is on: two writes of one buffer without a barrier are a reported hazard") {
  auto ctx = test::make_context("synchronization validation");
  if (!ctx) return;
  vk::Buffer buffer(*ctx, 256, vk::MemoryKind::DeviceLocal, "hazard");
  const int before = ctx->validation_log().errors.load();
  // WAW: the second fill is not ordered after the first by any barrier (the default checks cannot see this).
  ctx->run_one_shot([&](VkCommandBuffer cmd) {
    vkCmdFillBuffer(cmd, buffer.handle(), 0, VK_WHOLE_SIZE, 1);
    vkCmdFillBuffer(cmd, buffer.handle(), 0, VK_WHOLE_SIZE, 2);
  });
  const int reported = ctx->validation_log().errors.load() - before;
  CHECK(reported >= 1);
  bool hazard = false;
  for (const auto& m : vk::validation_totals().distinct) hazard |= m.id.find("SYNC-HAZARD-WRITE-AFTER-WRITE") == 0;
  CHECK_MESSAGE(hazard, "no SYNC-HAZARD-WRITE-AFTER-WRITE among the layer's messages");
}

TEST_CASE("device extensions: the requested ones, and VK_KHR_portability_subset wherever the device exposes it") {
  const std::vector<std::string> swapchain{"VK_KHR_swapchain"};
  auto has = [](std::vector<std::string> exposed) {
    return [exposed](const char* e) { return std::find(exposed.begin(), exposed.end(), e) != exposed.end(); };
  };
  CHECK(vk::device_extensions_to_enable(swapchain, has({"VK_KHR_swapchain"}), "GPU") == swapchain);
  CHECK(vk::device_extensions_to_enable({}, has({"VK_KHR_portability_subset", "VK_KHR_swapchain"}), "MoltenVK") ==
        std::vector<std::string>{"VK_KHR_portability_subset"});
  CHECK(vk::device_extensions_to_enable(swapchain, has({"VK_KHR_portability_subset", "VK_KHR_swapchain"}), "M") ==
        std::vector<std::string>{"VK_KHR_swapchain", "VK_KHR_portability_subset"});
  try {
    vk::device_extensions_to_enable(swapchain, has({}), "GPU 0");
    FAIL("a missing extension was accepted");
  } catch (const vk::Error& e) {
    CHECK(e.failure() == vk::Failure::MissingExtension);
    CHECK(std::string(e.what()) == "Vulkan: device GPU 0 lacks the extension VK_KHR_swapchain");
  }
}
