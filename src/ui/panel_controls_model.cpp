// The Controls' model row (dataset, hidden layers, activation, model and its convolutions, Apply with its
// confirmation) and display row (font size, presentation mode).
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <tuple>

#include "core/error.hpp"
#include "core/settings_schema.hpp"
#include "ui/panel_controls.hpp"
#include "ui/panel_controls_common.hpp"
#include "ui/text_fit.hpp"

namespace ui {

using namespace controls;

void Controls::sync_model(const core::TrainConfig& cfg) {
  const std::string model =
      fmt::format("{}|{}|{}|{}|{}|{}|{}|{}", cfg.dataset, core::to_string(cfg.model), core::hidden_text(cfg.conv),
                  core::hidden_text(cfg.hidden), core::to_string(cfg.activation), cfg.layers, cfg.embed, cfg.heads);
  if (model == synced_model_) return;
  synced_model_ = model;
  dataset_ = choice_index(core::setting("dataset"), cfg.dataset);
  model_ = choice_index(core::setting("model"), core::to_string(cfg.model));
  std::snprintf(conv_, sizeof conv_, "%s", core::hidden_text(cfg.conv).c_str());
  activation_ = choice_index(core::setting("activation"), core::to_string(cfg.activation));
  std::snprintf(hidden_, sizeof hidden_, "%s", core::hidden_text(cfg.hidden).c_str());
  layers_ = cfg.layers, embed_ = cfg.embed, heads_ = cfg.heads;
}

// A transformer's sizes in place of the hidden layers: its blocks, width and heads (their schema rows' help).
void Controls::draw_transformer_sizes(float w) {
  for (auto [id, value, key, label] : {std::tuple{"##layers", &layers_, "layers", "blocks"},
                                       std::tuple{"##embed", &embed_, "embed", "embed"},
                                       std::tuple{"##heads", &heads_, "heads", "heads"}}) {
    same_line_if_fits(w * 0.45f + ImGui::CalcTextSize(label).x + 2 * ImGui::GetStyle().ItemSpacing.x);
    ImGui::SetNextItemWidth(w * 0.45f);  // four digits
    ImGui::InputInt(id, value, 0, 0);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", std::string(core::setting(key).help).c_str());
    ImGui::SameLine();
    ImGui::TextUnformatted(label);
  }
}

void Controls::draw_model(const DashboardView& view, Controller& c) {
  const float w = ImGui::GetFontSize() * 5.0f;
  ImGui::SetNextItemWidth(ImGui::CalcTextSize("fashion-mnist").x + ImGui::GetFrameHeight() +
                          2 * ImGui::GetStyle().FramePadding.x);
  choice_combo("##dataset", core::setting("dataset"), dataset_);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Dataset: Fashion-MNIST (28x28 images, 10 classes), the 2-D spiral, or for the transformer the\n"
                      "digit reversal task or the fortunes text");
  const bool transformer =
      with_choice(view.config, core::setting("model"), model_).model == core::ModelKind::Transformer;
  if (transformer) {
    draw_transformer_sizes(w);
  } else {
    same_line_if_fits(w * 1.2f);
    ImGui::SetNextItemWidth(w * 1.2f);
    ImGui::InputText("##hidden", hidden_, sizeof hidden_);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Hidden layer sizes, comma-separated, e.g. 256,128 (each 1..65536)");
  }
  same_line_if_fits(w * 0.8f);
  ImGui::SetNextItemWidth(w * 0.8f);
  const core::Setting& activation_row = core::setting("activation");
  choice_combo("##activation", activation_row, activation_);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", std::string(activation_row.help).c_str());
  // The model on the row of the button that applies it: mlp, or cnn with its convolutions' channels.
  // As wide as the model chosen needs: "transformer" only where it is chosen, so that the MLP's row keeps its width.
  ImGui::SetNextItemWidth(transformer ? ImGui::CalcTextSize("transformer").x + ImGui::GetFrameHeight() +
                                            2 * ImGui::GetStyle().FramePadding.x
                                      : w * 0.8f);
  if (choice_combo("##model", core::setting("model"), model_) &&
      with_choice(view.config, core::setting("model"), model_).model == core::ModelKind::Transformer) {
    // The transformer's MLPs use GELU (GPT-2's), as the command line chooses for it: shown here before Apply.
    activation_ = choice_index(activation_row, core::to_string(core::Activation::GELU));
    if (!core::token_data(with_choice(view.config, core::setting("dataset"), dataset_).dataset))
      dataset_ = choice_index(core::setting("dataset"), "reverse");  // and token data
  }
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Model: mlp (dense layers), cnn (3x3 convolutions, each with the activation and a 2x2 max pool,\n"
                      "then the dense hidden layers; Fashion-MNIST only) or transformer (reverse or fortunes)");
  const bool cnn = with_choice(view.config, core::setting("model"), model_).model == core::ModelKind::CNN;
  if (cnn) {
    same_line_if_fits(w);
    ImGui::SetNextItemWidth(w);
    ImGui::InputText("##conv", conv_, sizeof conv_);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("The convolutions' channels, comma-separated, e.g. 32,64 (each 1..1024)");
  }
  same_line_if_fits(ImGui::CalcTextSize("Apply (resets training)").x + 2 * ImGui::GetStyle().FramePadding.x);
  if (ImGui::Button("Apply (resets training)")) {
    model_error_.clear();
    try {
      pending_ = view.config;  // the settings shown, with the new model
      pending_ = with_choice(pending_, core::setting("dataset"), dataset_);
      pending_ = with_choice(pending_, core::setting("model"), model_);
      pending_.conv = core::parse_conv(conv_);
      if (pending_.model == core::ModelKind::CNN && pending_.dataset == "spiral")
        throw core::Error(core::ErrorKind::InvalidArgument,
                          "a CNN needs images: choose fashion-mnist, or the mlp model");
      const bool tokens = core::token_data(pending_.dataset);
      if (tokens != (pending_.model == core::ModelKind::Transformer))
        throw core::Error(core::ErrorKind::InvalidArgument,
                          tokens ? "reverse and fortunes are token data: choose the transformer"
                                 : "a transformer reads tokens: choose reverse or fortunes");
      if (!transformer) pending_.hidden = core::parse_hidden(hidden_);
      pending_.layers = layers_, pending_.embed = embed_, pending_.heads = heads_;
      pending_ = with_choice(pending_, activation_row, activation_);
      core::validate(pending_);
      ImGui::OpenPopup("Reset training?");
    } catch (const core::Error& e) {
      // The core's message names the command-line option; here the field is the hidden-layers box.
      model_error_ = e.what();
      if (model_error_.rfind("--hidden", 0) == 0) model_error_ = "hidden layers" + model_error_.substr(8);
      if (model_error_.rfind("--conv", 0) == 0) model_error_ = "convolutions" + model_error_.substr(6);
    }
  }
  if (!model_error_.empty()) {
    ImGui::SameLine();
    text_line(model_error_, IM_COL32(230, 60, 60, 255));
  } else if (!view.session_status.empty()) {
    ImGui::SameLine();
    text_line(view.session_status, ImGui::GetColorU32(ImGuiCol_TextDisabled));
  }
  if (ImGui::BeginPopupModal("Reset training?", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
    if (pending_.model == core::ModelKind::CNN)
      ImGui::Text("Train a CNN (conv %s, dense %s) on %s from new initial weights?", conv_, hidden_,
                  pending_.dataset.c_str());
    else if (pending_.model == core::ModelKind::Transformer)
      ImGui::Text("Train a transformer (%d blocks, embed %d, %d heads) on %s from new initial weights?",
                  pending_.layers, pending_.embed, pending_.heads, pending_.dataset.c_str());
    else
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
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 6);
  if (font_size_ <= 0 || !ImGui::IsAnyItemActive()) font_size_ = style.font_size;
  ImGui::SliderFloat("##font", &font_size_, kMinFontSize, kMaxFontSize, "%.0f px");
  if (ImGui::IsItemDeactivatedAfterEdit()) {  // on release: the font atlas is rebuilt once
    style.font_size = font_size_;
    c.set_style(style);
  }
  same_line_if_fits(ImGui::CalcTextSize("font").x);
  ImGui::TextUnformatted("font");
  same_line_if_fits(checkbox_width("presentation"));
  if (ImGui::Checkbox("presentation", &style.presentation)) c.set_style(style);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Presentation mode: larger type, dark on white, for a projector.");
}

}  // namespace ui
