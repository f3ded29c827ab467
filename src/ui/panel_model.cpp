// The Model tab (see panel_model.hpp), drawn with ImDrawList.
#include "ui/panel_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cfloat>
#include <cmath>

#include "core/model_view.hpp"
#include "ui/text_fit.hpp"

namespace ui {
namespace {

constexpr float kLabelScale = 0.75f;  // the images' labels, font sizes

// One image of `view` (index i) in a square of `side` pixels at `lo`: grey levels in 16 steps, runs of equal pixels
// in a row drawn as one rectangle and the background (level 0) as one, so that 16 images stay far below ImGui's
// 65,536 vertices per window.
void draw_image(ImDrawList* dl, const core::ModelView& view, int i, ImVec2 lo, float side) {
  const int h = view.height, w = view.width, c = std::max(1, view.channels);
  dl->AddRectFilled(lo, ImVec2(lo.x + side, lo.y + side), IM_COL32(0, 0, 0, 255));
  const float* px = view.images.data() + static_cast<size_t>(i) * static_cast<size_t>(h * w * c);
  auto level = [&](int y, int x) {
    float v = 0;
    for (int k = 0; k < c; ++k) v += px[(static_cast<size_t>(y) * w + x) * c + k];
    return std::clamp(static_cast<int>(std::lround(15.0f * v / static_cast<float>(c))), 0, 15);
  };
  auto edge = [&](int j, int n, float origin) { return std::round(origin + side * static_cast<float>(j) / n); };
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w;) {
      const int l = level(y, x);
      int end = x + 1;
      while (end < w && level(y, end) == l) ++end;
      if (l > 0) {
        const int g = l * 17;
        dl->AddRectFilled(ImVec2(edge(x, w, lo.x), edge(y, h, lo.y)), ImVec2(edge(end, w, lo.x), edge(y + 1, h, lo.y)),
                          IM_COL32(g, g, g, 255));
      }
      x = end;
    }
}

// Filter f of a CNN's first convolution (3 x 3 x C weights, summed over C) in a square: white positive, black
// negative, grey 0, on one scale for every filter (the largest |weight|), so that strong filters look strong.
void draw_filter(ImDrawList* dl, const core::ModelView& view, int f, float scale, ImVec2 lo, float side) {
  const int k = core::ModelShape::kConvKernel, c = std::max(1, view.filter_channels);
  for (int y = 0; y < k; ++y)
    for (int x = 0; x < k; ++x) {
      float v = 0;
      for (int ch = 0; ch < c; ++ch)
        v += view.filter_weights[((static_cast<size_t>(f) * k + y) * k + x) * c + ch];
      const int g = std::clamp(static_cast<int>(std::lround(127.5f + 127.5f * v / scale)), 0, 255);
      const ImVec2 a(std::round(lo.x + side * x / k), std::round(lo.y + side * y / k));
      const ImVec2 b(std::round(lo.x + side * (x + 1) / k), std::round(lo.y + side * (y + 1) / k));
      dl->AddRectFilled(a, b, IM_COL32(g, g, g, 255));
    }
  dl->AddRect(lo, ImVec2(lo.x + side, lo.y + side), ImGui::GetColorU32(ImGuiCol_Border));
}

}  // namespace

