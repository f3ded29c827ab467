// The kernel timings panel.
#include "ui/panel_kernels.hpp"

#include <fmt/format.h>

#include "ui/style.hpp"
#include "ui/text_fit.hpp"

namespace ui {
namespace {

std::string step_heading(const core::BackendRun& run) {
  const double ms = run.kernels.mean_step_ms();
  if (ms <= 0) return fmt::format("{} waiting for timed steps", backend_title(run.name));
  return fmt::format("{} {} ms/step, batch {}", backend_title(run.name), ms >= 100 ? fmt::format("{:.0f}", ms)
                                                                         : fmt::format("{:.3g}", ms),
                     run.config.batch);
}

}  // namespace

void KernelTimings::draw_bars(const DashboardView& view) {
  auto heading = [](const core::BackendRun& run) {
    // The step time when the column has room for it (the header has the rates either way).
    const double ms = run.kernels.mean_step_ms();
    return fit_pieces({backend_title(run.name), ms > 0 ? fmt::format("{:.3g} ms", ms) : std::string("waiting")},
                      ImGui::GetContentRegionAvail().x, " ");
  };
  kernel_bar_table("kernel_bars", view, heading, [](const core::BackendRun& run, const std::string& name) {
    KernelBar b;
    for (const auto& r : run.kernels.rows()) {
      if (r.name != name) continue;
      b.present = true;
      b.fraction = static_cast<float>(r.pct_of_step / 100.0);
      b.text = fmt::format("{:.1f}%", r.pct_of_step);
    }
    return b;
  });
}

void KernelTimings::draw_table(const core::BackendRun& run, const char* id) {
  const auto rows = run.kernels.rows();
  if (rows.empty()) return;
  text_line(step_heading(run) + (run.name == "gpu" ? " (Vulkan timestamp queries)" : " (wall clock)"),
            backend_color(run.name));
  if (fonts().mono) ImGui::PushFont(fonts().mono);
  const float pad = ImGui::GetFontSize() * 0.2f;
  ImGui::PushStyleVar(ImGuiStyleVar_CellPadding, ImVec2(pad, 1.0f));
  // The columns that fit, the least important dropped first (calls, then GFLOP/s); the kernel names are shortened.
  const char* headers[] = {"kernel", "calls", "ms/call", "% step", "GFLOP/s", "GB/s"};
  bool keep[6] = {true, true, true, true, true, true};
  const float avail = ImGui::GetContentRegionAvail().x;
  auto needed = [&] {
    float w = ImGui::CalcTextSize("matmul_backward_").x;  // the kernel column at its narrowest useful width
    for (int c = 1; c < 6; ++c)
      if (keep[c]) w += ImGui::CalcTextSize("0000.000").x + 2 * pad + 1;
    return w;
  };
  for (int drop : {1, 4})
    if (needed() > avail) keep[drop] = false;
  int columns = 0;
  for (bool k : keep) columns += k ? 1 : 0;
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingFixedFit;
  if (ImGui::BeginTable(id, columns, flags)) {
    for (int c = 0; c < 6; ++c)
      if (keep[c])
        ImGui::TableSetupColumn(headers[c], c == 0 ? ImGuiTableColumnFlags_WidthStretch : ImGuiTableColumnFlags_None);
    ImGui::TableHeadersRow();
    auto row = [&](const core::KernelRow& r) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      const std::string shown = fit_text_middle(r.name, ImGui::GetContentRegionAvail().x);
      ImGui::TextUnformatted(shown.c_str());
      if (keep[1]) {
        ImGui::TableNextColumn();
        ImGui::Text("%ld", r.calls);
      }
      ImGui::TableNextColumn();
      ImGui::Text(r.mean_ms >= 10 ? "%.1f" : (r.mean_ms >= 0.1 ? "%.3f" : "%.4f"), r.mean_ms);
      ImGui::TableNextColumn();
      ImGui::Text("%.1f", r.pct_of_step);
      if (keep[4]) {
        ImGui::TableNextColumn();
        if (r.gflops > 0)
          ImGui::Text(r.gflops >= 10 ? "%.1f" : "%.2f", r.gflops);
        else
          ImGui::TextUnformatted("-");
      }
      ImGui::TableNextColumn();
      ImGui::Text(r.gbps >= 10 ? "%.1f" : "%.2f", r.gbps);
    };
    for (const auto& r : rows) row(r);
    core::KernelRow total = run.kernels.step_row();
    total.name = "step (total)";
    row(total);
    ImGui::EndTable();
  }
  ImGui::PopStyleVar();
  if (fonts().mono) ImGui::PopFont();
}

