// The figures that the race header and the lessons' claims both show, formatted once, so that a claim never
// words a number differently from the screen it talks about. Window-free (no ImGui).
#pragma once
#include <string>

namespace ui {

// The speedup (GPU samples/s / CPU samples/s) as the header's big figure and a lesson claim's speedup: "12x" from 10
// up, "2.50x" from 0.1, "0.042x" below, and "<0.001x" where three decimals would read "0.000x" (a GPU hundreds of
// thousands of times slower: a stalled or throttled device) rather than a figure of none.
std::string speedup_figure(double speedup);

// "the GPU is 2.5x as fast" / "the CPU is 24.0x as fast" for a speedup s > 0 (the CPU's factor is 1 / s); from 100x
// up without decimals ("the CPU is 277474x as fast"), whose tenths say nothing there. short_form: "GPU 2.5x as fast"
// (a narrow header).
std::string as_fast_text(double speedup, bool short_form = false);

}  // namespace ui
