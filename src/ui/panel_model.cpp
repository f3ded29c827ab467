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

// A class's name as the model view has it (its number where it has no name).
std::string class_name(const core::ModelView& v, int cls) {
  return cls >= 0 && cls < static_cast<int>(v.class_names.size()) ? v.class_names[static_cast<size_t>(cls)]
                                                                  : std::to_string(cls);
}

// On screen the two long Fashion-MNIST names in their short forms, so that more images fit a row.
std::string short_name(const std::string& n) {
  return n == "T-shirt/top" ? std::string("T-shirt") : n == "Ankle boot" ? std::string("Boot") : n;
}

// The filters' strip of a CNN at the bottom: its caption and rows of squares (none without filters).
struct FilterStrip {
  float side = 0;    // of a filter's square, px
  int per_row = 0;
  int rows = 0;
  float height = 0;  // the strip's, caption and spacing included, px
};

FilterStrip filter_strip(const core::ModelView& v, float width, float font) {
  FilterStrip f;
  if (v.filters <= 0) return f;
  const float small = kLabelScale * font;
  // One row of squares where 0.8 font sizes fit them (3 pixels between), else rows of squares up to 1.6 font sizes.
  f.side = std::clamp(width / static_cast<float>(v.filters) - 3.0f, 0.8f * font, 1.6f * font);
  f.per_row = std::max(1, static_cast<int>(width / (f.side + 3.0f)));
  f.rows = (v.filters + f.per_row - 1) / f.per_row;
  f.height = std::round(1.15f * small) + static_cast<float>(f.rows) * (f.side + 3.0f) + ImGui::GetStyle().ItemSpacing.y;
  return f;
}

// The images' grid: how many to a row, their side, and where their class names go in which type.
struct ImageGrid {
  float width = 0;  // the grid's, px
  int cols = 4;
  bool beside = false;  // the names beside each image, else under it
  float side = 0;       // of an image, px
  float label = 0;      // the names' type size, px
  float line = 0;       // their line height, px
  float cell_w = 0, cell_h = 0;
  float name_room = 0;  // the width a name may take at the label's size, px
};

// The images: 2 to 8 to a row, the names under each image or beside it; the layout that gives the images the largest
// side with the class names whole under them in type from 0.5 to 0.75 font sizes (two lines: the guess, and the true
// class when the guess is wrong).
ImageGrid image_grid(const core::ModelView& v, ImVec2 avail, float grid_height, float font) {
  float widest = 0;  // at 1 px type
  for (const auto& n : v.class_names)
    widest = std::max(widest, ImGui::GetFont()->CalcTextSizeA(1.0f, FLT_MAX, 0.0f, short_name(n).c_str()).x);
  ImageGrid g;
  g.width = avail.x;
  g.label = kLabelScale * font;
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
      if (!found || s > g.side) g.side = s, g.cols = c, g.label = size, g.beside = b;
      found = true;
    }
  g.line = std::round(1.15f * g.label);
  g.side = std::floor(std::max(g.side, 8.0f));
  g.cell_w = avail.x / static_cast<float>(g.cols);
  // Never taller than the grid's share: the filters below stay in view.
  g.cell_h = std::min(grid_height / static_cast<float>((v.count() + g.cols - 1) / g.cols),
                      g.beside ? std::max(g.side, 2 * g.line) + 0.3f * font : g.side + 2 * g.line + 0.2f * font);
  g.name_room = g.beside ? g.cell_w - g.side - 0.4f * font : g.cell_w - 0.2f * font;
  return g;
}

