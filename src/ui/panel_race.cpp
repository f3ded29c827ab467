// The race header panel.
#include "ui/panel_race.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/speedup.hpp"
#include "core/timeline.hpp"
#include "ui/layout.hpp"
#include "ui/style.hpp"
#include "ui/text_fit.hpp"

namespace ui {
namespace {

constexpr ImU32 kErrorColor = IM_COL32(230, 60, 60, 255);

// "llvmpipe (LLVM 15.0.6, 256 bits) [software Vulkan: runs on the CPU]" -> "llvmpipe [software Vulkan: runs on the
// CPU]": the details in parentheses go first when the column is narrow (the tooltip keeps the whole name).
std::string short_device(const std::string& device) {
  std::string out = device;
  const size_t open = out.find(" (");
  const size_t close = open == std::string::npos ? std::string::npos : out.find(')', open);
  if (close != std::string::npos) out = out.substr(0, open) + out.substr(close + 1);
  // "[software Vulkan: runs on the CPU]" -> "[software Vulkan]"
  const size_t colon = out.find(':', out.find('['));
  const size_t end = colon == std::string::npos ? std::string::npos : out.find(']', colon);
  if (out.find('[') != std::string::npos && end != std::string::npos) out = out.substr(0, colon) + out.substr(end);
  return out;
}

// One frame's speedup and the state of the race it is read from.
struct SpeedupFrame {
  const core::BackendRun* gpu = nullptr;
  const core::BackendRun* cpu = nullptr;
  core::Speedup s;
  bool finished = false;  // both finished: the race's result stays
  bool paused = false;    // a backend paused (or pausing): the last figure stays, greyed, with its age
  double age = 0;         // of the paused figure, s
  bool software = false;  // the GPU is software Vulkan
};

SpeedupFrame speedup_frame(const DashboardView& view) {
  SpeedupFrame f;
  f.gpu = view.run("gpu");
  f.cpu = view.run("cpu");
  const core::BackendRun* gpu = f.gpu;
  const core::BackendRun* cpu = f.cpu;
  // Once both finished, the race's result stays: the speedup over their whole epochs (as `train` reports it).
  f.finished = gpu && cpu && gpu->finished && cpu->finished;
  if (gpu && cpu)
    f.s = view.live && !f.finished ? core::live_speedup(*gpu, *cpu) : core::run_speedup(*gpu, *cpu);
  else
    f.s.reason = "one backend only";
  f.paused = gpu && cpu && !f.finished && (gpu->paused || cpu->paused);
  f.age = f.paused ? std::max(view.age(*gpu), view.age(*cpu)) : 0;
  f.software = gpu && gpu->device.find("software") != std::string::npos;
  return f;
}

// What the figure means, and in the fair mode what taking turns is.
std::string speedup_tooltip(const SpeedupFrame& f, bool fair) {
  return fmt::format(
      "{}{}{}",
      f.finished ? "The race's result: GPU samples/s / CPU samples/s over their whole epochs."
                 : "GPU samples/s / CPU samples/s over the last seconds, only while both train the same model with "
                   "the same batch size, precision and optimizer.",
      f.software ? " This GPU is software Vulkan: both sides share the same CPU cores." : "",
      fair ? "\n\nTaking turns (fair mode, Controls): the GPU and the CPU train one at a time, about half a "
             "second each, like two runners timed one after the other on the same track. Here both would "
             "otherwise share the same processor cores, and each would be slowed by the other. So each "
             "samples/s counts only its own turns, as `train --sequential` times them, and both curves grow at "
             "about half speed. A side that compiles its kernels or applies a change steps aside: the other "
             "trains on meanwhile (never waiting for it), and what it trained beside that work is not counted "
             "as timed alone. A side whose step is longer than a turn makes the other wait for it (at most 20 s), "
             "so that both are still timed alone."
           : "");
}

// The line under the figure: who is faster, or why there is no figure; the paused figure's age; the race's result.
std::string speedup_note(const DashboardView& view, const SpeedupFrame& f, int lines, float width, float target_loss) {
  const core::Speedup& s = f.s;
  const core::BackendRun* gpu = f.gpu;
  const core::BackendRun* cpu = f.cpu;
  std::string note;
  if (s.ok())
    note = as_fast_text(s.value);
  else
    note = s.reason;
  // Taking turns, one side applying a change: the other does not wait for it (say so where it fits).
  if (!s.ok() && view.fair && gpu && cpu && gpu->building != cpu->building && !gpu->finished && !cpu->finished) {
    const std::string on = fmt::format("{} · the {} trains on", note, cpu->building ? "GPU" : "CPU");
    if (ImGui::CalcTextSize(on.c_str()).x <= width) note = on;
  }
  // Why a software GPU loses: it runs on the CPU's own cores (where it fits; the tooltip says it in full).
  if (s.ok() && s.value < 1 && f.software && !f.paused) {
    const std::string why = note + " · the GPU is software";
    if (ImGui::CalcTextSize(why.c_str()).x <= width) note = why;
  }
  if (f.paused && s.ok()) note = fmt::format("paused · figures {} old", format_duration(f.age));
  if (lines < 4 && view.fair) {  // the label line it has in a 4-line header
    note += " · taking turns";
    // A narrow column (1280x720 in presentation mode) keeps the mode's name whole: the shorter form first.
    if (s.ok() && !f.paused && ImGui::CalcTextSize(note.c_str()).x > width)
      note = as_fast_text(s.value, true) + " · in turns";
  }
  if (f.finished) {
    const double tg = time_to_loss(*gpu, target_loss), tc = time_to_loss(*cpu, target_loss);
    if (tg >= 0 || tc >= 0) {
      auto at = [](const char* who, double t) {
        return fmt::format("{} {}", who, t >= 0 ? format_duration(t) : std::string("never"));
      };
      const bool gpu_first = tg >= 0 && (tc < 0 || tg <= tc);
      note = fmt::format("loss {:.2f} reached: {}, {}", target_loss, gpu_first ? at("GPU", tg) : at("CPU", tc),
                         gpu_first ? at("CPU", tc) : at("GPU", tg));
    }
  }
  return note;
}

}  // namespace

std::string rate_text(const core::BackendRun& run) {
  // Finished: the whole epochs' rate, as the race's result beside it divides (a run shorter than the steady window
  // said "measuring samples/s" beside a speedup, and the last window's rate is not the one that speedup used).
  if (run.finished && run.samples_per_s() > 0) return format_rate(run.samples_per_s()) + " samples/s over the run";
  const double rate = run.recent_samples_per_s;  // never an average over settings that changed
  if (rate > 0) return format_rate(rate) + " samples/s";
  if (run.finished) return "samples/s not measured (too few steps)";
  // Taking turns with steps longer than any wait (run::Turns::kWaitCapSeconds): no step is timed alone, so no figure
  // will come; "measuring" would promise one.
  return run.rate_note.empty() ? "measuring samples/s" : "no samples/s: " + run.rate_note;
}

std::string fit_device(const std::string& device, float width) {
  if (fit_text(device, width) == device) return device;
  const std::string short_name = short_device(device);
  if (fit_text(short_name, width) == short_name) return short_name;
  // The bracketed label ("[software Vulkan]": the device is not a real GPU) stays whole; the name gives way first.
  const size_t open = short_name.find(" [");
  if (open == std::string::npos || short_name.back() != ']') return fit_text(short_name, width);
  const std::string label = short_name.substr(open);
  const float room = width - ImGui::CalcTextSize(label.c_str()).x;
  const std::string name = room > 0 ? fit_text(short_name.substr(0, open), room) : std::string();
  return name.empty() ? fit_text(label.substr(1), width) : name + label;
}

std::string backend_state_line(const DashboardView& view, const core::BackendRun& run, bool with_age) {
  std::string state;
  if (!run.error.empty()) return "stopped: " + run.error;
  const double age = view.age(run);
  const std::string stale =
      with_age && age > kStaleSeconds ? fmt::format("figures {:.0f} s old · ", age) : std::string();
  if (run.building) {
    const double for_s = view.now_s > 0 && run.build_started_s > 0 ? view.now_s - run.build_started_s : 0;
    state = run.building_what == "start" ? std::string("starting") : "applying " + run.building_what;
    if (!run.build_stage.empty()) state += ": " + run.build_stage;
    if (for_s >= 1) state += fmt::format(" ({:.0f} s)", for_s);
    return state;
  }
  const std::string pending = view.live ? pending_changes(run, view.config) : std::string();
  if (run.finished) return stale + (pending.empty() ? "finished" : "finished; Reset applies " + pending);
  if (!pending.empty()) return stale + "pending: " + pending;
  const core::TrainConfig& c = run.config;
  state = fmt::format("{} · batch {} · {}", precision_text(run), c.batch, core::to_string(c.optimizer));
  if (c.execution.any()) state += " · " + core::to_string(c.execution);
  if (c.input.host()) state += " · host input";  // the details: the plots' markers and the Controls
  if (run.paused) state = (view.peaks_measuring ? "paused to measure peaks · " : "paused · ") + state;
  return stale + state;
}

void RaceHeader::draw_backend(const DashboardView& view, const core::BackendRun& run, int lines) {
  const ImU32 color = backend_color(run.name);
  const float width = ImGui::GetContentRegionAvail().x;
  const std::string title = backend_title(run.name);
  // Line 1: who.
  if (lines >= 3) {
    ImGui::PushStyleColor(ImGuiCol_Text, color);
    ImGui::TextUnformatted(title.c_str());
    ImGui::PopStyleColor();
    ImGui::SameLine();
    const std::string device = run.device.empty() ? std::string("(starting)") : run.device;
    const float room = ImGui::GetContentRegionAvail().x;
    const std::string shown = fit_device(device, room);
    devices_.push_back(shown);
    text_line(shown, 0, room);
    if (ImGui::IsItemHovered() && shown != device) ImGui::SetTooltip("%s", device.c_str());
  }
  // Line 2: the race itself.
  std::vector<std::string> speed;
  if (lines < 3) speed.push_back(title);
  if (run.step_losses.empty()) {
    speed.push_back(run.device.empty() ? "creating the trainer..." : "first steps running...");
  } else {
    speed.push_back(rate_text(run));
    // Measured: the kernels' share of the last steps' wall time (timestamps; core::BackendTimeline::busy_share).
    if (run.name == "gpu" && run.timeline && !run.timeline->empty())
      speed.push_back(fmt::format("GPU busy {:.0f}%", 100 * run.timeline->busy_share()));
    speed.push_back(fmt::format("step {}", run.step_losses.size()));
    if (run.epoch > 0)
      speed.push_back(fmt::format("epoch {} ({}/{})", run.epoch, run.step_in_epoch, run.steps_per_epoch));
  }
  if (lines < 3) ImGui::PushStyleColor(ImGuiCol_Text, color);
  text_line(fit_pieces(speed, width), 0, width);
  if (lines < 3) ImGui::PopStyleColor();
  // Line 3: how well it learns.
  if (lines >= 4) {
    std::vector<std::string> quality;
    if (!run.step_losses.empty()) {
      quality.push_back(fmt::format("loss {:.4f}", run.step_losses.back()));
      quality.push_back(run.epochs.empty()
                            ? std::string("test accuracy -")
                            : fmt::format("test accuracy {:.1f}%", 100 * run.epochs.back().test_accuracy));
      quality.push_back("time " + format_duration(run.elapsed_s));
    }
    text_line(quality.empty() ? std::string(" ") : fit_pieces(quality, width), 0, width);
  }
  // Line 4: its state; what is pending shows greyed until it is applied.
  const std::string state = backend_state_line(view, run);
  const bool pending = run.building || (view.live && !pending_changes(run, view.config).empty());
  const ImU32 state_color = !run.error.empty() ? kErrorColor : pending ? ImGui::GetColorU32(ImGuiCol_TextDisabled) : 0;
  text_line(state, state_color, width);
  if (run.config.precision == core::Precision::FP16 && ImGui::IsItemHovered() && run.error.empty())
    ImGui::SetTooltip(
        "fp16 loss scaling: the loss is multiplied by the loss scale before the backward pass, so that\n"
        "small gradients do not round to zero in fp16. A step whose gradients overflow is skipped and the\n"
        "scale halved; after 2000 good steps it is doubled. A few skipped steps at the start are normal.");
}

void RaceHeader::draw_speedup(const DashboardView& view, int lines, float target_loss) {
  const float width = ImGui::GetContentRegionAvail().x;
  const SpeedupFrame f = speedup_frame(view);
  const core::Speedup& s = f.s;
  const ImU32 grey = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  // The fair mode in words a class follows: the two take turns, and each is timed alone.
  std::string label = "speedup  GPU / CPU";
  if (view.fair) {
    label = "speedup · taking turns, each timed alone";
    if (ImGui::CalcTextSize(label.c_str()).x > width) label = "speedup · taking turns";
  }
  if (lines >= 4) text_line(label, grey, width);
  const bool hovered_label = lines >= 4 && ImGui::IsItemHovered();
  // The figure: twice the text size when there are lines for it (it takes two).
  const float scale = lines >= 3 ? 2.0f : 1.0f;
  ImGui::SetWindowFontScale(scale);
  std::string big = "-";
  if (s.ok()) big = speedup_figure(s.value);
  if (lines < 3) big = "speedup " + big;
  if (s.ok()) ImGui::PushStyleColor(ImGuiCol_Text, f.paused ? grey : s.value >= 1 ? kGpuColor : kCpuColor);
  text_line(big, 0, width);
  if (s.ok()) ImGui::PopStyleColor();
  ImGui::SetWindowFontScale(1.0f);
  if (ImGui::IsItemHovered() || hovered_label) wrapped_tooltip(speedup_tooltip(f, view.fair));
  text_line(speedup_note(view, f, lines, width, target_loss), s.ok() && !f.paused ? 0 : grey, width);
}

void RaceHeader::draw(const DashboardView& view, int lines, float target_loss) {
  devices_.clear();
  const core::BackendRun* gpu = view.run("gpu");
  const core::BackendRun* cpu = view.run("cpu");
  const ImGuiTableFlags flags = ImGuiTableFlags_SizingStretchProp | ImGuiTableFlags_NoPadOuterX;
  // Lines closer than ImGui's spacing (ui::kHeaderLineSpacing): the header's height is the layout's.
  ImGui::PushStyleVar(ImGuiStyleVar_ItemSpacing,
                      ImVec2(ImGui::GetStyle().ItemSpacing.x, std::round(ImGui::GetFontSize() * kHeaderLineSpacing)));
  ImGui::PushStyleVar(ImGuiStyleVar_CellPadding, ImVec2(ImGui::GetStyle().CellPadding.x, 0));
  if (!ImGui::BeginTable("race", 3, flags)) {
    ImGui::PopStyleVar(2);
    return;
  }
  ImGui::TableSetupColumn("gpu", ImGuiTableColumnFlags_WidthStretch, 1.0f);
  ImGui::TableSetupColumn("speedup", ImGuiTableColumnFlags_WidthStretch, 0.8f);
  ImGui::TableSetupColumn("cpu", ImGuiTableColumnFlags_WidthStretch, 1.0f);
  ImGui::TableNextRow();
  ImGui::TableNextColumn();
  if (gpu) draw_backend(view, *gpu, lines);
  ImGui::TableNextColumn();
  draw_speedup(view, lines, target_loss);
  ImGui::TableNextColumn();
  if (cpu) draw_backend(view, *cpu, lines);
  ImGui::EndTable();
  ImGui::PopStyleVar(2);
}

}  // namespace ui
