// The dashboard's layout, proven from ImGui's own item rectangles in offscreen frames: at 1024x768, 1280x720 (a
// projector), 1600x900 and 1920x1080, each normal and in presentation mode, with every view beside the plots, nothing
// is clipped or scrolled (every window's items end inside it, every table's cells inside their columns, no window has
// a scroll range), the loss plot's canvas keeps at least 40% of the window's height, and the race header has the same
// height whether the backends are starting, running, applying a change, paused or stopped. At every font size 10..48
// px (both modes) the plot keeps its 40% and nothing spills sideways. TRAINSCOPE_KEEP_PNG_DIR keeps the pictures.
#include <doctest/doctest.h>
#include <imgui.h>
#include <imgui_internal.h>  // the windows' and tables' item extents (DC.CursorMaxPos, column content widths)

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "dashboard_test_util.hpp"
#include "ui/dashboard.hpp"
#include "ui/lesson.hpp"
#include "ui/panel_race.hpp"

namespace {

struct Sizes {
  int width, height;
};
constexpr Sizes kSizes[] = {{1024, 768}, {1280, 720}, {1600, 900}, {1920, 1080}};

// Problems in this frame's windows and tables, read after the dashboard was drawn (before ImGui::Render()).
// reference: the reference font sizes, where also the items' ideal widths must fit (a tab bar squeezed to fit counts
// as clipped); else the tab views may scroll vertically and squeeze their tab titles, nothing else.
std::vector<std::string> layout_problems(bool reference) {
  const bool allow_vertical_scroll_in_tabs = !reference;
  std::vector<std::string> problems;
  ImGuiContext& g = *GImGui;
  for (ImGuiWindow* w : g.Windows) {
    if (!w->Active || w->Hidden) continue;
    const std::string name = w->Name;
    if (name.rfind("trainscope", 0) != 0) continue;  // the dashboard and its child windows (not tooltips)
    const bool tab_content = name.find("tab_content") != std::string::npos;
    const ImVec2 max_items(reference ? std::max(w->DC.CursorMaxPos.x, w->DC.IdealMaxPos.x) : w->DC.CursorMaxPos.x,
                           w->DC.CursorMaxPos.y);
    const ImRect work = w->WorkRect;
    if (max_items.x > work.Max.x + 0.5f)
      problems.push_back(name + ": items reach x " + std::to_string(max_items.x) + " beyond " +
                         std::to_string(work.Max.x));
    if (w->ScrollMax.x > 0) problems.push_back(name + ": scrolls sideways");
    const bool vertical_ok = allow_vertical_scroll_in_tabs && tab_content;
    if (!vertical_ok && w->DC.CursorMaxPos.y > work.Max.y + 0.5f)
      problems.push_back(name + ": items reach y " + std::to_string(w->DC.CursorMaxPos.y) + " below " +
                         std::to_string(work.Max.y));
    if (!vertical_ok && w->ScrollMax.y > 0) problems.push_back(name + ": scrolls vertically");
  }
  for (int i = 0; i < g.Tables.GetMapSize(); ++i) {
    const ImGuiTable* t = g.Tables.TryGetMapData(i);
    if (!t || t->LastFrameActive != g.FrameCount) continue;
    if (std::string(t->OuterWindow->Name).rfind("trainscope", 0) != 0) continue;
    for (int c = 0; c < t->ColumnsCount; ++c) {
      const ImGuiTableColumn& col = t->Columns[c];
      if (col.IsEnabled && col.ContentMaxXUnfrozen > col.MaxX + 0.5f)
        problems.push_back(std::string(t->OuterWindow->Name) + ": a cell of table column " + std::to_string(c) +
                           " is wider than the column");
    }
  }
  return problems;
}

struct Frame {
  std::vector<std::string> problems;
  float canvas_height = 0;  // the loss plot's canvas (0 when the accuracy plot is shown instead)
  float header_height = 0;
  bool accuracy_shown = false;
};

// Renders three frames of `dashboard` (ImGui settles auto-sized items over the first two) and reads the last.
Frame render(ui::OffscreenRenderer& renderer, ui::Dashboard& dashboard, const ui::DashboardView& view, bool reference,
             const std::string& png = "") {
  Frame f;
  const ui::Image img = renderer.render(
      [&] {
        dashboard.draw(view, nullptr);
        f.problems = layout_problems(reference);
        const ui::Plot& plot = dashboard.loss.loss_plot();
        f.canvas_height = plot.canvas_max().y - plot.canvas_min().y;
        f.header_height = dashboard.drawn().header_max.y - dashboard.drawn().header_min.y;
        f.accuracy_shown = dashboard.loss.accuracy_shown();
      },
      3);
  if (!png.empty()) test::keep_png(img, png);
  return f;
}

ui::DashboardView running_view(ui::DashboardModel& model) {
  ui::DashboardView view;
  view.runs = {test::fabricated_run("gpu", core::Precision::FP16), test::fabricated_run("cpu", core::Precision::FP16)};
  model.update(view.runs);
  view.model = &model;
  view.config = view.runs[0].config;
  return view;
}

}  // namespace

