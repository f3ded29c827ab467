// The controls panel.
#include "ui/panel_controls.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <thread>

#include "core/error.hpp"

namespace ui {

void Controls::sync_from(const core::TrainConfig& cfg) {
  batch_ = cfg.batch;
  lr_ = cfg.lr;
  optimizer_ = cfg.optimizer == core::Optimizer::SGD ? 0 : 1;
  threads_ = cfg.threads > 0 ? cfg.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  dataset_ = cfg.dataset == "spiral" ? 1 : 0;
  activation_ = cfg.activation == core::Activation::GELU ? 1 : 0;
  std::string h;
  for (size_t i = 0; i < cfg.hidden.size(); ++i) {
    if (i) h += ',';
    h += std::to_string(cfg.hidden[i]);
  }
  std::snprintf(hidden_, sizeof hidden_, "%s", h.c_str());
  synced_ = true;
}

void Controls::draw(const DashboardView& view, Controller* controller) {
  if (!synced_) sync_from(view.config);
  ImGui::BeginDisabled(controller == nullptr || !view.live);
  static class NullController : public Controller {
    void post(const run::Command&) override {}
    void reset(const core::TrainConfig&) override {}
    void request_screenshot() override {}
    void set_style(const StyleOptions&) override {}
    StyleOptions style() const override { return {}; }
  } null_controller;
  Controller& c = controller ? *controller : null_controller;
  draw_training(view, c);
  ImGui::Separator();
  draw_model(view, c);
  ImGui::EndDisabled();
  ImGui::Separator();
  ImGui::BeginDisabled(controller == nullptr);
  draw_display(c);
  ImGui::EndDisabled();
}

void Controls::draw_training(const DashboardView& view, Controller& c) {
  bool paused = !view.runs.empty();
  for (const auto& r : view.runs) paused = paused && r.paused;
  if (ImGui::Button(paused ? "Resume" : "Pause"))
    c.post(run::Command(paused ? run::Command::Kind::Resume : run::Command::Kind::Pause));
  ImGui::SameLine();
  ImGui::BeginDisabled(!paused);
  if (ImGui::Button("Single step")) c.post(run::Command(run::Command::Kind::SingleStep));
  ImGui::EndDisabled();
  ImGui::SameLine();
  if (ImGui::Button("Reset")) c.reset(view.config);
  ImGui::SameLine();
  help_marker("Pause / Resume: between steps. Single step: one step while paused. Reset: both backends start again "
              "from the same initial weights (the seed's). Every change below is applied between steps and leaves "
              "a labelled marker on the loss plot.");

  const float w = ImGui::GetFontSize() * 5.5f;
  auto set_batch = [&](int b) {
    batch_ = std::clamp(b, 1, 65536);
    run::Command cmd(run::Command::Kind::SetBatch);
    cmd.value = batch_;
    c.post(cmd);
  };
  ImGui::SetNextItemWidth(w);
  if (ImGui::InputInt("##batch", &batch_, 0, 0, ImGuiInputTextFlags_EnterReturnsTrue)) set_batch(batch_);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Batch size (Enter applies). The buffers are reallocated; weights and optimizer state are kept.\n"
                      "Larger batches give the GPU more parallel work per dispatch.");
  ImGui::SameLine();
  ImGui::TextUnformatted("batch");
  for (int b : {32, 128, 512, 2048}) {
    ImGui::SameLine();
    if (ImGui::SmallButton(std::to_string(b).c_str())) set_batch(b);
  }

  ImGui::SetNextItemWidth(w);
  if (ImGui::InputFloat("##lr", &lr_, 0, 0, "%.1e", ImGuiInputTextFlags_EnterReturnsTrue)) {
    lr_ = std::clamp(lr_, 1e-6f, 10.0f);
    run::Command cmd(run::Command::Kind::SetLearningRate);
    cmd.lr = lr_;
    c.post(cmd);
  }
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Learning rate (Enter applies), from the next step on.");
  ImGui::SameLine();
  ImGui::TextUnformatted("lr");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(w);
  if (ImGui::Combo("optimizer", &optimizer_, "sgd\0adamw\0")) {
    run::Command cmd(run::Command::Kind::SetOptimizer);
    cmd.optimizer = optimizer_ == 0 ? core::Optimizer::SGD : core::Optimizer::AdamW;
    c.post(cmd);
  }
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("SGD with momentum or AdamW (torch semantics). The weights are kept; the new optimizer's\n"
                      "state (momentum, moments) starts from zero.");

  ImGui::SetNextItemWidth(w);
  const int max_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  ImGui::SliderInt("##threads", &threads_, 1, max_threads, "%d", ImGuiSliderFlags_AlwaysClamp);
  if (ImGui::IsItemDeactivatedAfterEdit()) {  // on release: one rebuild of the thread pool, not one per pixel
    run::Command cmd(run::Command::Kind::SetThreads);
    cmd.value = threads_;
    c.post(cmd);
  }
  ImGui::SameLine();
  ImGui::TextUnformatted("CPU threads");
  draw_precision(view, c, w);
}

