// Text that never leaves its box: shortened with an ellipsis to a width in pixels of the current ImGui font, and
// single lines built from the pieces that fit. Every panel of the dashboard draws its one-line texts through these,
// so that nothing is cut at a panel's edge or wraps into a taller layout at large font sizes.
#pragma once
#include <imgui.h>

#include <string>
#include <string_view>
#include <vector>

namespace ui {

// `text` as drawn in `width` pixels of the current font: unchanged when it fits, else cut at a character boundary
// (UTF-8 aware) with "…" appended; "" when not even "…" fits. Requires a current ImGui frame (or font atlas).
std::string fit_text(std::string_view text, float width);

// Like fit_text, but cut in the middle ("matmul_…_weight"), for names whose end tells them apart.
std::string fit_text_middle(std::string_view text, float width);

// `text` in lines of at most `width` pixels of the current font at `size` pixels, broken at spaces (and at '\n'),
// never inside a word: a word wider than a whole line is shortened with "…". At most `max_lines` lines: when text is
// left over, the last line ends with "…" (words giving way to it). Only the text that can be shown is measured, so a
// caption of 20,000 characters costs what its first lines cost. Requires a current ImGui frame (or font atlas).
std::vector<std::string> wrap_words(std::string_view text, float size, float width, int max_lines);

// The first pieces, joined by `separator`, as many as fit in `width` (at least the first, shortened if needed).
std::string fit_pieces(const std::vector<std::string>& pieces, float width, std::string_view separator = "   ");

// Before an item `width` pixels wide that follows the previous one: on the same line (`spacing` after it; < 0: the
// style's) when it fits in the available width, else at the start of the next line (a row of controls flows onto two
// lines in a narrow panel instead of leaving it).
void same_line_if_fits(float width, float spacing = -1);

// The width a combo adds to its preview's text: the arrow and the frame padding on both sides.
float combo_chrome_width();

// The width of a button with `label` (its text and frame padding), of a checkbox or radio button with `label`.
float button_width(const char* label);
float checkbox_width(const char* label);

// One line of text in `color` (0: the style's text colour), shortened to the available width (or `width` > 0), that
// never wraps; when it was shortened, hovering it shows the whole text.
void text_line(const std::string& text, ImU32 color = 0, float width = 0);

// `text` in lines of whole words (wrap_words: never broken inside a word such as "0.085x", unlike ImGui's own
// wrapping, which breaks after a '.') across the available width, at most `max_lines` and no more than the height left
// (at least one); when it had to be cut, the last
// line ends with "…" and hovering it shows the whole text. Returns the lines drawn.
int text_lines(const std::string& text, int max_lines, ImU32 color = 0);

// `text` in as many lines of whole words as it takes across the available width (wrap_words; '\n' starts a line), in
// `color` (0: the style's text colour): ImGui::TextWrapped's place where a number must stay whole ("67.1k" broke as
// "67." and "1k" in a lesson's summary slide). For text a table row or a scrolling window has room for.
void text_wrapped(const std::string& text, ImU32 color = 0);

// How many lines text_lines(text, max_lines) takes at the available width.
int text_lines_needed(const std::string& text, int max_lines);

// A tooltip of `text` wrapped at `width_em` font sizes (call it when the item it explains is hovered).
void wrapped_tooltip(const std::string& text, float width_em = 34.0f);

}  // namespace ui