TEST_CASE("every size and mode, every view: nothing clipped or scrolled, the loss plot >= 40%, a fixed header") {
  const test::ValidationWatch validation;
  for (const Sizes size : kSizes) {
    auto renderer = test::make_renderer(size.width, size.height);
    if (!renderer) return;
    for (bool presentation : {false, true}) {
      renderer->set_style(ui::StyleOptions{18.0f, presentation});
      ui::DashboardModel model;
      const ui::DashboardView view = running_view(model);
      for (ui::Tab tab : ui::kTabs) {
        const std::string what = std::to_string(size.width) + "x" + std::to_string(size.height) +
                                 (presentation ? " presentation" : " normal") + ", " + ui::tab_name(tab);
        CAPTURE(what);
        ui::Dashboard dashboard;
        dashboard.show(tab);
        const Frame f = render(
            *renderer, dashboard, view, true,
            "layout_" + std::to_string(size.width) + (presentation ? "_p_" : "_n_") + ui::tab_name(tab) + ".png");
        for (const auto& p : f.problems) FAIL_CHECK(p);
        CHECK(f.canvas_height >= ui::kMinPlotShare * static_cast<float>(size.height));
        // Half the width from 1280x720 in presentation mode up, whatever the number of tabs (at 1024x768 in
        // presentation mode the Controls' rows need more than the other half; in a lesson they get less, below).
        if (size.width >= 1280)
          CHECK(dashboard.drawn().plots_max.x - dashboard.drawn().plots_min.x >=
                ui::kMinPlotWidthShare * static_cast<float>(size.width));
        CHECK(dashboard.drawn().layout.header_lines >= 3);  // the reference font sizes keep a full header
        if (tab == ui::Tab::Sweep) {  // the chart's data area a third of the tab at least, its x labels apart
          const auto& d = dashboard.sweep.drawn();
          CHECK(d.data_max.y - d.data_min.y >= d.panel_height / 3);
          REQUIRE(d.x_labels.size() >= 3);
          for (size_t i = 1; i < d.x_labels.size(); ++i) CHECK(d.x_labels[i].x > d.x_labels[i - 1].z);
          // "4096" whole, centred under the data area's right end (the area stops half a label short of the panel's).
          CHECK((d.x_labels.back().x + d.x_labels.back().z) / 2 == doctest::Approx(d.data_max.x).epsilon(0.001));
        }
        if (tab == ui::Tab::Roofline) {  // every dot's number named beside a dot or in the key
          const auto& d = dashboard.roofline.drawn();
          CHECK_FALSE(d.dots.empty());
          for (const auto& [kernel, number] : d.dots) {
            const std::string entry = std::to_string(number) + " " + kernel;
            const bool named = std::find(d.in_chart.begin(), d.in_chart.end(), entry) != d.in_chart.end() ||
                               std::find(d.key.begin(), d.key.end(), entry) != d.key.end();
            CHECK_MESSAGE(named, entry);
          }
        }
      }
    }
  }
}

// The longest caption of the lessons that come with trainscope (assets/lessons/*.json).
std::string longest_shipped_caption() {
  const char* source = std::getenv("TRAINSCOPE_SOURCE_DIR");
  REQUIRE_MESSAGE(source != nullptr, "set TRAINSCOPE_SOURCE_DIR (ctest does)");
  std::string longest;
  int lessons = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(source) / "assets" / "lessons")) {
    if (entry.path().extension() != ".json") continue;
    ++lessons;
    for (const auto& step : ui::load_lesson(entry.path().string()).steps)
      if (step.caption && step.caption->size() > longest.size()) longest = *step.caption;
  }
  CHECK(lessons >= 5);
  return longest;
}

