// The controls panel and the quick bar.
#include "ui/panel_controls.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <thread>

#include "core/error.hpp"
#include "core/options.hpp"
#include "core/settings_schema.hpp"
#include "ui/panel_controls_common.hpp"
#include "ui/panel_race.hpp"
#include "ui/text_fit.hpp"

namespace ui {
namespace {

using namespace controls;

constexpr core::Precision kPrecisions[] = {core::Precision::FP32, core::Precision::FP16, core::Precision::BF16};
constexpr const char* kRecipe =
    "Mixed precision: weights, activations and gradients are stored in 16 bits (half the bytes to move); every sum is "
    "still accumulated in fp32, and the optimizer updates fp32 master weights. fp16 has a narrow range: the loss is "
    "multiplied by a loss scale, lowered when gradients overflow. bf16 keeps fp32's range (with fewer digits) and "
    "needs no scaling. Applies to both backends.\n\n"
    "Faster or slower here? Both backends do every multiply and add in fp32 (trainscope uses no 16-bit arithmetic "
    "units), so 16 bits save bytes, and every value is converted on its way in and out: where memory sets the pace "
    "the saved bytes can win, where arithmetic does the conversions can lose. The Kernels tab's precision table "
    "shows what each precision measured here. A GPU's tensor cores multiply 16-bit numbers many times faster than "
    "fp32: that is where mixed precision speeds training up.";

// "" when `value` passes `rule` (core/options: the command line's), else its message without the option's name
// ("batch 70000: the batch size must be 1..65536").
template <typename Rule, typename T>
std::string refused(const Rule& rule, T value, const char* name) {
  try {
    core::check(rule, value);
    return "";
  } catch (const core::Error& e) {
    const std::string m = e.what();
    const size_t space = m.find(' ');  // "--batch 70000: ..." -> "batch 70000: ..."
    return space == std::string::npos ? m : name + m.substr(space);
  }
}

// Why backends cannot run `p` ("GPU: no 16-bit storage buffers ..."), "" when all can.
std::string unsupported(const DashboardView& view, core::Precision p) {
  std::string why;
  for (const auto& r : view.runs) {
    const size_t i = static_cast<size_t>(p);
    if (i < r.precision_unsupported.size() && !r.precision_unsupported[i].empty())
      why += fmt::format("{}{}: {}", why.empty() ? "" : "\n", backend_title(r.name), r.precision_unsupported[i]);
  }
  return why;
}

}  // namespace

Controller& null_controller() {
  static class NullController : public Controller {
    void post(const run::Command&) override {}
    void reset(const core::TrainConfig&) override {}
    void request_screenshot() override {}
    void set_style(const StyleOptions&) override {}
    StyleOptions style() const override { return {}; }
    void remeasure_peaks() override {}
    std::string export_trace() override { return ""; }
    std::string export_csv() override { return ""; }
  } instance;
  return instance;
}

void Controls::draw(const DashboardView& view, Controller* controller) {
  sync_model(view.config);
  Controller& c = controller ? *controller : null_controller();
  ImGui::BeginDisabled(controller == nullptr || !view.live);
  if (!quick_bar_shown_) draw_run_buttons(view, c);  // else they are in the quick bar, always in view
  draw_training(view, c);
  draw_backends(view);
  ImGui::Separator();
  draw_model(view, c);
  ImGui::EndDisabled();
  ImGui::Separator();
  ImGui::BeginDisabled(controller == nullptr);
  draw_display(c);
  ImGui::EndDisabled();
}

void Controls::draw_run_buttons(const DashboardView& view, Controller& c) {
  // The button says what a click does; while a pause is on its way it already reads "Resume" (greyed text below
  // the header says which backend is still finishing its step).
  const bool pausing = view.pause_requested;
  if (ImGui::Button(pausing ? "Resume" : "Pause"))
    c.post(run::Command(pausing ? run::Command::Kind::Resume : run::Command::Kind::Pause));
  ImGui::SameLine();
  ImGui::BeginDisabled(!all_paused(view));
  if (ImGui::Button("Single step")) c.post(run::Command(run::Command::Kind::SingleStep));
  ImGui::EndDisabled();
  ImGui::SameLine();
  if (ImGui::Button("Reset")) c.reset(view.config);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Both backends start again from the same initial weights (the seed's), with the settings shown.");
  ImGui::SameLine();
  help_marker(
      "Pause / Resume: at the next step. Single step: one step while paused. Reset: both backends start again "
      "with the settings shown here. Every change is applied by each backend at its next step and leaves a "
      "labelled marker on the loss plot; until a backend has applied it, it shows as pending.");
}

void Controls::draw_training(const DashboardView& view, Controller& c) {
  const core::TrainConfig& s = view.config;
  const float w = ImGui::GetFontSize() * 5.0f;
  int batch = s.batch;
  ImGui::SetNextItemWidth(w);
  if (ImGui::InputInt("##batch", &batch, 0, 0, ImGuiInputTextFlags_EnterReturnsTrue)) {
    // Out of range is said, never clamped to something else (70000 became 65536, then was refused anyway).
    setting_error_ = refused(*core::setting("batch").int_rule, batch, "batch");
    if (setting_error_.empty()) post_batch(c, batch);
  }
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "Batch size (Enter applies). The buffers are reallocated; weights and optimizer state are kept.\n"
        "Larger batches give the GPU more parallel work per dispatch.");
  same_line_if_fits(ImGui::CalcTextSize("batch").x);
  ImGui::TextUnformatted("batch");
  for (int b : kBatchPresets) {
    const std::string label = std::to_string(b);
    same_line_if_fits(button_width(label.c_str()));
    if (toggle_button(label.c_str(), s.batch == b)) post_batch(c, b);
  }

  float lr = s.lr;
  ImGui::SetNextItemWidth(w);
  if (ImGui::InputFloat("##lr", &lr, 0, 0, "%.1e", ImGuiInputTextFlags_EnterReturnsTrue)) {
    setting_error_ = refused(*core::setting("lr").real_rule, lr, "lr");
    if (setting_error_.empty()) {
      run::Command cmd(run::Command::Kind::SetLearningRate);
      cmd.lr = lr;
      c.post(cmd);
    }
  }
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Learning rate (Enter applies), from the next step on.");
  same_line_if_fits(ImGui::CalcTextSize("lr").x);
  ImGui::TextUnformatted("lr");
  same_line_if_fits(w);
  const core::Setting& optimizer_row = core::setting("optimizer");
  int optimizer = choice_index(optimizer_row, core::to_string(s.optimizer));
  ImGui::SetNextItemWidth(w);
  if (choice_combo("##optimizer", optimizer_row, optimizer))
    c.post(run::live_command(optimizer_row, with_choice(s, optimizer_row, optimizer)));
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "SGD with momentum or AdamW (torch semantics). The weights are kept; the new optimizer's\n"
        "state (momentum, moments) starts from zero.");
  // The toggles' combo as wide as its preview where the row has room ("naive attention", not "naiv…").
  const float toggles_w = std::min(std::max(w, toggles_preview_width(view)), ImGui::GetContentRegionAvail().x);
  same_line_if_fits(toggles_w);
  draw_toggles(view, c, toggles_w);

