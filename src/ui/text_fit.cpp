// Shortening text to a width in pixels.
#include "ui/text_fit.hpp"

#include <algorithm>
#include <cfloat>

namespace ui {
namespace {

// wrap_words' line limit for text shown whole (a table cell, a tooltip): more than any of them has.
constexpr int kAllLines = 1 << 16;

// `lines` as one group (one item to hover), in `color` (0: the style's text colour); tight: as close as ImGui's own
// wrapped text sets its lines (no item spacing between them), else a line height with spacing each (text_lines,
// which counts the room it has in those).
void draw_lines(const std::vector<std::string>& lines, ImU32 color, bool tight) {
  if (color != 0) ImGui::PushStyleColor(ImGuiCol_Text, color);
  if (tight) ImGui::PushStyleVar(ImGuiStyleVar_ItemSpacing, ImVec2(ImGui::GetStyle().ItemSpacing.x, 0));
  ImGui::BeginGroup();
  for (const std::string& line : lines) ImGui::TextUnformatted(line.c_str());
  ImGui::EndGroup();
  if (tight) ImGui::PopStyleVar();
  if (color != 0) ImGui::PopStyleColor();
}

// "…" when the font has the glyph (DejaVu), else "..." (ImGui's built-in font has no U+2026).
const char* ellipsis() {
  ImFont* font = ImGui::GetFont();
  return font && font->FindGlyphNoFallback(0x2026) ? "\xE2\x80\xA6" : "...";
}

float width_of(std::string_view s) { return ImGui::CalcTextSize(s.data(), s.data() + s.size()).x; }

float width_at(std::string_view s, float size) {
  return ImGui::GetFont()->CalcTextSizeA(size, FLT_MAX, 0.0f, s.data(), s.data() + s.size()).x;
}

// The longest prefix of `word` (at a UTF-8 boundary) that fits `width` at `size` with "…" after it, and the "…".
std::string shorten_at(std::string_view word, float size, float width) {
  const std::string dots = ellipsis();
  size_t lo = 0, hi = word.size();  // binary search: a 20,000-byte word is measured about 15 times, not 20,000
  while (lo < hi) {
    size_t mid = (lo + hi + 1) / 2;
    while (mid > 0 && mid < word.size() && (static_cast<unsigned char>(word[mid]) & 0xC0) == 0x80) --mid;
    if (mid <= lo) break;
    if (width_at(std::string(word.substr(0, mid)) + dots, size) <= width)
      lo = mid;
    else
      hi = mid - 1;
  }
  while (lo > 0 && lo < word.size() && (static_cast<unsigned char>(word[lo]) & 0xC0) == 0x80) --lo;
  return std::string(word.substr(0, lo)) + dots;
}

}  // namespace

std::vector<std::string> wrap_words(std::string_view text, float size, float width, int max_lines) {
  std::vector<std::string> lines;
  if (max_lines <= 0 || width <= 0) return lines;
  const std::string dots = ellipsis();
  std::string line;
  size_t pos = 0;
  auto flush = [&] {
    lines.push_back(std::move(line));
    line.clear();
  };
  while (pos < text.size()) {
    while (pos < text.size() && text[pos] == ' ') ++pos;
    if (pos >= text.size()) break;
    if (text[pos] == '\n') {
      ++pos;
      if (static_cast<int>(lines.size()) + 1 >= max_lines) break;  // more lines than there is room for
      flush();
      continue;
    }
    size_t end = pos;
    while (end < text.size() && text[end] != ' ' && text[end] != '\n') ++end;
    const std::string_view word = text.substr(pos, end - pos);
    const std::string candidate = line.empty() ? std::string(word) : line + " " + std::string(word);
    if (width_at(candidate, size) <= width) {
      line = candidate;
      pos = end;
      continue;
    }
    if (line.empty()) {  // a word wider than the whole line: shortened, it takes the line
      line = shorten_at(word, size, width);
      pos = end;
    }
    if (static_cast<int>(lines.size()) + 1 >= max_lines) break;  // no line left for the rest
    flush();
  }
  // What is left: none (the last line is whole), or more text than lines: the last line gives way to "…".
  while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\n')) ++pos;
  if (pos < text.size()) {
    while (!line.empty() && width_at(line + " " + dots, size) > width) {
      const size_t space = line.rfind(' ');
      line = space == std::string::npos ? std::string() : line.substr(0, space);
    }
    line = line.empty() ? dots : line + " " + dots;
  }
  if (!line.empty()) flush();
  return lines;
}

std::string fit_text(std::string_view text, float width) {
  if (width_of(text) <= width) return std::string(text);
  const std::string dots = ellipsis();
  std::string out(text);
  while (!out.empty()) {
    out.pop_back();
    while (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xC0) == 0x80) out.pop_back();  // UTF-8 tail
    while (!out.empty() && out.back() == ' ') out.pop_back();
    if (width_of(out + dots) <= width) return out + dots;
  }
  return width_of(dots) <= width ? dots : std::string();
}

