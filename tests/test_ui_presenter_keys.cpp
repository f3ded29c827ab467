// What the teacher's keys do (ui::PresenterKeys), without a window: the blank screen, the help overlay and the
// question before quitting a lesson, and the key list the help overlay, --help and the README show.
#include <doctest/doctest.h>

#include <algorithm>

#include "ui/presenter_keys.hpp"

using ui::Key;
using ui::KeyAction;

TEST_CASE("presenter keys: next and back pass through; P, F11 and a quit outside a lesson act at once") {
  ui::PresenterKeys keys(false);
  CHECK(keys.press(Key::Next) == KeyAction::Next);
  CHECK(keys.press(Key::Next) == KeyAction::Next);  // every press counts, none is merged
  CHECK(keys.press(Key::Back) == KeyAction::Back);
  CHECK(keys.press(Key::Pause) == KeyAction::TogglePause);
  CHECK(keys.press(Key::FullScreen) == KeyAction::ToggleFullScreen);
  CHECK(keys.press(Key::Quit) == KeyAction::Quit);
  CHECK_FALSE(keys.asking_to_quit());
}

TEST_CASE("presenter keys: a lesson asks before quitting; the second Esc or Q quits, any other key stays") {
  ui::PresenterKeys keys(true);
  CHECK(keys.press(Key::Quit) == KeyAction::None);
  CHECK(keys.asking_to_quit());
  CHECK(keys.press(Key::Next) == KeyAction::None);  // "stay": the answer is not also a next
  CHECK_FALSE(keys.asking_to_quit());
  CHECK(keys.press(Key::Next) == KeyAction::Next);
  CHECK(keys.press(Key::Quit) == KeyAction::None);
  CHECK(keys.press(Key::Quit) == KeyAction::Quit);
}

TEST_CASE("presenter keys: B blanks the screen; Space, Left or B brings it back without moving the lesson") {
  ui::PresenterKeys keys(true);
  CHECK(keys.press(Key::Blank) == KeyAction::None);
  CHECK(keys.blank());
  CHECK(keys.press(Key::Next) == KeyAction::None);
  CHECK_FALSE(keys.blank());
  CHECK(keys.press(Key::Blank) == KeyAction::None);
  CHECK(keys.press(Key::Back) == KeyAction::None);
  CHECK_FALSE(keys.blank());
  CHECK(keys.press(Key::Blank) == KeyAction::None);
  CHECK(keys.press(Key::Pause) == KeyAction::TogglePause);  // the other keys work on a blank screen
  CHECK(keys.blank());
  CHECK(keys.press(Key::Blank) == KeyAction::None);
  CHECK_FALSE(keys.blank());
}

TEST_CASE("presenter keys: ? opens the help, ? or Esc closes it (Esc then does not quit)") {
  ui::PresenterKeys keys(false);
  CHECK(keys.press(Key::Help) == KeyAction::None);
  CHECK(keys.help());
  CHECK(keys.press(Key::Next) == KeyAction::Next);  // the help stays over a lesson that moves on
  CHECK(keys.press(Key::Quit) == KeyAction::None);
  CHECK_FALSE(keys.help());
  CHECK(keys.press(Key::Help) == KeyAction::None);
  CHECK(keys.press(Key::Help) == KeyAction::None);
  CHECK_FALSE(keys.help());
  // Every key the window maps is in the help.
  const auto& help = ui::key_help();
  for (const char* k : {"Space", "Right", "Page Down", "Left", "Page Up", "B", "P", "F11", "F12", "?", "Esc", "Q"})
    CHECK_MESSAGE(std::any_of(help.begin(), help.end(),
                              [&](const ui::KeyHelpLine& l) { return l.keys.find(k) != std::string::npos; }),
                  k);
}