// A transformer's attention traffic in words, above the bars: the bytes per step that fusion saves (or would save),
// from the step plan's compulsory bytes (core::attention_traffic); "" for runs without attention.
std::string KernelTimings::attention_traffic(const DashboardView& view) {
  for (const auto& r : view.runs) {
    const core::BackendRun::Running& x = r.running;
    if (x.attention_bytes_naive <= 0 || x.attention_bytes_fused <= 0) continue;
    const double ratio = x.attention_bytes_naive / x.attention_bytes_fused;
    const std::string fused = fmt::format("{:.1f} MB", x.attention_bytes_fused / 1e6);
    const std::string naive = fmt::format("{:.1f} MB", x.attention_bytes_naive / 1e6);
    return x.execution.naive_attention
               ? fmt::format("Attention moves {} a step naive, its scores written and read back; fused {}, "
                             "{:.1f}x less.",
                             naive, fused, ratio)
               : fmt::format("Attention moves {} a step fused; naive, its scores written and read back, {}: "
                             "{:.1f}x more.",
                             fused, naive, ratio);
  }
  return {};
}

void KernelTimings::draw_attention_traffic(const std::string& text) {
  if (text.empty()) return;
  text_lines(text, 3);
  if (ImGui::IsItemHovered())
    wrapped_tooltip("Compulsory bytes of the attention kernels per training step, forward and backward, all "
                    "layers: each tensor read or written once (the step plan's figures, as in the GB/s column). "
                    "Fused, the scores stay on chip and the backward computes them again; naive, seven kernels "
                    "each read or write the whole batch x heads x context x context matrix.");
}

void KernelTimings::draw(const DashboardView& view) {
  if (view.runs.empty()) return;
  // Heights of the three parts, to decide whether they all fit at once.
  const float line = ImGui::GetTextLineHeightWithSpacing();
  const float kernels = static_cast<float>(kernel_names(view).size());
  const std::string traffic = attention_traffic(view);
  const float traffic_lines = traffic.empty() ? 0 : static_cast<float>(text_lines_needed(traffic, 3));
  const float bars = (1 + kernels + traffic_lines) * line;
  const float speeds = (2 + static_cast<float>(precision_speed_rows(view).size())) * line;
  float tables = 0;
  for (const auto& run : view.runs) tables += (3 + static_cast<float>(run.kernels.rows().size())) * line;
  const float spacing = 2 * ImGui::GetStyle().ItemSpacing.y;
  const float avail = ImGui::GetContentRegionAvail().y;
  const bool all = bars + speeds + tables + spacing <= avail;
  // What does not fit at once is shown a page at a time: the bars with the speeds when those two fit together.
  const bool two_pages = !all && bars + speeds + spacing + ImGui::GetFrameHeightWithSpacing() <= avail;
  if (!all) {
    static constexpr const char* kParts[] = {"bars: where a step's time goes", "speed per precision",
                                             "tables per backend"};
    static constexpr const char* kPages[] = {"bars and speed per precision", "tables per backend"};
    // Two pages show the speeds with the bars; `part` itself stays as chosen (a lesson's "precisions" holds when
    // the page count changes from one frame to the next as the speed table grows).
    int p = two_pages ? (part == Part::Tables ? 1 : 0) : static_cast<int>(part);
    const char* const* names = two_pages ? kPages : kParts;
    const float help = ImGui::CalcTextSize("(?)").x + ImGui::GetStyle().ItemSpacing.x;
    const float chrome = combo_chrome_width();
    const float width = std::min(ImGui::GetContentRegionAvail().x - help, ImGui::CalcTextSize(names[p]).x + chrome);
    ImGui::SetNextItemWidth(width);
    // The preview shortened with an ellipsis where the combo is narrower than it (ImGui would clip it mid-word).
    if (ImGui::BeginCombo("##part", fit_text(names[p], width - chrome).c_str())) {
      for (int i = 0; i < (two_pages ? 2 : 3); ++i)
        if (ImGui::Selectable(names[i], i == p))
          part = two_pages ? (i == 1 ? Part::Tables : Part::Bars) : static_cast<Part>(i);
      ImGui::EndCombo();
    }
    same_line_if_fits(ImGui::CalcTextSize("(?)").x);
  }
  help_marker("Bars: each kernel's share of a training step, per backend. GFLOP/s = the step plan's analytic FLOPs / "
              "measured time. GB/s = compulsory bytes (each tensor read or written once) / measured time: a lower "
              "bound of the real traffic. GPU times come from Vulkan timestamp queries between dispatches, CPU times "
              "from the wall clock around each kernel. Timings since the last change of settings.");
  const bool with_speeds = all || (two_pages && part != Part::Tables);
  if (all || part == Part::Bars || (two_pages && part == Part::Precisions)) {
    draw_attention_traffic(traffic);
    draw_bars(view);
  }
  if (with_speeds || (!two_pages && part == Part::Precisions)) {
    if (with_speeds) ImGui::Spacing();
    precisions_.draw(view);
  }
  if (all || part == Part::Tables)
    for (size_t i = 0; i < view.runs.size(); ++i) {
      if (all || i > 0) ImGui::Spacing();
      draw_table(view.runs[i], fmt::format("kernels_{}", i).c_str());
    }
}

}  // namespace ui