void Controls::draw_precision(const DashboardView& view, Controller& c, float width) {
  static constexpr core::Precision kAll[] = {core::Precision::FP32, core::Precision::FP16, core::Precision::BF16};
  static constexpr const char* kRecipe =
      "Mixed precision: weights, activations and gradients are stored in 16 bits (half the bytes to move); every "
      "sum is still accumulated in fp32, and the optimizer updates fp32 master weights. fp16 has a narrow range: the "
      "loss is multiplied by a loss scale, lowered when gradients overflow. bf16 keeps fp32's range (with fewer "
      "digits) and needs no scaling. Applies to both backends.";
  // The precision in force: the backends' (they can differ for a moment while a change is applied).
  // A finished backend keeps the precision it trained with; it takes a new one at the next reset, so it does not
  // count while another one is still training.
  bool any_training = false;
  for (const auto& r : view.runs) any_training = any_training || !r.finished;
  std::string current;
  for (const auto& r : view.runs) {
    if (any_training && r.finished) continue;
    const std::string p = core::to_string(r.config.precision);
    if (current.find(p) == std::string::npos) current += (current.empty() ? "" : "/") + p;
  }
  if (current.empty()) current = core::to_string(view.config.precision);
  // Wide enough for "fp16/fp32" while a change is being applied.
  ImGui::SetNextItemWidth(std::max(width, ImGui::CalcTextSize(current.c_str()).x + ImGui::GetFrameHeight() +
                                              2 * ImGui::GetStyle().FramePadding.x));
  if (ImGui::BeginCombo("##precision", current.c_str())) {
    for (core::Precision p : kAll) {
      // Why each backend that cannot run `p` cannot ("GPU: no 16-bit storage buffers ...").
      std::string why;
      for (const auto& r : view.runs) {
        const size_t i = static_cast<size_t>(p);
        if (i < r.precision_unsupported.size() && !r.precision_unsupported[i].empty())
          why += fmt::format("{}{}: {}", why.empty() ? "" : "\n", backend_title(r.name), r.precision_unsupported[i]);
      }
      bool in_force = !view.runs.empty();
      for (const auto& r : view.runs) in_force = in_force && (r.config.precision == p || (any_training && r.finished));
      ImGui::BeginDisabled(!why.empty());
      if (ImGui::Selectable(core::to_string(p), in_force) && !in_force) {
        run::Command cmd(run::Command::Kind::SetPrecision);
        cmd.precision = p;
        c.post(cmd);
      }
      ImGui::EndDisabled();
      if (!why.empty() && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
        ImGui::SetTooltip("%s cannot be used here:\n%s", core::to_string(p), why.c_str());
    }
    ImGui::EndCombo();
  }
  if (ImGui::IsItemHovered()) {
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 30.0f);
    ImGui::TextUnformatted(kRecipe);
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
  }
  ImGui::SameLine();
  ImGui::TextUnformatted("precision");
  ImGui::SameLine();
  help_marker(kRecipe);
}

void Controls::draw_model(const DashboardView& view, Controller& c) {
  const float w = ImGui::GetFontSize() * 5.5f;
  ImGui::SetNextItemWidth(w * 1.45f);
  ImGui::Combo("##dataset", &dataset_, "fashion-mnist\0spiral\0");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Dataset: Fashion-MNIST (28x28 images, 10 classes) or the 2-D spiral");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(w * 0.9f);
  ImGui::InputText("##hidden", hidden_, sizeof hidden_);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Hidden layer sizes, comma-separated, e.g. 256,128");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(w * 0.7f);
  ImGui::Combo("##activation", &activation_, "relu\0gelu\0");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Activation of the hidden layers (gelu: the tanh approximation)");
  if (ImGui::Button("Apply dataset and model (resets training)")) {
    model_error_.clear();
    try {
      pending_ = view.config;
      pending_.dataset = dataset_ == 1 ? "spiral" : "fashion-mnist";
      pending_.hidden = core::parse_hidden(hidden_);
      pending_.activation = activation_ == 1 ? core::Activation::GELU : core::Activation::ReLU;
      pending_.batch = batch_;
      pending_.lr = lr_;
      pending_.optimizer = optimizer_ == 0 ? core::Optimizer::SGD : core::Optimizer::AdamW;
      pending_.threads = threads_;
      if (!view.runs.empty()) pending_.precision = view.runs.front().config.precision;  // kept across the reset
      core::validate(pending_);
      ImGui::OpenPopup("Reset training?");
    } catch (const core::Error& e) {
      model_error_ = e.what();
    }
  }
  if (!model_error_.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(230, 60, 60, 255));
    ImGui::TextWrapped("%s", model_error_.c_str());
    ImGui::PopStyleColor();
  }
  if (!view.session_status.empty()) ImGui::TextWrapped("%s", view.session_status.c_str());
  if (ImGui::BeginPopupModal("Reset training?", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
    ImGui::Text("Train %s with hidden layers %s from new initial weights?", pending_.dataset.c_str(), hidden_);
    ImGui::Text("Both loss curves start again.");
    if (ImGui::Button("Reset and train")) {
      c.reset(pending_);
      ImGui::CloseCurrentPopup();
    }
    ImGui::SameLine();
    if (ImGui::Button("Cancel")) ImGui::CloseCurrentPopup();
    ImGui::EndPopup();
  }
}

void Controls::draw_display(Controller& c) {
  StyleOptions style = c.style();
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 8);
  if (font_size_ <= 0) font_size_ = style.font_size;
  ImGui::SliderFloat("font size", &font_size_, kMinFontSize, kMaxFontSize, "%.0f px");
  if (ImGui::IsItemDeactivatedAfterEdit()) {  // on release: the font atlas is rebuilt once
    style.font_size = font_size_;
    c.set_style(style);
  }
  ImGui::SameLine();
  if (ImGui::Checkbox("presentation mode", &style.presentation)) c.set_style(style);
  ImGui::SameLine();
  if (ImGui::Button("Screenshot (F12)")) c.request_screenshot();
}

}  // namespace ui