// `text` with its runs of spaces and newlines as single spaces, trimmed: what the caption's lines show joined.
std::string words_of(const std::string& text) {
  std::string out;
  for (char c : text) {
    const bool space = c == ' ' || c == '\n';
    if (space && (out.empty() || out.back() == ' ')) continue;
    out += space ? ' ' : c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

TEST_CASE("a lesson's caption: inside the window, whole words, in large type, the plots keep half the width") {
  const std::string caption = longest_shipped_caption();
  CAPTURE(caption);
  REQUIRE(caption.size() > 40);
  const test::ValidationWatch validation;
  for (const Sizes size : kSizes) {
    auto renderer = test::make_renderer(size.width, size.height);
    if (!renderer) return;
    for (bool presentation : {false, true}) {
      CAPTURE(size.width);
      CAPTURE(presentation);
      renderer->set_style(ui::StyleOptions{18.0f, presentation});
      ui::DashboardModel model;
      ui::DashboardView view = running_view(model);
      view.caption = view.caption_reserve = caption;
      view.caption_hint = "10/12 · Space: next";
      ui::Dashboard dashboard;
      dashboard.show(ui::Tab::Kernels);
      const Frame f = render(*renderer, dashboard, view, true,
                             "caption_" + std::to_string(size.width) + (presentation ? "_p.png" : "_n.png"));
      for (const auto& p : f.problems) FAIL_CHECK(p);
      const ui::DrawnLayout& d = dashboard.drawn();
      CHECK(d.caption_min.x >= 0);
      CHECK(d.caption_min.y >= d.header_max.y);  // under the header: it covers no figure
      CHECK(d.caption_max.x <= static_cast<float>(size.width));
      CHECK(d.caption_max.y <= d.plots_min.y);  // above the plots: it never hides a curve
      CHECK(d.caption_widest <= d.caption_text_width);
      CHECK(d.caption_widest > 0);
      // Every word, whole, in order: nothing cut, no word broken across lines.
      std::string joined;
      for (const auto& line : d.caption_text) joined += (joined.empty() ? "" : " ") + line;
      CHECK(joined == words_of(caption));
      CHECK(d.plots_max.x - d.plots_min.x >= ui::kMinPlotWidthShare * static_cast<float>(size.width));
      CHECK(f.canvas_height >= ui::kMinPlotShare * static_cast<float>(size.height));
    }
  }
}

TEST_CASE("a caption of 20,000 characters is cut with an ellipsis, not an abort") {
  // Issue 25, item 4: drawn whole in one AddText it overflowed ImGui's 16-bit vertex indices (rc 134).
  auto renderer = test::make_renderer(1280, 720);
  if (!renderer) return;
  renderer->set_style(ui::StyleOptions{18.0f, true});
  std::string caption;
  while (caption.size() < 20000) caption += "memory-bound kernels read and write more bytes than they compute ";
  caption += std::string(3000, 'x');  // and one word longer than any line
  for (const std::string& text : {caption, std::string(20000, 'y')}) {
    ui::DashboardModel model;
    ui::DashboardView view = running_view(model);
    view.caption = view.caption_reserve = text;
    ui::Dashboard dashboard;
    dashboard.show(ui::Tab::Kernels);  // (the Controls' rows may scroll under a caption band of 3 lines)
    const Frame f = render(*renderer, dashboard, view, true, "caption_20000_" + text.substr(0, 1) + ".png");
    for (const auto& p : f.problems) FAIL_CHECK(p);
    const ui::DrawnLayout& d = dashboard.drawn();
    REQUIRE_FALSE(d.caption_text.empty());
    CHECK(static_cast<int>(d.caption_text.size()) == d.layout.caption_lines);
    CHECK(d.layout.caption_lines <= ui::kMaxCaptionLines);
    CHECK(d.caption_text.back().size() < 400);
    const std::string last = d.caption_text.back();
    CHECK(last.substr(last.size() - 3) == "\xE2\x80\xA6");  // "…"
    CHECK(d.caption_widest <= d.caption_text_width);
    CHECK(f.canvas_height >= ui::kMinPlotShare * 720.0f);
  }
}

TEST_CASE("the race header keeps its height in every state of the backends") {
  auto renderer = test::make_renderer(1280, 720);
  if (!renderer) return;
  for (bool presentation : {false, true}) {
    renderer->set_style(ui::StyleOptions{18.0f, presentation});
    ui::DashboardModel model;
    ui::DashboardView base = running_view(model);
    std::vector<std::pair<std::string, ui::DashboardView>> states;
    states.emplace_back("running", base);
    ui::DashboardView starting;
    starting.runs = {core::BackendRun{}, core::BackendRun{}};
    starting.runs[0].name = "gpu";
    starting.runs[1].name = "cpu";
    starting.runs[0].building = true;
    starting.runs[0].building_what = "start";
    starting.runs[0].build_stage = "uploading 210 MiB of data";
    states.emplace_back("starting", starting);
    ui::DashboardView applying = base;
    applying.live = true;
    applying.config.batch = 2048;
    applying.runs[0].building = true;
    applying.runs[0].building_what = "batch 512 -> 2048";
    applying.runs[0].build_stage = "saving the state";
    states.emplace_back("applying a change, pending on the CPU", applying);
    ui::DashboardView stopped = base;
    stopped.runs[0].error = std::string(300, 'x') + ": a very long error message that must not wrap";
    stopped.runs[1].paused = true;
    states.emplace_back("stopped and paused", stopped);
    float height = -1;
    for (auto& [name, view] : states) {
      CAPTURE(name);
      ui::Dashboard dashboard;
      const Frame f = render(*renderer, dashboard, view, true);
      for (const auto& p : f.problems) FAIL_CHECK(p);
      if (height < 0) height = f.header_height;
      CHECK(f.header_height == doctest::Approx(height));
    }
  }
}

TEST_CASE("every font size 10..48 px: the loss plot keeps 40% of the height, nothing spills sideways") {
  for (const Sizes size : kSizes) {
    auto renderer = test::make_renderer(size.width, size.height);
    if (!renderer) return;
    for (bool presentation : {false, true}) {
      for (float font = ui::kMinFontSize; font <= ui::kMaxFontSize; font += 6) {
        CAPTURE(size.width);
        CAPTURE(presentation);
        CAPTURE(font);
        renderer->set_style(ui::StyleOptions{font, presentation});
        ui::DashboardModel model;
        const ui::DashboardView view = running_view(model);
        ui::Dashboard dashboard;
        dashboard.show(ui::Tab::Kernels);
        const Frame f = render(*renderer, dashboard, view, false);
        for (const auto& p : f.problems) FAIL_CHECK(p);
        CHECK(f.canvas_height >= ui::kMinPlotShare * static_cast<float>(size.height));
      }
    }
  }
}

TEST_CASE("compute_layout: the plot's share first, then the header, then the quick bar") {
  // The metrics of presentation mode at 1280x720 (27 px type).
  ui::LayoutMetrics m;
  m.width = 1280;
  m.height = 720;
  m.font = 27;
  m.text_line = 35;
  m.header_line = 30;
  m.views_min_width = 600;
  m.frame_row = 48;
  m.padding_x = m.padding_y = 16;
  m.spacing_y = 8;
  ui::DashboardLayout l = ui::compute_layout(m);
  CHECK(l.header_lines == 4);
  CHECK(l.header_height == 4 * 30);
  CHECK(l.quick_bar);
  CHECK(l.body_height - 2 * m.padding_y - m.frame_row >= l.min_loss_canvas);
  CHECK(l.min_loss_canvas == doctest::Approx(0.4 * 720));
  CHECK_FALSE(l.controls_column);               // 1280 px is 47 font sizes: two columns
  CHECK(l.plots_width <= 1280 - 2 * 16 - 600);  // the views keep their width
  // Type so large that 4 header lines and the quick bar leave the plot too little: 3 lines, then 2, then no bar.
  m.font = 60;
  m.header_line = 67;
  m.text_line = 80;
  m.frame_row = 105;
  m.padding_x = m.padding_y = 20;  // ui::apply_style caps padding and spacing at large type
  m.spacing_y = 12;
  l = ui::compute_layout(m);
  CHECK(l.header_lines < 4);
  CHECK(l.body_height - 2 * m.padding_y - m.frame_row >= l.min_loss_canvas);
  m.font = 72;
  m.header_line = 81;
  m.frame_row = 127;
  l = ui::compute_layout(m);
  CHECK(l.header_lines == 2);
  CHECK_FALSE(l.quick_bar);
  CHECK(l.body_height - 2 * m.padding_y - m.frame_row >= l.min_loss_canvas);
  // A lesson's caption band: the lines its caption wants while the plot keeps its share, the header at most 3 lines;
  // a caption that wants more than there is room for gets fewer lines, the header and the quick bar giving way first.
  m = ui::LayoutMetrics{1280, 720, 27, 35, 30, 600, 48, 16, 16, 8, 8, 37, 3};
  l = ui::compute_layout(m);
  CHECK(l.caption_lines == 3);
  CHECK(l.header_lines == 3);
  CHECK(l.caption_height > 3 * 37);
  CHECK(l.body_height - 2 * m.padding_y - m.frame_row >= l.min_loss_canvas);
  m.caption_lines = 20;
  l = ui::compute_layout(m);
  CHECK(l.caption_lines >= 1);
  CHECK(l.caption_lines < 20);
  CHECK(l.header_lines == 2);
  CHECK_FALSE(l.quick_bar);
  CHECK(l.body_height - 2 * m.padding_y - m.frame_row >= l.min_loss_canvas);
  // Wide and small type: the Controls get a column of their own.
  m = ui::LayoutMetrics{1920, 1080, 18, 23, 20, 400, 31, 11, 11, 5};
  l = ui::compute_layout(m);
  CHECK(l.controls_column);
  CHECK(l.plots_width + l.controls_width < 1920);
}

TEST_CASE("visible_tabs: every title when all fit; else the first ones, the selected one always, and a More button") {
  const std::vector<float> w = {100, 80, 90, 120, 100};  // 490 px with no gaps, 530 with gaps of 10
  CHECK(ui::visible_tabs(w, 0, 530, 10, 60) == std::vector<int>{0, 1, 2, 3, 4});
  // 400 px: the More button (60 + a gap) leaves 330: the first three (100 + 80 + 90 + 2 gaps = 290).
  CHECK(ui::visible_tabs(w, 1, 400, 10, 60) == std::vector<int>{0, 1, 2});
  // The selected title is always shown: in the last place, the titles before it giving way.
  CHECK(ui::visible_tabs(w, 4, 400, 10, 60) == std::vector<int>{0, 1, 4});
  CHECK(ui::visible_tabs(w, 3, 300, 10, 60) == std::vector<int>{0, 3});
  // A row narrower than any title: the selected one alone (the caller clips it).
  CHECK(ui::visible_tabs(w, 2, 50, 10, 60) == std::vector<int>{2});
}

TEST_CASE("the Sweep tab draws the sweep the view carries (the controller runs it): its series and the crossover") {
  // app::DashboardSweep runs the sweep; the tab draws DashboardView::sweep. A finished sweep of made-up points: the
  // GPU's samples/s grow with the batch, the CPU's with its square root: equal at 64, the crossover.
  auto renderer = test::make_renderer(1280, 720);
  if (!renderer) return;
  ui::DashboardModel model;
  ui::DashboardView view = running_view(model);
  view.sweep.status = "done";
  view.sweep.total = 26;
  view.sweep.seconds = 95;
  view.sweep.result.crossover = 64;
  view.sweep.result.crossover_text = "batch 64";
  for (int batch = 1; batch <= 4096; batch *= 2)
    for (const char* backend : {"gpu", "cpu"}) {
      run::SweepPoint p;
      p.backend = p.series = backend;
      p.batch = batch;
      p.steps = 5;
      p.samples_per_s = std::string(backend) == "gpu" ? 1000.0 * batch : 8000.0 * std::sqrt(double(batch));
      p.ms_per_step = 1000.0 * batch / p.samples_per_s;
      view.sweep.result.points.push_back(p);
    }
  ui::Dashboard dashboard;
  dashboard.show(ui::Tab::Sweep);
  const Frame f = render(*renderer, dashboard, view, true, "layout_sweep_done.png");
  for (const auto& problem : f.problems) FAIL_CHECK(problem);
  const auto& d = dashboard.sweep.drawn();
  REQUIRE_FALSE(d.word_lines.empty());
  CHECK(d.word_lines.front().rfind("Crossover: batch 64", 0) == 0);
  view.sweep = {};  // none run yet: no words under the plot
  render(*renderer, dashboard, view, true);
  CHECK(dashboard.sweep.drawn().word_lines.empty());
}

TEST_CASE("batch_label_stride: labels of the sweep's x axis keep their gap, from every second power of two up") {
  // 12 powers of two over 600 px: 50 px each. "4096" 40 px wide with a gap of 8 needs 48 px: every second one fits.
  CHECK(ui::batch_label_stride(600, 40, 8) == 2);
  CHECK(ui::batch_label_stride(240, 40, 8) == 3);  // 20 px per power: 60 px at 3 >= 48
  CHECK(ui::batch_label_stride(150, 40, 8) == 4);  // 12.5 px: 50 at 4
  CHECK(ui::batch_label_stride(100, 40, 8) == 6);  // 8.3 px: 50 at 6
  CHECK(ui::batch_label_stride(40, 40, 8) == 12);  // only 1 and 4096
  for (float span = 20; span < 2000; span += 7) {
    const int s = ui::batch_label_stride(span, 40, 8);
    CHECK(12 % s == 0);  // 4096 (2^12) always labelled
    if (s < 12) CHECK(static_cast<float>(s) / 12 * span >= 48);
  }
}

TEST_CASE("the header's speedup: a figure at every ratio, never '0.000x'") {
  CHECK(ui::speedup_figure(24.4) == "24x");
  CHECK(ui::speedup_figure(2.5) == "2.50x");
  CHECK(ui::speedup_figure(0.0959) == "0.096x");
  CHECK(ui::speedup_figure(0.0005) == "0.001x");  // rounds up to the smallest figure shown
  CHECK(ui::speedup_figure(3.6e-6) == "<0.001x");  // a GPU 277474x slower (3 s steps against the CPU's 11 us)
  CHECK(ui::as_fast_text(2.5) == "the GPU is 2.5x as fast");
  CHECK(ui::as_fast_text(0.096) == "the CPU is 10.4x as fast");
  CHECK(ui::as_fast_text(1 / 277473.5) == "the CPU is 277474x as fast");  // no tenths from 100x up
  CHECK(ui::as_fast_text(0.096, true) == "CPU 10.4x as fast");
}

TEST_CASE("the header's samples/s: the steady rate while running, a finished run's whole epochs, never 'measuring'") {
  core::BackendRun r;
  r.step_losses.assign(32, 1.0f);
  CHECK(ui::rate_text(r) == "measuring samples/s");  // running, no steady window yet
  // Taking turns with steps that outlast any wait: no figure will come, and the header says why.
  r.rate_note = "25 s steps outlast the turns";
  CHECK(ui::rate_text(r) == "no samples/s: 25 s steps outlast the turns");
  r.recent_samples_per_s = 20181;  // a figure measured alone before still shows
  CHECK(ui::rate_text(r) == "20.2 k samples/s");
  r.rate_note.clear();
  // Finished: the whole epochs' rate, weighted by their seconds (1000/s for 1 s and 3000/s for 3 s: 2500/s), the
  // rate the finished race's speedup divides, whatever the last window's rate was.
  r.finished = true;
  r.epochs = {core::EpochRecord{.epoch = 1, .samples_per_s = 1000, .seconds = 1},
              core::EpochRecord{.epoch = 2, .samples_per_s = 3000, .seconds = 3}};
  CHECK(ui::rate_text(r) == "2500 samples/s over the run");
  r.recent_samples_per_s = 0;  // finished before a steady window: it said "measuring samples/s" beside a speedup
  CHECK(ui::rate_text(r) == "2500 samples/s over the run");
  r.epochs.clear();  // stopped before an epoch ended: no whole-run rate, and nothing is being measured any more
  CHECK(ui::rate_text(r) == "samples/s not measured (too few steps)");
}