  draw_precision_combo(view, c, w);
  same_line_if_fits(w);
  draw_threads(view, c, w);
  // A value typed out of range, or a change a backend refused: the whole message, wrapped (not cut).
  std::string refusal = setting_error_;
  for (const auto& r : view.runs)
    if (refusal.empty() && r.status.find("refused") != std::string::npos)
      refusal = fmt::format("{}: {}", backend_title(r.name), r.status);
  if (!refusal.empty()) {
    text_wrapped(refusal, IM_COL32(230, 60, 60, 255));
  }
}

void Controls::draw_threads(const DashboardView& view, Controller& c, float w) {
  const core::TrainConfig& s = view.config;
  const int max_threads = hardware_threads();
  if (!ImGui::IsAnyItemActive() || threads_ <= 0) threads_ = s.threads > 0 ? s.threads : max_threads;
  ImGui::SetNextItemWidth(w);
  // The unit in the slider itself ("2 threads"): the row keeps room for the fair mode's checkbox.
  ImGui::SliderInt("##threads", &threads_, 1, max_threads, threads_ == 1 ? "%d thread" : "%d threads",
                   ImGuiSliderFlags_AlwaysClamp);
  if (ImGui::IsItemDeactivatedAfterEdit()) {  // on release: one rebuild of the thread pool, not one per pixel
    run::Command cmd(run::Command::Kind::SetThreads);
    cmd.value = threads_;
    c.post(cmd);
  }
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("The CPU backend's threads (drag, then release to apply).");
  same_line_if_fits(checkbox_width("take turns"));
  bool fair = view.fair;
  if (ImGui::Checkbox("take turns", &fair)) c.set_fair(fair);
  if (ImGui::IsItemHovered())
    wrapped_tooltip(
        "Fair mode: the backends train in turns of half a second, each timed alone, as `train "
        "--sequential` times them. On a software GPU (it runs on the CPU's own cores) or with few cores, "
        "two trainers at once take cores from each other and each one's samples/s would count the other's "
        "work too. On by default there. Off: both train at once, as a real GPU beside a CPU would.");
}

// What the toggles' combo shows closed: the toggles that are on ("fused": none), or host input where none is (the
// Controls' runs lines say the rest).
std::string Controls::toggles_preview(const DashboardView& view) {
  const core::Execution& shown = view.config.execution;
  return shown.any() || !view.config.input.host() ? core::to_string(shown) : std::string("host");
}

float Controls::toggles_preview_width(const DashboardView& view) {
  return ImGui::CalcTextSize(toggles_preview(view).c_str()).x + combo_chrome_width();
}

