// The Roofline tab's key under the chart (panel_roofline_key.hpp): entries grouped by family, flowed onto rows.
#include "ui/panel_roofline_key.hpp"

#include <algorithm>
#include <cfloat>

#include "ui/text_fit.hpp"

namespace ui::roofline_key {

std::vector<std::string> grouped_key(const std::vector<std::string>& key) {
  static const char* suffixes[] = {"_forward_backward", "_backward_weight", "_backward_data", "_forward", "_backward"};
  std::vector<std::pair<std::string, std::vector<std::string>>> families;  // family -> "N member"
  std::vector<std::string> order;  // families and whole entries in first-appearance order ("" + entry for whole)
  for (const std::string& entry : key) {
    const size_t space = entry.find(' ');
    const std::string number = entry.substr(0, space), name = entry.substr(space + 1);
    std::string family, member;
    for (const char* suffix : suffixes) {
      const std::string s(suffix);
      if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0) {
        family = name.substr(0, name.size() - s.size()), member = s.substr(1);
        break;
      }
    }
    auto it = std::find_if(families.begin(), families.end(), [&](const auto& f) { return f.first == family; });
    if (family.empty() || it == families.end()) {
      if (!family.empty()) families.push_back({family, {}});
      order.push_back(family.empty() ? "\n" + entry : family);
      it = family.empty() ? families.end() : families.end() - 1;
    }
    if (it != families.end()) it->second.push_back(number + " " + member);
  }
  std::vector<std::string> out;
  for (const std::string& o : order) {
    if (!o.empty() && o[0] == '\n') {
      out.push_back(o.substr(1));
      continue;
    }
    const auto& members = std::find_if(families.begin(), families.end(), [&](const auto& f) { return f.first == o; })->second;
    if (members.size() == 1) {  // whole: "5 loss_reduce"-like, the number and the full name
      const size_t space = members[0].find(' ');
      out.push_back(members[0].substr(0, space) + " " + o + "_" + members[0].substr(space + 1));
      continue;
    }
    std::string text = o + ":";
    for (size_t i = 0; i < members.size(); ++i) text += (i ? ", " : " ") + members[i];
    out.push_back(text);
  }
  return out;
}

int key_rows(const std::vector<KeyEntry>& key, float size, float width) {
  int rows = key.empty() ? 0 : 1;
  float x = 0;
  for (const auto& [k, color] : key) {
    const float w = ImGui::GetFont()->CalcTextSizeA(size, FLT_MAX, 0.0f, k.c_str()).x;
    if (x > 0 && x + w > width) ++rows, x = 0;
    x += w + size;
  }
  return rows;
}

void draw_key(const std::vector<KeyEntry>& key, float size, float row) {
  const ImVec2 start = ImGui::GetCursorScreenPos();
  const float width = ImGui::GetContentRegionAvail().x;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  float x = 0, y = 0;
  for (const auto& [k, color] : key) {
    // Only an entry wider than the whole panel is shortened (fit_text measures at the font's size: the width scaled).
    const std::string shown = fit_text(k, width * ImGui::GetFontSize() / size);
    const float w = ImGui::GetFont()->CalcTextSizeA(size, FLT_MAX, 0.0f, shown.c_str()).x;
    if (x > 0 && x + w > width) y += row, x = 0;
    dl->AddText(ImGui::GetFont(), size, ImVec2(start.x + x, start.y + y), color, shown.c_str());
    x += w + size;
  }
  ImGui::Dummy(ImVec2(width, y + row));
}

}  // namespace ui::roofline_key