void ModelPanel::draw(const DashboardView& view) {
  drawn_ = Drawn{};
  const float font = ImGui::GetFontSize();
  // Whose view: the chosen backend's, else any that has one.
  const core::BackendRun* shown = nullptr;
  for (const auto& r : view.runs)
    if (r.name == backend_ && r.model_view) shown = &r;
  for (const auto& r : view.runs)
    if (!shown && r.model_view) shown = &r;
  if (!shown) {
    ImGui::PushTextWrapPos(0);
    ImGui::TextUnformatted(view.config.dataset == "spiral"
                               ? "What the model sees is drawn for image data (Fashion-MNIST, or --data): the "
                                 "spiral's is the Boundary tab."
                               : "The test images and what the model predicts for them appear after the first steps.");
    ImGui::PopTextWrapPos();
    return;
  }
  const core::ModelView& v = *shown->model_view;
  drawn_.backend = shown->name;
  drawn_.step = v.step;
  // The backend buttons, and what the images show.
  for (const auto& r : view.runs) {
    if (!r.model_view) continue;
    const bool on = &r == shown;
    if (on) ImGui::PushStyleColor(ImGuiCol_Button, ImGui::GetColorU32(ImGuiCol_ButtonActive));
    if (ImGui::SmallButton(backend_title(r.name))) backend_ = r.name;
    if (on) ImGui::PopStyleColor();
    ImGui::SameLine();
  }
  const bool predicted = v.predicted.size() == static_cast<size_t>(v.count());
  text_line(predicted ? fmt::format("{}/{} right · grey: true class", v.correct(), v.count())
                      : std::string("this backend cannot predict: no labels"),
            ImGui::GetColorU32(ImGuiCol_TextDisabled));
  if (ImGui::IsItemHovered())
    wrapped_tooltip("Test images the model never trained on, with the class the backend's current weights predict "
                    "(its own forward kernels, the class of the largest logit): green when it is the true class; red, "
                    "with the true class under it in grey, when not. Refreshed about once a second while training; these are the "
                    "weights of step " + std::to_string(v.step) + ".");

  // The filters' strip (a CNN): its caption and rows of squares at the bottom.
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float small = kLabelScale * font;
  float filters_height = 0, filter_side = 0;
  int per_row = 0, filter_rows = 0;
  if (v.filters > 0) {
    // One row of squares where 0.8 font sizes fit them (3 pixels between), else rows of squares up to 1.6 font sizes.
    filter_side = std::clamp(avail.x / static_cast<float>(v.filters) - 3.0f, 0.8f * font, 1.6f * font);
    per_row = std::max(1, static_cast<int>(avail.x / (filter_side + 3.0f)));
    filter_rows = (v.filters + per_row - 1) / per_row;
    filters_height = std::round(1.15f * small) + static_cast<float>(filter_rows) * (filter_side + 3.0f) +
                     ImGui::GetStyle().ItemSpacing.y;
  }
  // The images: 4, 6 or 8 to a row, whichever gives them the largest side with the class names whole under them in
  // type from 0.6 to 0.8 font sizes (two lines: the guess, and the true class when the guess is wrong).
  auto name_of = [&](int cls) {
    return cls >= 0 && cls < static_cast<int>(v.class_names.size()) ? v.class_names[static_cast<size_t>(cls)]
                                                                    : std::to_string(cls);
  };
  // On screen the two long Fashion-MNIST names in their short forms, so that more images fit a row.
  auto shown_name = [](const std::string& n) {
    return n == "T-shirt/top" ? std::string("T-shirt") : n == "Ankle boot" ? std::string("Boot") : n;
  };
  float widest = 0;  // at 1 px type
  for (const auto& n : v.class_names)
    widest = std::max(widest, ImGui::GetFont()->CalcTextSizeA(1.0f, FLT_MAX, 0.0f, shown_name(n).c_str()).x);
  const float grid_height = std::max(0.0f, avail.y - filters_height);
  // Each layout: 2 to 8 images to a row, the names under each image or beside it; the one that gives the images the
  // largest side with the names whole in type of 0.5 to 0.75 font sizes.
  int cols = 4;
  bool beside = false;
  float side = 0, label = kLabelScale * font;
  bool found = false;
  for (bool b : {false, true})
    for (int c : {2, 3, 4, 6, 8}) {
      const int rows = (v.count() + c - 1) / c;
      const float cell_w = avail.x / static_cast<float>(c), cell_h = grid_height / static_cast<float>(rows);
      // Beside: the names take what the image leaves of the cell's width, at 0.5 font sizes at least.
      const float name_room = b ? cell_w - std::min(cell_w, cell_h) : cell_w;
      const float size = std::min(kLabelScale * font, (name_room - 0.4f * font) / std::max(widest, 1.0f));
      if (size < 0.5f * font) continue;  // the names would not be whole
      const float line = std::round(1.15f * size);
      const float s = b ? std::min(cell_h - 0.3f * font, cell_w - widest * size - 0.6f * font)
                        : std::min(cell_w - 0.3f * font, cell_h - 2 * line - 0.2f * font);
      if (!found || s > side) side = s, cols = c, label = size, beside = b;
      found = true;
    }
  const float line = std::round(1.15f * label);
  side = std::floor(std::max(side, 8.0f));
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float cell_w = avail.x / static_cast<float>(cols);
  // Never taller than the grid's share: the filters below stay in view.
  const float cell_h = std::min(grid_height / static_cast<float>((v.count() + cols - 1) / cols),
                                beside ? std::max(side, 2 * line) + 0.3f * font : side + 2 * line + 0.2f * font);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImU32 right = IM_COL32(40, 170, 80, 255), wrong = IM_COL32(220, 50, 50, 255);
  // A name shortened to its room at the label's size (only where even 0.5 font sizes cannot hold it whole).
  const float name_room = beside ? cell_w - side - 0.4f * font : cell_w - 0.2f * font;
  auto fit = [&](const std::string& text) {
    std::string t = text;
    while (t.size() > 1 && ImGui::GetFont()->CalcTextSizeA(label, FLT_MAX, 0.0f, t.c_str()).x > name_room)
      t = t.substr(0, t.size() - 2) + ".";
    return t;
  };
  for (int i = 0; i < v.count(); ++i) {
    const ImVec2 cell(origin.x + cell_w * static_cast<float>(i % cols), origin.y + cell_h * static_cast<float>(i / cols));
    const ImVec2 lo = beside ? ImVec2(std::round(cell.x + 0.1f * font), std::round(cell.y))
                             : ImVec2(std::round(cell.x + (cell_w - side) / 2), std::round(cell.y));
    draw_image(dl, v, i, lo, side);
    const std::string truth = name_of(v.labels[static_cast<size_t>(i)]);
    drawn_.truth.push_back(truth);
    if (!predicted) continue;
    const int p = v.predicted[static_cast<size_t>(i)];
    const bool ok = p == v.labels[static_cast<size_t>(i)];
    dl->AddRect(ImVec2(lo.x - 1, lo.y - 1), ImVec2(lo.x + side + 1, lo.y + side + 1), ok ? right : wrong, 0, 0, 2.0f);
    const std::string guess = fit(shown_name(name_of(p)));
    drawn_.predicted.push_back(name_of(p));
    // Under the image, centred on the cell; or beside it, from its right edge, the two lines centred on its height.
    auto place = [&](const std::string& text, int row, ImU32 color) {
      const float w = ImGui::GetFont()->CalcTextSizeA(label, FLT_MAX, 0.0f, text.c_str()).x;
      const ImVec2 at = beside ? ImVec2(lo.x + side + 0.3f * font,
                                        lo.y + std::max(0.0f, side / 2 - line) + static_cast<float>(row) * line)
                               : ImVec2(cell.x + (cell_w - w) / 2, lo.y + side + 0.1f * font + static_cast<float>(row) * line);
      dl->AddText(ImGui::GetFont(), label, at, color, text.c_str());
    };
    place(guess, 0, ok ? right : wrong);
    if (!ok) place(fit(shown_name(truth)), 1, ImGui::GetColorU32(ImGuiCol_TextDisabled));
  }
  const int grid_rows = (v.count() + cols - 1) / cols;
  ImGui::Dummy(ImVec2(avail.x, cell_h * static_cast<float>(grid_rows)));

  if (v.filters <= 0) return;
  float scale = 0;
  for (float w : v.filter_weights) scale = std::max(scale, std::abs(w));
  if (scale <= 0) scale = 1;
  const ImVec2 top = ImGui::GetCursorScreenPos();
  dl->AddText(ImGui::GetFont(), small, top, ImGui::GetColorU32(ImGuiCol_Text),
              fit_text(fmt::format("its first convolution's {} filters (3x3): white +, black -", v.filters),
                       avail.x / kLabelScale)
                  .c_str());
  for (int f = 0; f < v.filters; ++f)
    draw_filter(dl, v, f, scale,
                ImVec2(top.x + static_cast<float>(f % per_row) * (filter_side + 3.0f),
                       top.y + std::round(1.15f * small) + static_cast<float>(f / per_row) * (filter_side + 3.0f)),
                filter_side);
  drawn_.filters = v.filters;
  ImGui::Dummy(ImVec2(avail.x, std::round(1.15f * small) + static_cast<float>(filter_rows) * (filter_side + 3.0f)));
}

}  // namespace ui