void Controls::draw_toggles(const DashboardView& view, Controller& c, float width) {
  // The teaching toggles in one combo (the Controls have no row to spare on a projector): each a rebuild of both
  // trainers with the same weights, marked on the plots. The preview names what is on ("fused": none).
  struct Item {
    core::Execution::Toggle toggle;
    const char* label;
    const char* help;
  };
  using T = core::Execution::Toggle;
  static const Item items[] = {
      {T::Unfused, "unfused",
       "Bias add and activation as kernels of their own after each GEMM (bias_add, act_forward), instead of the\n"
       "GEMM's fused epilogue: more launches, and every layer's output read and written again (see the Kernels tab)."},
      {T::SyncEveryStep, "sync every step",
       "GPU: wait for every step and read its loss back at once (PyTorch's loss.item() in the loop), instead of\n"
       "reading back every few steps: the GPU idles while the host waits. The CPU's loss is on the host anyway."},
      {T::SubmitPerKernel, "submit per kernel",
       "GPU: one queue submission and wait per kernel instead of one command buffer per step: every launch pays\n"
       "the host's overhead. The CPU already waits for each kernel's thread-pool dispatch."},
      {T::NaiveAttention, "naive attention",
       "Transformer: attention as three kernels (scores, softmax, values) with every head's context x context\n"
       "scores written to memory and read back, instead of the fused kernel that keeps them on chip\n"
       "(FlashAttention): more bytes and memory growing with the context squared (see the Kernels and Memory tabs)."}};
  const std::string preview = toggles_preview(view);
  ImGui::SetNextItemWidth(width);
  // The preview shortened with an ellipsis where the combo is narrower than it ("sync ev" was clipped mid-word).
  const float chrome = combo_chrome_width();
  if (ImGui::BeginCombo("##execution", fit_text(preview, width - chrome).c_str())) {
    for (const Item& item : items) {
      if (item.toggle == T::NaiveAttention && view.config.model != core::ModelKind::Transformer) continue;
      bool on = view.config.execution[item.toggle];
      if (ImGui::Checkbox(item.label, &on)) {
        run::Command cmd(run::Command::Kind::SetToggle);
        cmd.toggle = item.toggle;
        cmd.on = on;
        c.post(cmd);
      }
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", item.help);
    }
    draw_input(view, c);
    ImGui::EndCombo();
  }
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "Teaching toggles (%s): the same math run another way; the losses stay the same.\n"
        "unfused: bias add and activation as kernels of their own; sync every step: wait for the\n"
        "GPU after every step; submit per kernel: one submission and wait per kernel.%s",
        preview.c_str(),
        view.config.model == core::ModelKind::Transformer
            ? "\nnaive attention: the context x context scores written to memory and read back."
            : "");
}

void Controls::draw_precision_combo(const DashboardView& view, Controller& c, float width) {
  const core::Precision shown = view.config.precision;
  ImGui::SetNextItemWidth(width);
  if (ImGui::BeginCombo("##precision", core::to_string(shown))) {
    for (core::Precision p : kPrecisions) {
      const std::string why = unsupported(view, p);
      ImGui::BeginDisabled(!why.empty());
      if (ImGui::Selectable(core::to_string(p), p == shown) && p != shown) {
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
}

void Controls::draw_backends(const DashboardView& view) {
  // Per backend, what it runs now, or what it has pending (greyed until applied): one line each, always there.
  for (const auto& r : view.runs) {
    const bool pending = r.building || (view.live && !pending_changes(r, view.config).empty());
    ImGui::PushStyleColor(ImGuiCol_Text, backend_color(r.name));
    ImGui::TextUnformatted(backend_title(r.name));
    ImGui::PopStyleColor();
    ImGui::SameLine();
    // What it runs (the header says how old its figures are: not repeated here).
    std::string line = backend_state_line(view, r, false);
    if (!pending && r.error.empty() && !r.finished) {
      // "paused · fp32 · ..." reads "runs fp32 · ... (paused)".
      std::string paused;
      for (const std::string what : {"paused to measure peaks", "paused"})
        if (paused.empty() && line.rfind(what + " · ", 0) == 0) {
          paused = " (" + what + ")";
          line = line.substr(what.size() + std::string(" · ").size());
        }
      line = "runs " + line + fmt::format(" · lr {:g}", r.config.lr) + paused;
    }
    text_line(line, pending ? ImGui::GetColorU32(ImGuiCol_TextDisabled) : 0);
  }
  // The last change a backend refused, with why (a batch past the device's limits, out of memory), wrapped so that
  // what to change can be read: once, when both refused it for the same reason.
  std::string shown;
  for (const auto& r : view.runs) {
    if (r.status.find("refused") == std::string::npos || r.building || r.status == shown) continue;
    shown = r.status;
    text_wrapped(shown, IM_COL32(230, 60, 60, 255));
  }
}

}  // namespace ui
