// The key under the Roofline tab's chart: the legend, the numbers of the kernels not named beside their dots and
// the note, in small type flowing onto rows (split from panel_roofline.cpp, which draws the chart).
#pragma once
#include <string>
#include <utility>
#include <vector>

#include <imgui.h>

namespace ui::roofline_key {

using KeyEntry = std::pair<std::string, ImU32>;  // a text and its colour

// The key's entries ("3 matmul_backward_data") by family, shorter: "matmul: 2 forward, 3 backward_data" (a kernel whose
// family has no other member in the key keeps its whole name). Families: the name less its pass suffix.
std::vector<std::string> grouped_key(const std::vector<std::string>& key);

// The key's entries ("4 loss_reduce") flowing onto rows `width` pixels wide at `size` pixels, never broken inside an
// entry: the rows they take (key_rows), and drawn so at the cursor, `row` pixels apart (draw_key).
int key_rows(const std::vector<KeyEntry>& key, float size, float width);
void draw_key(const std::vector<KeyEntry>& key, float size, float row);

}  // namespace ui::roofline_key