// The images in their grid, each framed green or red with its guess (and the true class when wrong) beside or under
// it; what was drawn goes to `drawn`.
void draw_grid(const core::ModelView& v, const ImageGrid& g, bool predicted, ModelPanel::Drawn& drawn) {
  const float font = ImGui::GetFontSize();
  const float side = g.side, label = g.label, line = g.line, cell_w = g.cell_w, cell_h = g.cell_h;
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImU32 right = IM_COL32(40, 170, 80, 255), wrong = IM_COL32(220, 50, 50, 255);
  // A name shortened to its room at the label's size (only where even 0.5 font sizes cannot hold it whole).
  auto fit = [&](const std::string& text) {
    std::string t = text;
    while (t.size() > 1 && ImGui::GetFont()->CalcTextSizeA(label, FLT_MAX, 0.0f, t.c_str()).x > g.name_room)
      t = t.substr(0, t.size() - 2) + ".";
    return t;
  };
  for (int i = 0; i < v.count(); ++i) {
    const ImVec2 cell(origin.x + cell_w * static_cast<float>(i % g.cols),
                      origin.y + cell_h * static_cast<float>(i / g.cols));
    const ImVec2 lo = g.beside ? ImVec2(std::round(cell.x + 0.1f * font), std::round(cell.y))
                               : ImVec2(std::round(cell.x + (cell_w - side) / 2), std::round(cell.y));
    draw_image(dl, v, i, lo, side);
    const std::string truth = class_name(v, v.labels[static_cast<size_t>(i)]);
    drawn.truth.push_back(truth);
    if (!predicted) continue;
    const int p = v.predicted[static_cast<size_t>(i)];
    const bool ok = p == v.labels[static_cast<size_t>(i)];
    dl->AddRect(ImVec2(lo.x - 1, lo.y - 1), ImVec2(lo.x + side + 1, lo.y + side + 1), ok ? right : wrong, 0, 0, 2.0f);
    const std::string guess = fit(short_name(class_name(v, p)));
    drawn.predicted.push_back(class_name(v, p));
    // Under the image, centred on the cell; or beside it, from its right edge, the two lines centred on its height.
    auto place = [&](const std::string& text, int row, ImU32 color) {
      const float w = ImGui::GetFont()->CalcTextSizeA(label, FLT_MAX, 0.0f, text.c_str()).x;
      const ImVec2 at = g.beside ? ImVec2(lo.x + side + 0.3f * font,
                                          lo.y + std::max(0.0f, side / 2 - line) + static_cast<float>(row) * line)
                                 : ImVec2(cell.x + (cell_w - w) / 2,
                                          lo.y + side + 0.1f * font + static_cast<float>(row) * line);
      dl->AddText(ImGui::GetFont(), label, at, color, text.c_str());
    };
    place(guess, 0, ok ? right : wrong);
    if (!ok) place(fit(short_name(truth)), 1, ImGui::GetColorU32(ImGuiCol_TextDisabled));
  }
  const int grid_rows = (v.count() + g.cols - 1) / g.cols;
  ImGui::Dummy(ImVec2(g.width, cell_h * static_cast<float>(grid_rows)));
}

// The filters' strip: its caption, then the filters on one scale (the largest |weight|).
void draw_filters(const core::ModelView& v, const FilterStrip& strip, float width, float font) {
  const float small = kLabelScale * font;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  float scale = 0;
  for (float w : v.filter_weights) scale = std::max(scale, std::abs(w));
  if (scale <= 0) scale = 1;
  const ImVec2 top = ImGui::GetCursorScreenPos();
  dl->AddText(ImGui::GetFont(), small, top, ImGui::GetColorU32(ImGuiCol_Text),
              fit_text(fmt::format("its first convolution's {} filters (3x3): white +, black -", v.filters),
                       width / kLabelScale)
                  .c_str());
  const float step = strip.side + 3.0f;
  for (int f = 0; f < v.filters; ++f)
    draw_filter(dl, v, f, scale,
                ImVec2(top.x + static_cast<float>(f % strip.per_row) * step,
                       top.y + std::round(1.15f * small) + static_cast<float>(f / strip.per_row) * step),
                strip.side);
  ImGui::Dummy(ImVec2(width, std::round(1.15f * small) + static_cast<float>(strip.rows) * step));
}

// The text of token ids [from, to) of sequence r of `tokens` (a row of `positions`); `sep` between tokens.
std::string token_text(const core::ModelView& v, const std::vector<int32_t>& tokens, size_t r, int from, int to,
                       const char* sep) {
  std::string s;
  for (int t = from; t < to; ++t) {
    if (!s.empty()) s += sep;
    s += class_name(v, tokens[r * size_t(v.positions) + size_t(t)]);
  }
  return s;
}

