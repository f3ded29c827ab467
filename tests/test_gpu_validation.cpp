// What `--validation` prints: every distinct message of the validation layer once, with its count, and the totals
// (vk::validation_totals, vk::describe_validation). A real layer message is provoked on purpose: a buffer of size 0
// (VUID-VkBufferCreateInfo-size-00912), so this suite does not use ValidationWatch.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "gpu_test_util.hpp"
#include "vk/device.hpp"

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
