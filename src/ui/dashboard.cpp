// The dashboard's layout: header, plots, tabbed views, quick controls, the lesson caption; and the footer.
#include "ui/dashboard.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <thread>

#include "core/measure.hpp"
#include "ui/screenshot.hpp"
#include "ui/text_fit.hpp"

namespace ui {
namespace {

constexpr float kCaptionPadEm = 0.5f;   // the caption's text from the band's left and right edges, font sizes
constexpr float kHintScale = 0.8f;      // the teacher's hint's type, font sizes

// The hint's column, pixels: as wide as its usual forms at their widest (a column that keeps its width from point to
// point, so that the caption beside it keeps its lines), wider for a longer one: a hint is always whole.
float hint_column(const std::string& hint, float font) {
  if (hint.empty()) return 0.0f;
  float widest = 0;
  for (const char* text :
       {"10/12 · Space: next", "10/12 · earlier · Space: on", "10/12 · settling…", hint.c_str()})
    widest = std::max(widest, ImGui::GetFont()->CalcTextSizeA(kHintScale * font, FLT_MAX, 0.0f, text).x);
  return widest + kCaptionPadEm * font;  // and a gap before the caption
}

}  // namespace

void Dashboard::load(const Settings& s) {
  tab_ = parse_tab(s.tab).value_or(Tab::Controls);
  requested_tab_ = tab_;
  loss.x_axis = s.plot_x_axis == "seconds" ? LossCurves::XAxis::Seconds : LossCurves::XAxis::Step;
}

void Dashboard::save(Settings& s) const {
  s.tab = tab_name(tab_);
  s.plot_x_axis = loss.x_axis == LossCurves::XAxis::Seconds ? "seconds" : "step";
}

std::string Dashboard::footer(const DashboardView& view) {
  FooterInfo info;
  std::string devices;
  // Device names without their details in parentheses ("llvmpipe (LLVM 15.0.6, 256 bits) [software Vulkan: runs on
  // the CPU]" -> "llvmpipe [software Vulkan: runs on the CPU]"): the footer keeps room for the batch, the precision
  // and the date, which a slide must show.
  auto short_name = [](std::string d) {
    const size_t open = d.find(" (");
    const size_t close = open == std::string::npos ? std::string::npos : d.find(')', open);
    if (close != std::string::npos) d = d.substr(0, open) + d.substr(close + 1);
    return d;
  };
  for (const auto& r : view.runs)
    devices += fmt::format("{}{}: {}", devices.empty() ? "" : " | ", backend_title(r.name),
                           r.device.empty() ? std::string("starting") : short_name(r.device));
  info.devices = devices;
  const core::BackendRun* any = view.runs.empty() ? nullptr : &view.runs.front();
  const core::TrainConfig& cfg = any ? any->config : view.config;
  std::string dims = cfg.dataset == "spiral" ? "2" : "784";
  for (int h : cfg.hidden) dims += fmt::format("-{}", h);
  dims += fmt::format("-{}", cfg.dataset == "spiral" ? cfg.spiral_classes : 10);
  if (cfg.model == core::ModelKind::CNN) {  // the dense part reads the last pool's flattened image
    dims.clear();
    for (int h : cfg.hidden) dims += fmt::format("{}-", h);
    dims = "conv " + core::hidden_text(cfg.conv) + ", dense " + dims + "10";
  }
  info.model = fmt::format("{} {} on {}, {} {}", cfg.model == core::ModelKind::CNN ? "CNN" : "MLP", dims, cfg.dataset,
                           core::to_string(cfg.activation), core::to_string(cfg.optimizer));
  if (cfg.model == core::ModelKind::Transformer)
    info.model = fmt::format("transformer {} blocks, embed {}, {} heads, context {} on {}, {}", cfg.layers, cfg.embed,
                             cfg.heads, cfg.context, cfg.dataset, core::to_string(cfg.optimizer));
  // The batch size and precision in force: one value when every backend runs the same, else each backend's.
  // (The skipped fp16 steps are in the header and the plots' red markers: the footer keeps to what ran.)
  std::string batch, per_batch, precision, per_backend;
  bool same_batch = true, same = true;
  for (const auto& r : view.runs) {
    const std::string b = std::to_string(r.config.batch);
    if (!batch.empty() && b != batch) same_batch = false;
    if (batch.empty()) batch = b;
    per_batch += fmt::format("{}{} {}", per_batch.empty() ? "" : ", ", backend_title(r.name), b);
    const std::string p = core::to_string(r.config.precision);
    if (!precision.empty() && p != precision) same = false;
    if (precision.empty()) precision = p;
    per_backend += fmt::format("{}{} {}", per_backend.empty() ? "" : ", ", backend_title(r.name), p);
  }
  info.batch = view.runs.empty() ? fmt::format("batch {}", cfg.batch) : "batch " + (same_batch ? batch : per_batch);
  info.precision = view.runs.empty() ? core::to_string(cfg.precision) : same ? precision : per_backend;
  // What the figures were measured under: the CPU backend's threads and the machine's load (a picture taken on a
  // loaded machine shows slower figures, and says so).
  const core::BackendRun* cpu = view.run("cpu");
  const int threads = cpu && cpu->config.threads > 0 ? cpu->config.threads
                                                    : static_cast<int>(std::thread::hardware_concurrency());
  const double load = view.load >= 0 ? view.load : core::load_average();
  if (cpu) info.machine = fmt::format("CPU {} thread{}", threads, threads == 1 ? "" : "s");
  if (load >= 0) info.machine += fmt::format("{}load {:.1f}", info.machine.empty() ? "" : ", ", load);
  return footer_text(info);
}

void Dashboard::draw(const DashboardView& view, Controller* controller, const std::string& toast) {
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(vp->WorkPos);
  ImGui::SetNextWindowSize(vp->WorkSize);
  const ImGuiWindowFlags flags = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                                 ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoBringToFrontOnFocus |
                                 ImGuiWindowFlags_NoScrollWithMouse;
  ImGui::Begin("trainscope", nullptr, flags);
  // A lesson's caption band: as many lines as its longest caption needs at this width (the band keeps its height
  // from caption to caption), the hint's column beside them.
  const bool band = !view.caption_reserve.empty() || !view.caption.empty() || !view.caption_hint.empty();
  const float text_width = ImGui::GetContentRegionAvail().x - 2 * kCaptionPadEm * ImGui::GetFontSize() -
                           hint_column(view.caption_hint, ImGui::GetFontSize());
  // At most kMaxCaptionLines: a longer caption (20,000 characters, say) is cut with an ellipsis, not given the room.
  const int want = band ? std::clamp(std::max(caption_band_lines(view.caption_reserve, text_width),
                                              caption_band_lines(view.caption, text_width)),
                                     1, kMaxCaptionLines)
                        : 0;
  const DashboardLayout layout = compute_layout(layout_metrics(vp->WorkSize.x, vp->WorkSize.y, want));
  drawn_ = DrawnLayout{};
  drawn_.layout = layout;
  controls.set_quick_bar_shown(layout.quick_bar);
  const float gap = ImGui::GetStyle().ItemSpacing.x;

  // The race header: a fixed height whatever it shows, so nothing below moves under the mouse.
  drawn_.header_min = ImGui::GetCursorScreenPos();
  ImGui::BeginChild("header", ImVec2(0, layout.header_height), false,
                    ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  race.draw(view, layout.header_lines, loss.target_loss);
  drawn_.devices = race.drawn_devices();
  ImGui::EndChild();
  drawn_.header_max = ImGui::GetItemRectMax();
  ImGui::Separator();
  if (layout.caption_lines > 0) draw_caption_band(view, layout, text_width);

  // The plots on the left, the views on the right (and the Controls in a column of their own when wide).
  const ImGuiWindowFlags panel = ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse;
  if (view.summary_shown) {  // a lesson's summary slide takes the whole body
    ImGui::BeginChild("summary", ImVec2(0, layout.body_height), true);
    draw_lesson_summary(view);
    ImGui::EndChild();
  } else {
    ImGui::BeginChild("plots", ImVec2(layout.plots_width, layout.body_height), true, panel);
    loss.draw(view, layout.min_loss_canvas);
    ImGui::EndChild();
    drawn_.plots_min = ImGui::GetItemRectMin();
    drawn_.plots_max = ImGui::GetItemRectMax();
    ImGui::SameLine();
    const float tabs_width = layout.controls_column ? ImGui::GetContentRegionAvail().x - layout.controls_width - gap : 0;
    ImGui::BeginChild("views", ImVec2(tabs_width, layout.body_height), true);
    draw_tabs(view, controller, !layout.controls_column);
    ImGui::EndChild();
    drawn_.tabs_min = ImGui::GetItemRectMin();
    drawn_.tabs_max = ImGui::GetItemRectMax();
    if (layout.controls_column) {
      ImGui::SameLine();
      ImGui::BeginChild("controls", ImVec2(0, layout.body_height), true);
      draw_tab(Tab::Controls, view, controller);
      ImGui::EndChild();
    }
  }

  // In a screenshot the footer (ui::with_footer) takes the quick controls' row: buttons are no use on a slide.
  if (layout.quick_bar && !in_footer_frame()) {
    drawn_.bar_min = ImGui::GetCursorScreenPos();
    controls.draw_quick_bar(view, controller, toast);
    drawn_.bar_max = ImVec2(drawn_.bar_min.x + ImGui::GetContentRegionAvail().x, ImGui::GetItemRectMax().y);
  }
  ImGui::End();
}

void Dashboard::draw_tabs(const DashboardView& view, Controller* controller, bool with_controls) {
  if (requested_tab_ && (with_controls || *requested_tab_ != Tab::Controls)) tab_ = *requested_tab_;
  requested_tab_.reset();
  if (!with_controls && tab_ == Tab::Controls) tab_ = Tab::Kernels;  // the Controls have a column of their own
  // The tab titles as one row of whole titles (ImGui's tab bar would shorten them to "Kern..." at projector sizes),
  // the selected one in the active tab's colour; those that do not fit are listed by a "More" button at the row's end
  // (visible_tabs), so that the views never lose a row of height to the titles. The padding and spacing are those
  // layout_metrics() counts.
  const ImGuiStyle& style = ImGui::GetStyle();
  const float font = ImGui::GetFontSize();
  ImGui::PushStyleVar(ImGuiStyleVar_FramePadding, ImVec2(kTabPaddingEm * font, std::round(0.12f * font)));
  ImGui::PushStyleVar(ImGuiStyleVar_ItemSpacing, ImVec2(style.ItemInnerSpacing.x, std::round(0.15f * font)));
  const float pad = ImGui::GetStyle().FramePadding.x, gap = ImGui::GetStyle().ItemSpacing.x;
  const float row = ImGui::GetContentRegionAvail().x;
  std::vector<Tab> tabs;
  std::vector<float> widths;
  int selected = -1;
  for (Tab t : kTabs) {
    if (t == Tab::Controls && !with_controls) continue;
    if (t == tab_) selected = static_cast<int>(tabs.size());
    tabs.push_back(t);
    widths.push_back(ImGui::CalcTextSize(tab_title(t)).x + 2 * pad);
  }
  const std::string widest_more = fmt::format("More ({})", tabs.size());
  const float more = ImGui::CalcTextSize(widest_more.c_str()).x + 2 * pad;
  const std::vector<int> shown = visible_tabs(widths, selected, row, gap, more);
  const float keep = shown.size() < tabs.size() ? gap + more : 0;  // room kept for the More button
  for (size_t k = 0; k < shown.size(); ++k) {
    const Tab t = tabs[static_cast<size_t>(shown[k])];
    if (k) ImGui::SameLine();
    ImGui::PushStyleColor(ImGuiCol_Button, ImGui::GetColorU32(t == tab_ ? ImGuiCol_TabActive : ImGuiCol_Tab));
    ImGui::PushStyleColor(ImGuiCol_ButtonHovered, ImGui::GetColorU32(ImGuiCol_TabHovered));
    ImGui::PushStyleColor(ImGuiCol_ButtonActive, ImGui::GetColorU32(ImGuiCol_TabActive));
    // A title wider than the whole row (only at the largest font sizes) is clipped to the row.
    const float w = std::max(font, std::min(widths[static_cast<size_t>(shown[k])], ImGui::GetContentRegionAvail().x - keep));
    if (ImGui::Button(tab_title(t), ImVec2(w, 0))) tab_ = t;
    ImGui::PopStyleColor(3);
  }
  if (shown.size() < tabs.size()) {
    if (!shown.empty()) ImGui::SameLine();
    ImGui::PushStyleColor(ImGuiCol_Button, ImGui::GetColorU32(ImGuiCol_Tab));
    if (ImGui::Button(fmt::format("More ({})", tabs.size() - shown.size()).c_str())) ImGui::OpenPopup("more_tabs");
    ImGui::PopStyleColor();
    if (ImGui::BeginPopup("more_tabs")) {
      for (size_t i = 0; i < tabs.size(); ++i)
        if (std::find(shown.begin(), shown.end(), static_cast<int>(i)) == shown.end() &&
            ImGui::Selectable(tab_title(tabs[i])))
          tab_ = tabs[i];
      ImGui::EndPopup();
    }
  }
  ImGui::PopStyleVar(2);
  ImGui::Separator();
  ImGui::BeginChild("tab_content", ImVec2(0, 0), false);  // the panel's own padding is around it already
  draw_tab(tab_, view, controller);
  ImGui::EndChild();
}

void Dashboard::draw_tab(Tab tab, const DashboardView& view, Controller* controller) {
  switch (tab) {
    case Tab::Controls: controls.draw(view, controller); break;
    case Tab::Kernels: kernels.draw(view); break;
    case Tab::Memory: memory.draw(view); break;
    case Tab::Bandwidth: bandwidth.draw(view, controller); break;
    case Tab::Roofline: roofline.draw(view, controller); break;
    case Tab::Timeline: timeline.draw(view, controller); break;
    case Tab::Sweep: sweep.draw(view, controller); break;
    case Tab::Boundary: boundary.draw(view); break;
    case Tab::Model: model.draw(view); break;
  }
}

void Dashboard::draw_caption_band(const DashboardView& view, const DashboardLayout& layout, float text_width) {
  // Across the whole width, between the header and the plots: it never covers a curve or a panel. Large type on the
  // panels' own background colour, so that it reads in both themes; the teacher's hint small and grey on the right.
  const float font = ImGui::GetFontSize();
  const float size = kCaptionScale * font;
  const float pad = caption_band_padding(layout_metrics(0, 0));
  const ImVec2 min = ImGui::GetCursorScreenPos();
  const float width = ImGui::GetContentRegionAvail().x;
  const float height = layout.caption_height - ImGui::GetStyle().ItemSpacing.y;
  ImGui::Dummy(ImVec2(width, height));
  const ImVec2 max(min.x + width, min.y + height);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddRectFilled(min, max, ImGui::GetColorU32(ImGuiCol_FrameBg), 0.2f * font);
  const float line = layout_metrics(0, 0).caption_line;
  drawn_.caption_min = min;
  drawn_.caption_max = max;
  drawn_.caption_text_width = text_width;
  drawn_.caption_text = wrap_words(view.caption, size, text_width, layout.caption_lines);
  drawn_.caption_widest = 0;
  const float x = min.x + kCaptionPadEm * font;
  for (size_t i = 0; i < drawn_.caption_text.size(); ++i) {
    const std::string& text = drawn_.caption_text[i];
    drawn_.caption_widest = std::max(drawn_.caption_widest, ImGui::GetFont()->CalcTextSizeA(size, FLT_MAX, 0.0f,
                                                                                             text.c_str()).x);
    dl->AddText(ImGui::GetFont(), size, ImVec2(x, min.y + pad + static_cast<float>(i) * line),
                ImGui::GetColorU32(ImGuiCol_Text), text.c_str());
  }
  if (!view.caption_hint.empty()) {
    const float hint_size = kHintScale * font;
    const std::vector<std::string> hint =
        wrap_words(view.caption_hint, hint_size, hint_column(view.caption_hint, font), 1);
    if (!hint.empty()) {
      const float w = ImGui::GetFont()->CalcTextSizeA(hint_size, FLT_MAX, 0.0f, hint[0].c_str()).x;
      dl->AddText(ImGui::GetFont(), hint_size, ImVec2(max.x - kCaptionPadEm * font - w, min.y + pad),
                  ImGui::GetColorU32(ImGuiCol_TextDisabled), hint[0].c_str());
      drawn_.caption_hint = hint[0];
    }
  }
}

}  // namespace ui
