// Lesson files as hostile input (issue 25, item 18 and 19): a key given twice in one object is refused, not silently
// the last one; a 300 KB unknown key gives a short one-line message, not a 300 KB one (both as ui::parse_lesson says).
#include <doctest/doctest.h>

#include <optional>
#include <string>

#include "core/error.hpp"
#include "ui/lesson.hpp"

namespace {

std::string refusal(const std::string& text) {
  try {
    ui::parse_lesson(text, "l.json");
  } catch (const core::Error& e) {
    CHECK(e.kind() == core::ErrorKind::InvalidArgument);
    return e.what();
  }
  FAIL_CHECK("not refused: " << text.substr(0, 200));
  return "";
}

}  // namespace

TEST_CASE("a key given twice in one object is refused, naming it (JSON would keep the last one silently)") {
  CHECK(refusal(R"({"title": "t", "title": "u", "steps": [{"quit": 0}]})") ==
        "l.json: \"title\" is given twice in one object; give each key once");
  CHECK(refusal(R"({"title": "t", "steps": [{"set": {"batch": 32, "batch": 64}}]})").find("\"batch\" is given twice") !=
        std::string::npos);
  // The same key in two different objects is not a repetition.
  CHECK_NOTHROW(
      ui::parse_lesson(R"({"title": "t", "steps": [{"set": {"batch": 32}}, {"set": {"batch": 64}}]})", "l.json"));
}

TEST_CASE("a 300 KB unknown key is named in a short line; a key with a line break stays on one line") {
  const std::string key(300 * 1024, 'k');
  const std::string why = refusal(R"({"title": "t", "steps": [{"quit": 0}], ")" + key + R"(": 1})");
  CHECK(why.size() < 400);
  CHECK(why.find("\"kkkkkkkkkk") != std::string::npos);
  CHECK(why.find("...\": unknown key") != std::string::npos);
  const std::string broken = refusal(R"({"title": "t", "steps": [{"quit": 0}], "a\nb": 1})");
  CHECK(broken.find('\n') == std::string::npos);
  CHECK(broken.find("a\\nb") != std::string::npos);
}

TEST_CASE("a lesson's bad window.size is said as the lesson's key, not as --size") {
  // Issue 34: "--size 99999x10: give WIDTHxHEIGHT ..." for a lesson file that names no --size.
  CHECK(refusal(R"({"title": "t", "window": {"size": "99999x10"}, "steps": [{"quit": 0}]})") ==
        "l.json: \"window.size\": give WIDTHxHEIGHT in pixels, each 64..16384, e.g. 1600x900, not \"99999x10\"");
  CHECK(refusal(R"({"title": "t", "window": {"size": "big"}, "steps": [{"quit": 0}]})").find("\"window.size\"") == 8);
  CHECK(ui::parse_lesson(R"({"title": "t", "window": {"size": "1280x720"}, "steps": [{"quit": 0}]})", "l.json").size ==
        std::optional<std::string>("1280x720"));
}
