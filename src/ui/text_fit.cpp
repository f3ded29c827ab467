// Shortening text to a width in pixels.
#include "ui/text_fit.hpp"

namespace ui {
namespace {

// "…" when the font has the glyph (DejaVu), else "..." (ImGui's built-in font has no U+2026).
const char* ellipsis() {
  ImFont* font = ImGui::GetFont();
  return font && font->FindGlyphNoFallback(0x2026) ? "\xE2\x80\xA6" : "...";
}

float width_of(std::string_view s) { return ImGui::CalcTextSize(s.data(), s.data() + s.size()).x; }

}  // namespace

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

void wrapped_tooltip(const std::string& text, float width_em) {
  ImGui::BeginTooltip();
  ImGui::PushTextWrapPos(ImGui::GetFontSize() * width_em);
  ImGui::TextUnformatted(text.c_str());
  ImGui::PopTextWrapPos();
  ImGui::EndTooltip();
}

}  // namespace ui
