// Shared by the tests that start the program under `xvfb-run` (test_app_dashboard, test_app_device_loss,
// test_app_lesson_plays, test_app_presenter_keys): the start of the command, with a display number of the test's own.
#pragma once
#include <string>

#include "platform/files.hpp"

namespace test {

// "xvfb-run -a -n N": -a takes the first display from N up whose lock file (/tmp/.XN-lock) is missing, and fails when
// another xvfb-run takes the same one between that look and its Xvfb's start (two of them from the default 99 at
// once). Each test process starts its search at a number of its own (200 + its process id modulo 500, above the
// default 99 that test_ui_window's xvfb-run starts from), so that these tests can run side by side under ctest -j.
inline std::string xvfb_run() { return "xvfb-run -a -n " + std::to_string(200 + platform::process_id() % 500); }

}  // namespace test