std::string fit_text_middle(std::string_view text, float width) {
  if (width_of(text) <= width) return std::string(text);
  const std::string dots = ellipsis();
  // Keep as much of both ends as fits, the end a little favoured (it tells matmul_backward_weight from _data).
  for (size_t keep = text.size(); keep-- > 1;) {
    size_t head = keep / 2, tail = keep - head;
    while (head > 0 && (static_cast<unsigned char>(text[head]) & 0xC0) == 0x80) --head;  // UTF-8 boundaries
    size_t from = text.size() - tail;
    while (from < text.size() && (static_cast<unsigned char>(text[from]) & 0xC0) == 0x80) ++from;
    const std::string out = std::string(text.substr(0, head)) + dots + std::string(text.substr(from));
    if (width_of(out) <= width) return out;
  }
  return fit_text(text, width);
}

std::string fit_pieces(const std::vector<std::string>& pieces, float width, std::string_view separator) {
  std::string line;
  for (const std::string& piece : pieces) {
    if (piece.empty()) continue;
    std::string next = line.empty() ? piece : line + std::string(separator) + piece;
    if (width_of(next) > width) return line.empty() ? fit_text(piece, width) : line;
    line = std::move(next);
  }
  return line;
}

void same_line_if_fits(float width, float spacing) {
  // Decided before SameLine: a SameLine followed by NewLine would count the abandoned position as content.
  const float sp = spacing < 0 ? ImGui::GetStyle().ItemSpacing.x : spacing;
  const float right = ImGui::GetCursorScreenPos().x + ImGui::GetContentRegionAvail().x;  // the line's right end
  if (ImGui::GetItemRectMax().x + sp + width <= right) ImGui::SameLine(0, sp);
}

float combo_chrome_width() { return ImGui::GetFrameHeight() + 2 * ImGui::GetStyle().FramePadding.x; }

float button_width(const char* label) {
  return ImGui::CalcTextSize(label, nullptr, true).x + 2 * ImGui::GetStyle().FramePadding.x;
}

float checkbox_width(const char* label) {
  return ImGui::GetFrameHeight() + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize(label, nullptr, true).x;
}

void text_line(const std::string& text, ImU32 color, float width) {
  const float w = width > 0 ? width : ImGui::GetContentRegionAvail().x;
  const std::string shown = fit_text(text, w);
  if (color != 0) ImGui::PushStyleColor(ImGuiCol_Text, color);
  ImGui::TextUnformatted(shown.c_str());
  if (color != 0) ImGui::PopStyleColor();
  if (shown != text && ImGui::IsItemHovered()) wrapped_tooltip(text, 30.0f);
}

int text_lines(const std::string& text, int max_lines, ImU32 color) {
  // No more lines than the height left (at least one): the text never makes its window scroll.
  const float line = ImGui::GetTextLineHeightWithSpacing();
  max_lines = std::max(
      1, std::min(max_lines,
                  static_cast<int>((ImGui::GetContentRegionAvail().y + ImGui::GetStyle().ItemSpacing.y) / line)));
  const std::vector<std::string> lines =
      wrap_words(text, ImGui::GetFontSize(), ImGui::GetContentRegionAvail().x, max_lines);
  if (lines.empty()) return 0;
  draw_lines(lines, color, false);
  const std::string& last = lines.back();
  const std::string dots = ellipsis();
  const bool cut = last.size() >= dots.size() && last.compare(last.size() - dots.size(), dots.size(), dots) == 0;
  if (cut && ImGui::IsItemHovered()) wrapped_tooltip(text, 30.0f);
  return static_cast<int>(lines.size());
}

void text_wrapped(const std::string& text, ImU32 color) {
  const std::vector<std::string> lines =
      wrap_words(text, ImGui::GetFontSize(), ImGui::GetContentRegionAvail().x, kAllLines);
  if (!lines.empty()) draw_lines(lines, color, true);
}

int text_lines_needed(const std::string& text, int max_lines) {
  return static_cast<int>(wrap_words(text, ImGui::GetFontSize(), ImGui::GetContentRegionAvail().x, max_lines).size());
}

void wrapped_tooltip(const std::string& text, float width_em) {
  ImGui::BeginTooltip();
  draw_lines(wrap_words(text, ImGui::GetFontSize(), ImGui::GetFontSize() * width_em, kAllLines), 0, true);
  ImGui::EndTooltip();
}

}  // namespace ui
