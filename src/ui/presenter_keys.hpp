// ui::PresenterKeys: what the teacher's keys mean in the dashboard (a presentation clicker sends Space, the arrows,
// Page Up/Down, B or '.'), the state they toggle (a blank screen, the help overlay, the question before quitting a
// lesson) and the overlays that show it. The window queues the presses from GLFW's key callbacks (ui::Window::
// take_keys), so a press and release that both fall inside one slow frame still count: ImGui 1.86's polled key state
// loses them (95 of 100 taps of 20 ms at --max-fps 2).
#pragma once
#include <string>
#include <vector>

namespace ui {

// A key the dashboard acts on, whatever the keyboard layout (the window maps the physical keys).
enum class Key {
  Next,        // Space, Right, Page Down
  Back,        // Left, Page Up
  Blank,       // B or '.' (what clickers send for "blank screen")
  FullScreen,  // F11
  Pause,       // P
  Quit,        // Esc or Q
  Help,        // '?' or F1
};

// What the dashboard is asked to do after a key.
enum class KeyAction { None, Next, Back, TogglePause, ToggleFullScreen, Quit };

struct KeyHelpLine {
  std::string keys;  // "Space, Right, Page Down"
  std::string does;  // "next point of the lesson"
};
// The keys and what they do, for the help overlay, --help and the README.
const std::vector<KeyHelpLine>& key_help();

class PresenterKeys {
 public:
  // `lesson`: a lesson plays (then Esc or Q asks before quitting, and Next/Back move the lesson).
  explicit PresenterKeys(bool lesson) : lesson_(lesson) {}

  // One key press, in the order pressed. While the screen is blank, Next, Back and B bring it back (without moving
  // the lesson: the teacher sees where they are first). While the quit question shows, Esc or Q quits and any other
  // key answers "stay". Esc closes the help overlay before it quits anything.
  KeyAction press(Key key);

  bool blank() const { return blank_; }
  bool help() const { return help_; }
  bool asking_to_quit() const { return asking_to_quit_; }

  // Inside an ImGui frame, after everything else: the blank screen, the help overlay, the quit question (its buttons
  // answer it: KeyAction::Quit, or None).
  KeyAction draw();

 private:
  bool lesson_;
  bool blank_ = false;
  bool help_ = false;
  bool asking_to_quit_ = false;
};

}  // namespace ui
