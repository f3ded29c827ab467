// The race header panel.
#include "ui/panel_race.hpp"

#include <fmt/format.h>

#include "ui/style.hpp"

namespace ui {

void RaceHeader::draw_backend(const core::BackendRun& run) {
  ImGui::PushStyleColor(ImGuiCol_Text, backend_color(run.name));
  ImGui::TextUnformatted(backend_title(run.name));
  ImGui::PopStyleColor();
  ImGui::SameLine();
  ImGui::TextWrapped("%s", run.device.empty() ? "(starting)" : run.device.c_str());
  if (!run.error.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(230, 60, 60, 255));
    ImGui::TextWrapped("stopped: %s", run.error.c_str());
    ImGui::PopStyleColor();
    return;
  }
  if (run.step_losses.empty()) {
    ImGui::TextDisabled("%s", run.device.empty() ? "creating the trainer..." : "first steps running...");
    return;
  }
  const double rate = run.recent_samples_per_s > 0 ? run.recent_samples_per_s : run.samples_per_s();
  const float loss = run.step_losses.back();
  const std::string acc =
      run.epochs.empty() ? std::string("-") : fmt::format("{:.1f}%", 100 * run.epochs.back().test_accuracy);
  // Until a second read-back there is no measured rate yet: a dash, not a 0 that was never measured.
  const std::string rate_text = rate > 0 ? format_rate(rate) : std::string("-");
  ImGui::Text("%s samples/s   step %zu   epoch %d (%d/%d)", rate_text.c_str(), run.step_losses.size(),
              run.epoch, run.step_in_epoch, run.steps_per_epoch);
  ImGui::Text("time %s   loss %.4f   test accuracy %s%s", format_duration(run.elapsed_s).c_str(), loss, acc.c_str(),
              run.paused ? "   [paused]" : (run.finished ? "   [finished]" : ""));
  ImGui::TextWrapped("precision %s", precision_text(run).c_str());
  if (run.config.precision == core::Precision::FP16 && ImGui::IsItemHovered())
    ImGui::SetTooltip("fp16 loss scaling: the loss is multiplied by the loss scale before the backward pass, so that\n"
                      "small gradients do not round to zero in fp16. A step whose gradients overflow is skipped and the\n"
                      "scale halved; after 2000 good steps it is doubled. A few skipped steps at the start are normal.");
}

void RaceHeader::draw(const DashboardView& view) {
  const core::BackendRun* gpu = view.run("gpu");
  const core::BackendRun* cpu = view.run("cpu");
  if (ImGui::BeginTable("race", 3, ImGuiTableFlags_SizingStretchProp)) {
    ImGui::TableSetupColumn("gpu", ImGuiTableColumnFlags_WidthStretch, 1.0f);
    ImGui::TableSetupColumn("speedup", ImGuiTableColumnFlags_WidthStretch, 0.8f);
    ImGui::TableSetupColumn("cpu", ImGuiTableColumnFlags_WidthStretch, 1.0f);
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    if (gpu) draw_backend(*gpu);
    ImGui::TableNextColumn();
    {
      const double g = gpu ? (gpu->recent_samples_per_s > 0 ? gpu->recent_samples_per_s : gpu->samples_per_s()) : 0;
      const double c = cpu ? (cpu->recent_samples_per_s > 0 ? cpu->recent_samples_per_s : cpu->samples_per_s()) : 0;
      ImGui::TextDisabled("speedup  GPU / CPU");
      ImGui::SetWindowFontScale(2.2f);
      if (g > 0 && c > 0) {
        const double speedup = g / c;
        ImGui::PushStyleColor(ImGuiCol_Text, speedup >= 1 ? kGpuColor : kCpuColor);
        ImGui::Text(speedup >= 10 ? "%.0fx" : (speedup >= 0.1 ? "%.2fx" : "%.3fx"), speedup);
        ImGui::PopStyleColor();
      } else {
        ImGui::TextUnformatted("-");
      }
      ImGui::SetWindowFontScale(1.0f);
      if (g > 0 && c > 0)
        ImGui::TextWrapped("%s", g >= c ? fmt::format("the GPU trains {:.1f}x as many samples per second", g / c).c_str()
                                         : fmt::format("the CPU trains {:.1f}x as many samples per second", c / g).c_str());
      if (gpu && gpu->device.find("software") != std::string::npos)
        ImGui::TextWrapped("This GPU is software Vulkan running on the CPU: both sides share the same cores.");
    }
    ImGui::TableNextColumn();
    if (cpu) draw_backend(*cpu);
    ImGui::EndTable();
  }
  // Time to reach the target loss, once each side has.
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 6);
  ImGui::InputFloat("##target", &target_loss, 0.05f, 0.1f, "%.2f");
  if (target_loss < 0.01f) target_loss = 0.01f;
  ImGui::SameLine();
  std::string text = "time to reach this loss (20-step average):";
  for (const auto* r : {gpu, cpu}) {
    if (!r) continue;
    const double t = time_to_loss(*r, target_loss);
    text += fmt::format("   {} {}", backend_title(r->name), t < 0 ? std::string("not yet") : format_duration(t));
  }
  ImGui::TextUnformatted(text.c_str());
}

}  // namespace ui
