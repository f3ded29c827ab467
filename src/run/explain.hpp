// run::explain: an error's message for the user, with what the command line can do about a Vulkan failure. The vk
// layer says what failed (vk::Error: its kind, VkResult and size); this is the one place that knows which option of
// `trainscope train` / `dashboard` helps.
#pragma once
#include <exception>
#include <string>

namespace run {

// What was being done when the error came: the hint for running out of memory depends on it.
enum class Doing {
  Training,   // a trainer's buffers: a smaller --batch or --hidden
  Rendering,  // the dashboard's frame: a smaller --size
};

// e.what(), and for a vk::Error the hint of its kind, e.g. "... (try a smaller --batch or smaller --hidden sizes)".
// Nothing is added to other errors, or to a vk::Error that already carries a hint.
std::string explain(const std::exception& e, Doing doing = Doing::Training);

}  // namespace run
