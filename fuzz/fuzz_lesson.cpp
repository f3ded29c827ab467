// libFuzzer target: ui::parse_lesson, the lesson script parser (dashboard --script). Any text is either a lesson
// or one core::Error(InvalidArgument) of one line naming the file; anything else (a crash, a sanitizer report,
// another exception) is a finding. scripts/fuzz runs it in a scratch folder, because a lesson's screenshot paths
// are checked by creating (and removing) a probe file beside them. Seeds: fuzz/corpus/lesson.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/error.hpp"
#include "ui/lesson.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const ui::Lesson lesson = ui::parse_lesson(text, "fuzz.json");
    if (lesson.steps.empty()) std::abort();  // parse_lesson refuses a lesson without steps
  } catch (const core::Error& e) {
    const std::string message = e.what();
    if (e.kind() != core::ErrorKind::InvalidArgument) std::abort();
    if (message.rfind("fuzz.json", 0) != 0 || message.find('\n') != std::string::npos) std::abort();
  }
  return 0;
}