// Token data: each sequence shown, one or two lines. A task (some positions count): its prompt, the model's answer
// at the positions that count, green when all of it is right, else red with the right answer after it. Text (every
// position counts): the text, and under it the character the model predicts after each one, green where right.
void draw_sequences(const core::ModelView& v, ModelPanel::Drawn& drawn) {
  const ImU32 right = IM_COL32(90, 200, 90, 255), wrong = IM_COL32(230, 80, 80, 255);
  const ImU32 grey = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  std::vector<int32_t> ids(v.images.begin(), v.images.end());
  for (size_t r = 0; r < v.rows.size(); ++r) {
    const int T = v.positions;
    int first = T;  // the first position that counts
    for (int t = T - 1; t >= 0; --t)
      if (v.targets[r * size_t(T) + size_t(t)] >= 0) first = t;
    std::string answer, truth;
    bool all = true;
    std::vector<bool> hit;
    for (int t = first; t < T; ++t) {
      const size_t i = r * size_t(T) + size_t(t);
      if (v.targets[i] < 0) continue;
      const bool ok = v.predicted[i] == v.targets[i];
      all = all && ok;
      hit.push_back(ok);
      answer += class_name(v, v.predicted[i]);
      truth += class_name(v, v.targets[i]);
    }
    drawn.predicted.push_back(answer);
    drawn.truth.push_back(truth);
    if (first > 0) {  // a task: the prompt, then the answer
      text_line(token_text(v, ids, r, 0, first + 1, "") + " ", ImGui::GetColorU32(ImGuiCol_Text));
      ImGui::SameLine();
      text_line(answer, all ? right : wrong);
      if (!all) {
        ImGui::SameLine();
        text_line("(" + truth + ")", grey);
      }
      continue;
    }
    // Text: the prompt, then what the model wrote after it, once generated. Before that: the window as it reads, and
    // under it the character predicted after each one, coloured one by one.
    if (v.generated.size() == v.targets.size()) {
      text_line(token_text(v, v.generated, r, 0, v.prompt, ""), ImGui::GetColorU32(ImGuiCol_Text));
      ImGui::SameLine(0, 0);
      text_line(token_text(v, v.generated, r, v.prompt, T, ""), IM_COL32(110, 170, 255, 255));
      continue;
    }
    text_line(token_text(v, ids, r, 0, T, ""), grey);
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImVec2 at = ImGui::GetCursorScreenPos();
    for (size_t k = 0; k < answer.size(); ++k) {
      const char c[2] = {answer[k], 0};
      dl->AddText(at, hit[k] ? right : wrong, c);
      at.x += ImGui::CalcTextSize(c).x;
    }
    ImGui::Dummy(ImVec2(0, ImGui::GetTextLineHeightWithSpacing() * 1.3f));
  }
}

}  // namespace

void ModelPanel::draw_caption(const DashboardView& view, const core::BackendRun& shown) {
  const core::ModelView& v = *shown.model_view;
  // The backend buttons, and what the images show.
  for (const auto& r : view.runs) {
    if (!r.model_view) continue;
    const bool on = &r == &shown;
    if (on) ImGui::PushStyleColor(ImGuiCol_Button, ImGui::GetColorU32(ImGuiCol_ButtonActive));
    if (ImGui::SmallButton(backend_title(r.name))) backend_ = r.name;
    if (on) ImGui::PopStyleColor();
    ImGui::SameLine();
  }
  if (v.positions > 0) {
    const bool task = !v.targets.empty() && v.targets.front() < 0;  // a prompt before the answer
    text_line(!v.tokens_predicted() ? std::string("this backend cannot predict")
              : task ? fmt::format("{}/{} answers right · grey: the right answer", v.correct(), v.count())
                     : std::string("white: a held-out text; blue: what the model writes after it"),
              ImGui::GetColorU32(ImGuiCol_TextDisabled));
    if (ImGui::IsItemHovered())
      wrapped_tooltip("Test sequences the model never trained on. The reversal task: the digits, the separator, and "
                      "the model's answer (the token it predicts at each position of the answer, given the right ones "
                      "before it): green when all of it is right. Text: the first half of a held-out window, and in "
                      "blue what the model writes after it, a character at a time (each time the most likely one); "
                      "under it, in grey, the window itself and, coloured, the character the model predicts after each "
                      "of its characters, green where it is the text's. The backend's own forward kernels, the weights of "
                      "step " + std::to_string(v.step) + ".");
    return;
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
}

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
                               : "The test images (or sequences) and what the model predicts for them appear after "
                                 "the first steps.");
    ImGui::PopTextWrapPos();
    return;
  }
  const core::ModelView& v = *shown->model_view;
  drawn_.backend = shown->name;
  drawn_.step = v.step;
  draw_caption(view, *shown);
  if (v.positions > 0) {
    if (v.tokens_predicted()) draw_sequences(v, drawn_);
    return;
  }
  const bool predicted = v.predicted.size() == static_cast<size_t>(v.count());

  // The filters' strip (a CNN) at the bottom; the images take the rest.
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const FilterStrip strip = filter_strip(v, avail.x, font);
  const float grid_height = std::max(0.0f, avail.y - strip.height);
  draw_grid(v, image_grid(v, avail, grid_height, font), predicted, drawn_);
  if (v.filters <= 0) return;
  draw_filters(v, strip, avail.x, font);
  drawn_.filters = v.filters;
}

}  // namespace ui
