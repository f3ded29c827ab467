// The Controls' input pipeline settings (--input host, --augment, --loader-threads, --prefetch, --pageable), drawn
// inside the execution combo beside the teaching toggles.
#include <algorithm>

#include "core/options.hpp"
#include "ui/panel_controls.hpp"

namespace ui {

void Controls::draw_input(const DashboardView& view, Controller& c) {
  // The input pipeline (core/input.hpp), in the same combo: each change a rebuild of both trainers with the same
  // weights, marked on the plots.
  ImGui::Separator();
  ImGui::TextDisabled("input pipeline");
  core::InputPipeline in = view.config.input;
  bool changed = false, host = in.host();
  if (ImGui::Checkbox("host loader", &host)) {
    in.source = host ? core::InputSource::Host : core::InputSource::Device;
    changed = true;
  }
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Off: the dataset stays on the GPU and each batch is gathered there (the best case).\n"
                      "On (--input host): loader threads assemble each batch on the CPU and the GPU trainer uploads it\n"
                      "through staging, as a DataLoader feeds a GPU; the CPU backend takes its batches from a loader too.");
  ImGui::BeginDisabled(!in.host());
  changed |= ImGui::Checkbox("augment (crop, flip)", &in.augment);
  // Steppers, not sliders: each click is one change (one rebuild), never one per frame of a drag.
  auto stepper = [&](const char* label, int& value, const core::IntRule& rule, const char* help) {
    ImGui::PushID(label);
    if (ImGui::SmallButton("-") && value > rule.min) --value, changed = true;
    ImGui::SameLine();
    if (ImGui::SmallButton("+") && value < std::min<long long>(rule.max, 16)) ++value, changed = true;
    ImGui::SameLine();
    ImGui::Text("%s %d", label, value);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", help);
    ImGui::PopID();
  };
  stepper("loader threads", in.loader_threads, core::rules::loader_threads,
          "Threads assembling batches (--loader-threads; PyTorch's num_workers): each batch is cut into one chunk per "
          "thread.");
  stepper("prefetch", in.prefetch, core::rules::prefetch,
          "Batches assembled ahead of the step that uses them (--prefetch); 0: a batch only when its step asks for it.");
  changed |= ImGui::Checkbox("pageable (not pinned)", &in.pageable);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("GPU: upload each batch as from pageable memory (the queue drained first, a fresh staging\n"
                      "buffer per step) instead of through the persistently mapped (pinned) staging ring.");
  ImGui::EndDisabled();
  if (changed) {
    run::Command cmd(run::Command::Kind::SetInput);
    cmd.input = in;
    c.post(cmd);
  }
}

}  // namespace ui
