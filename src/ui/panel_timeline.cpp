// The Timeline tab (panel_timeline.hpp), drawn with ImDrawList.
#include "ui/panel_timeline.hpp"

#include <fmt/format.h>
#include <imgui_internal.h>  // ImGui::SetItemUsingMouseWheel

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <functional>

#include "core/timeline.hpp"
#include "ui/text_fit.hpp"

namespace ui {
namespace {

// The kernels' names in the order of the step (their first plan entry), as the last frame's timelines had them: each
// name's place in it is its colour's, so that up to 10 kernels have 10 different colours (a hash of the name gave
// matmul_forward and gather_batch the same). Read and written by the UI thread only.
std::vector<std::string>& kernel_order() {
  static std::vector<std::string> order;
  return order;
}

void update_kernel_order(const DashboardView& view) {
  std::vector<std::pair<int, std::string>> first;  // (first entry, name)
  for (const auto& run : view.runs)
    if (run.timeline)
      for (const auto& track : run.timeline->tracks)
        for (const auto& e : track.events) {
          if (e.entry < 0) continue;
          auto it = std::find_if(first.begin(), first.end(), [&](const auto& f) { return f.second == e.name; });
          if (it == first.end()) first.emplace_back(e.entry, e.name);
          else it->first = std::min(it->first, e.entry);
        }
  std::stable_sort(first.begin(), first.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  kernel_order().clear();
  for (const auto& f : first) kernel_order().push_back(f.second);
}

// A colour per kernel name (the same on both backends), from a palette that reads on dark and light themes; host
// phases in greys, so that the kernels stand out.
ImU32 event_color(const core::TimelineEvent& e) {
  // The input pipeline (--input host): the loader's work, the copies of the batch (host and device), and the trainer
  // waiting for its batch, which is the starving GPU's idle time.
  if (e.name == core::kLoadBatch) return IM_COL32(64, 170, 160, 255);
  if (e.name == "upload" || e.name == core::PlanEntry::kUploadBatch) return IM_COL32(230, 150, 60, 255);
  if (e.name == "loader wait") return IM_COL32(200, 70, 70, 255);
  if (e.entry < 0) {
    if (e.name == "fence wait") return IM_COL32(150, 150, 150, 255);
    return IM_COL32(110, 110, 110, 255);
  }
  static constexpr ImU32 palette[] = {IM_COL32(78, 121, 167, 255),  IM_COL32(242, 142, 43, 255),
                                      IM_COL32(225, 87, 89, 255),   IM_COL32(118, 183, 178, 255),
                                      IM_COL32(89, 161, 79, 255),   IM_COL32(237, 201, 72, 255),
                                      IM_COL32(176, 122, 161, 255), IM_COL32(255, 157, 167, 255),
                                      IM_COL32(156, 117, 95, 255),  IM_COL32(148, 103, 189, 255)};
  const auto& order = kernel_order();
  const size_t at = static_cast<size_t>(std::find(order.begin(), order.end(), e.name) - order.begin());
  return palette[(at < order.size() ? at : std::hash<std::string>{}(e.name)) % std::size(palette)];
}

constexpr float kKeyScale = 0.7f;  // the colour key's type, font sizes

std::string ms_text(double seconds) { return fmt::format("{:.3g} ms", seconds * 1e3); }

std::string event_tooltip(const core::TimelineEvent& e) {
  std::string text = fmt::format("{}\nstep {} · {}", e.label.empty() ? e.name : e.label, e.step + 1,
                                 ms_text(e.seconds()));
  if (e.name == core::PlanEntry::kUploadBatch)
    text += fmt::format("\n{} bytes copied host to device: a transfer, not a kernel", format_value(e.bytes));
  else if (e.entry >= 0)
    text += fmt::format("\n{} FLOP, {} bytes (the whole kernel's)", format_value(e.flops), format_value(e.bytes));
  else if (e.name == core::kLoadBatch)
    text += "\na loader thread assembling (and augmenting) its rows of the batch in host memory";
  else if (e.name == "loader wait")
    text += "\nthe trainer thread waiting for the loader's batch: nothing new reaches the GPU meanwhile";
  else if (e.name == "upload")
    text += "\nthe host copying the batch into the staging memory the GPU copies it from";
  else
    text += "\nhost work: the GPU's kernels wait for it or it waits for them";
  return text;
}

// The steps' mean split into kernel time and overhead, as a bar with its figures; each step's split on hover.
void draw_breakdown(const core::BackendTimeline& t, ImU32 color, const std::string& title) {
  double wall = 0, kernels = 0;
  for (const auto& s : t.steps) wall += s.wall_s, kernels += s.kernel_s;
  if (wall <= 0 || t.steps.empty()) return;
  const double n = static_cast<double>(t.steps.size());
  const float share = static_cast<float>(std::min(1.0, kernels / wall));
  // The kernels' share is the bar's fill (and GPU busy is in the header and the tooltip): the words say the rest.
  const std::string text = fmt::format("{}: {}/step, overhead {} ({:.2f}x)", title, ms_text(wall / n),
                                       ms_text((wall - kernels) / n), kernels > 0 ? wall / kernels : 0.0);
  // Whole words on one line, else two (the bar grows): the overhead's figures are never cut off.
  const float font = ImGui::GetFontSize();
  const float width = ImGui::GetContentRegionAvail().x;
  const std::vector<std::string> lines = wrap_words(text, font, width - 0.4f * font, 2);
  const ImVec2 min = ImGui::GetCursorScreenPos();
  const float height = ImGui::GetTextLineHeight() * static_cast<float>(std::max<size_t>(1, lines.size()));
  ImGui::InvisibleButton("breakdown", ImVec2(width, height));
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddRectFilled(min, ImVec2(min.x + width, min.y + height), IM_COL32(110, 110, 110, 255));
  dl->AddRectFilled(min, ImVec2(min.x + share * width, min.y + height), color);
  for (size_t i = 0; i < lines.size(); ++i)
    dl->AddText(ImVec2(min.x + 0.2f * font, min.y + static_cast<float>(i) * ImGui::GetTextLineHeight()),
                IM_COL32(255, 255, 255, 255), lines[i].c_str());
  if (!ImGui::IsItemHovered()) return;
  std::string tip = fmt::format("Kernels {:.0f}% of the step{}.\n", 100 * kernels / wall,
                                t.backend == "gpu" ? fmt::format(", GPU busy {:.0f}%", 100 * t.busy_share()) : "");
  tip += fmt::format("The last {} steps. Each span is one kernel (coloured by kernel) or one host phase (grey: record, "
                     "submit, fence wait, read-back) on the track that ran it; empty track is time that track did "
                     "nothing. With --input host: the loader threads' batches (teal), the host's copies into staging "
                     "and the GPU's upload_batch (orange), the trainer waiting for its batch (red). Hover a span for its "
                     "figures. Mouse wheel: zoom about the cursor; drag: pan; double-click: the whole window again.\n\n",
                     t.steps.size());
  tip += "Per step: its wall time on the backend's own track (from the end of the step before), the sum of "
                    "its kernel times, and the rest: launches, submits, fence waits, read-backs, scheduling. GPU busy: "
                    "the kernels' share of the wall time (the batch's upload, a transfer, left out), measured from the "
                    "timestamps.\n";
  for (const auto& s : t.steps)
    tip += fmt::format("\nstep {}: {} = kernels {} + overhead {} ({:.2f}x)", s.step + 1, ms_text(s.wall_s),
                       ms_text(s.kernel_s), ms_text(s.overhead_s()), s.ratio());
  wrapped_tooltip(tip);
}

// The colour key: a swatch and a name per kernel and host phase, every one of them, flowing onto as many rows as they
// need in slightly smaller type (the tracks take what is left).
void draw_key(const DashboardView& view) {
  std::vector<core::TimelineEvent> kinds;  // one event per name, for its colour
  auto add = [&](const core::TimelineEvent& e) {
    for (const auto& k : kinds)
      if (k.name == e.name) return;
    kinds.push_back(e);
  };
  // The host's phases (greys: record, submit, fence wait, read-back) are one entry; the input pipeline's have
  // colours of their own.
  bool host = false;
  for (const auto& run : view.runs)
    if (run.timeline)
      for (const auto& track : run.timeline->tracks)
        for (const auto& e : track.events) {
          const bool grey = e.entry < 0 && e.name != core::kLoadBatch && e.name != "upload" && e.name != "loader wait";
          if (grey) host = true;
          else add(e);
        }
  if (host) {
    core::TimelineEvent e;
    e.name = "host phases (greys)";
    e.entry = -1;
    kinds.push_back(e);
  }
  if (kinds.empty()) return;
  std::stable_sort(kinds.begin(), kinds.end(), [](const auto& a, const auto& b) { return (a.entry >= 0) > (b.entry >= 0); });
  const float font = ImGui::GetFontSize();
  const float size = kKeyScale * font;
  const float row = std::round(1.1f * size);
  const float left = ImGui::GetCursorScreenPos().x;
  const float right = left + ImGui::GetContentRegionAvail().x;
  const ImVec2 start = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  float x = left, y = start.y;
  for (const auto& k : kinds) {
    const std::string name = fit_text(k.name, right - left - 1.2f * size);  // only a name wider than the panel
    const float w = 0.9f * size + ImGui::GetFont()->CalcTextSizeA(size, FLT_MAX, 0.0f, name.c_str()).x + 0.8f * size;
    if (x > left && x + w - 0.8f * size > right) x = left, y += row;
    dl->AddRectFilled(ImVec2(x, y + 0.2f * size), ImVec2(x + 0.7f * size, y + 0.9f * size), event_color(k));
    dl->AddText(ImGui::GetFont(), size, ImVec2(x + 0.9f * size, y), ImGui::GetColorU32(ImGuiCol_Text), name.c_str());
    x += w;
  }
  ImGui::Dummy(ImVec2(right - left, y + row - start.y));
  if (ImGui::IsItemHovered()) wrapped_tooltip("The colour of each kernel and host phase (hover a span for its name)");
}

// One backend's lanes as this frame draws them: where they lie and which part of its window they show.
struct LaneArea {
  ImVec2 origin;           // the lanes' top left, track names included
  float width = 0;         // of the lanes with their names, px
  float names = 0;         // the track names' column, px
  ImVec2 min, max;         // the spans' area
  float lane_height = 0;   // px
  double lo = 0, hi = 0;   // the times shown, s
  bool hovered = false;
  float area_w() const { return max.x - min.x; }
  float x_of(double s) const { return min.x + static_cast<float>((s - lo) / (hi - lo)) * area_w(); }
};

// Zoom and pan (in fractions of the window, so the view stays put while new steps slide in).
void zoom_and_pan(Range& view, const LaneArea& a, bool active) {
  const ImGuiIO& io = ImGui::GetIO();
  if (a.hovered) ImGui::SetItemUsingMouseWheel();
  if (a.hovered && io.MouseWheel != 0 && io.MousePos.x >= a.min.x) {
    const double anchor = view.lo + (io.MousePos.x - a.min.x) / a.area_w() * view.span();
    view = zoom(view, anchor, std::pow(0.8, io.MouseWheel), false);
  }
  if (active && io.MouseDelta.x != 0) view = pan(view, -io.MouseDelta.x / a.area_w(), false);
  if (a.hovered && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) view = Range{0, 1};
  view.lo = std::max(0.0, view.lo), view.hi = std::min(1.0, view.hi);
  if (view.hi - view.lo < 1e-4) view = Range{0, 1};
}

// Per track its name and its spans (named where they are wide enough); the span under the mouse in a tooltip.
void draw_lanes(const core::BackendTimeline& t, const LaneArea& a) {
  const ImGuiIO& io = ImGui::GetIO();
  const float font = ImGui::GetFontSize();
  const float lane_height = a.lane_height;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const core::TimelineEvent* under_mouse = nullptr;
  for (size_t i = 0; i < t.tracks.size(); ++i) {
    const auto& track = t.tracks[i];
    const float y0 = a.origin.y + lane_height * static_cast<float>(i), y1 = y0 + lane_height - 2;
    if (lane_height >= 0.6f * font) {  // in smaller type where the lanes are thinner than a line (a long key)
      const float size = std::min(font, lane_height);
      const std::string name = fit_text(track.name, a.names - 0.3f * font);  // fits at the full size, so at this one
      dl->AddText(ImGui::GetFont(), size, ImVec2(a.origin.x, y0 + (lane_height - size) / 2),
                  ImGui::GetColorU32(ImGuiCol_Text), name.c_str());
    }
    dl->AddRectFilled(ImVec2(a.min.x, y0), ImVec2(a.max.x, y1), ImGui::GetColorU32(ImGuiCol_FrameBg));
    dl->PushClipRect(ImVec2(a.min.x, y0), ImVec2(a.max.x, y1), true);
    for (const auto& e : track.events) {
      if (e.end_s < a.lo || e.start_s > a.hi) continue;
      const float l = a.x_of(e.start_s), r = std::max(a.x_of(e.end_s), l + 1.0f);  // at least a pixel
      dl->AddRectFilled(ImVec2(l, y0), ImVec2(r, y1), event_color(e));
      const ImVec2 ts = ImGui::CalcTextSize(e.name.c_str());
      if (r - l > ts.x + 0.4f * font && lane_height >= font)
        dl->AddText(ImVec2(l + 0.2f * font, y0 + (y1 - y0 - ts.y) / 2), IM_COL32(0, 0, 0, 255), e.name.c_str());
      if (a.hovered && io.MousePos.y >= y0 && io.MousePos.y < y1 && io.MousePos.x >= l && io.MousePos.x < r)
        under_mouse = &e;
    }
    dl->PopClipRect();
  }
  if (under_mouse) {
    ImGui::BeginTooltip();
    ImGui::TextUnformatted(event_tooltip(*under_mouse).c_str());
    ImGui::EndTooltip();
  }
}

// The time axis under the lanes: ms from the start of the view.
void draw_time_axis(const LaneArea& a) {
  const float font = ImGui::GetFontSize();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 axis = ImGui::GetCursorScreenPos();
  ImGui::Dummy(ImVec2(a.width, ImGui::GetTextLineHeight()));
  const Range ms{0, (a.hi - a.lo) * 1e3};
  for (const Tick& tick : linear_ticks(ms, std::max(2, static_cast<int>(a.area_w() / (6 * font))))) {
    const float x = a.min.x + static_cast<float>(tick.value / ms.hi) * a.area_w();
    const std::string label = tick.value == 0 ? "0 ms" : tick.label;
    const float w = ImGui::CalcTextSize(label.c_str()).x;
    dl->AddLine(ImVec2(x, a.max.y - 2), ImVec2(x, a.max.y + 0.25f * font),
                ImGui::GetColorU32(ImGuiCol_TextDisabled));
    dl->AddText(ImVec2(std::clamp(x - w / 2, a.min.x, a.max.x - w), axis.y),
                ImGui::GetColorU32(ImGuiCol_TextDisabled), label.c_str());
  }
}

}  // namespace

void TimelinePanel::draw(const DashboardView& view, Controller* controller) {
  const float line = ImGui::GetTextLineHeightWithSpacing();
  // Height: the colour key; per backend its tracks, a time axis and the breakdown bar with its title (one or two
  // lines); the export row; the rest shared by the tracks.
  int tracks = 0, shown = 0;
  for (const auto& run : view.runs)
    if (run.timeline && !run.timeline->empty()) tracks += static_cast<int>(run.timeline->tracks.size()), ++shown;
  update_kernel_order(view);
  draw_key(view);
  const float fixed = static_cast<float>(view.runs.size()) *
                      (3 * ImGui::GetTextLineHeight() + 3 * ImGui::GetStyle().ItemSpacing.y);
  const float avail = ImGui::GetContentRegionAvail().y;
  const float font = ImGui::GetFontSize();
  // The export row only where it leaves the lanes 0.6 of a line (a 1280x720 projector in presentation mode with a
  // lesson's caption has not the room: the tracks come first there; the exports are a larger window's).
  const bool exports = controller && (tracks == 0 || (avail - fixed - ImGui::GetFrameHeightWithSpacing()) /
                                                             static_cast<float>(tracks) >= 0.6f * font);
  const float rest = avail - fixed - (exports ? ImGui::GetFrameHeightWithSpacing() : 0.0f);
  // Lanes as thin as a few pixels where many tracks share the room (--input host's loader threads at 1280x720): all
  // of them in view, none scrolled away.
  const float lane = tracks > 0 ? std::clamp(rest / static_cast<float>(tracks), 0.12f * font, 1.4f * line) : line;
  for (const auto& run : view.runs) {
    ImGui::PushID(run.name.c_str());
    draw_backend(run, lane);
    ImGui::PopID();
  }
  if (!exports) return;
  if (ImGui::SmallButton("Export trace")) export_message_ = controller->export_trace();
  if (ImGui::IsItemHovered())
    wrapped_tooltip("The last steps of each backend as a Chrome trace (JSON trace events, as PyTorch's profiler "
                    "exports): open it in Perfetto (ui.perfetto.dev) or chrome://tracing. Saved under exports/ in the "
                    "folder trainscope was started from.");
  ImGui::SameLine();
  if (ImGui::SmallButton("Export CSV")) export_message_ = controller->export_csv();
  if (ImGui::IsItemHovered())
    wrapped_tooltip("steps.csv (every step of this run), kernels.csv (the kernel table) and peaks.csv (the measured "
                    "peaks) in a new folder under exports/ in the folder trainscope was started from.");
  if (!export_message_.empty()) {
    ImGui::SameLine();
    text_line(export_message_, ImGui::GetColorU32(ImGuiCol_TextDisabled));
  }
}

void TimelinePanel::draw_backend(const core::BackendRun& run, float lane_height) {
  const ImU32 color = backend_color(run.name);
  const float font = ImGui::GetFontSize();
  const core::BackendTimeline* t = run.timeline ? run.timeline.get() : nullptr;
  if (!t || t->empty() || t->end_s <= t->start_s) {
    text_line(fmt::format("{}: no steps yet", backend_title(run.name)), color);
    return;
  }
  Range& view = zoom_[run.name];
  if (!(view.span() > 0)) view = Range{0, 1};
  const double extent = t->end_s - t->start_s;
  LaneArea a;
  a.lo = t->start_s + view.lo * extent, a.hi = t->start_s + view.hi * extent;
  a.lane_height = lane_height;
  // The backend's title leads the words of its breakdown bar under the lanes (a line saved per backend: the lanes
  // come first on a projector); the help is the bar's tooltip.
  const std::string title = fmt::format("{} · batch {} · {}{}", backend_title(run.name), t->batch,
                                        core::to_string(t->precision), view == Range{0, 1} ? "" : " · zoomed");
  // The lanes: track names on the left, spans on the right.
  for (const auto& track : t->tracks) a.names = std::max(a.names, ImGui::CalcTextSize(track.name.c_str()).x);
  a.names = std::min(a.names + 0.5f * font, 0.3f * ImGui::GetContentRegionAvail().x);
  a.origin = ImGui::GetCursorScreenPos();
  a.width = ImGui::GetContentRegionAvail().x;
  const float height = lane_height * static_cast<float>(t->tracks.size());
  if (a.width <= 0 || height <= 0) return;
  ImGui::InvisibleButton("lanes", ImVec2(a.width, height));
  a.hovered = ImGui::IsItemHovered();
  const bool active = ImGui::IsItemActive();
  a.min = ImVec2(a.origin.x + a.names, a.origin.y), a.max = ImVec2(a.origin.x + a.width, a.origin.y + height);
  zoom_and_pan(view, a, active);
  draw_lanes(*t, a);
  draw_time_axis(a);
  draw_breakdown(*t, color, title);
}

}  // namespace ui
