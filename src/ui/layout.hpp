// Where the dashboard's parts go, computed from the window size and the font's metrics alone, before anything is
// drawn: the projector (1280x720 in presentation mode) is the reference, and the rules hold at every size from
// 1024x768 up and every font size 10-48 px:
//   - the loss plot's canvas is at least 40% of the window's height (kMinPlotShare), first of all;
//   - the race header has a fixed height: 4 lines, fewer (down to 2) only when the plot needs the room;
//   - one row of quick controls along the bottom (pause, reset, batch presets, precision, screenshot), dropped only
//     when even a 2-line header leaves the plot too little (then the Controls tab has them all);
//   - the body: the plots on the left, the other views (ui::kTabs) as tabs on the right, as wide as their titles
//     in one row and the controls' rows need (the plots give way down to 30% of the width; titles that still do
//     not fit go into a "More" menu at the row's end, visible_tabs); wide windows (at least kThreeColumnsEm font sizes wide) keep the Controls in a column of
//     their own.
// The accuracy plot is shown under the loss plot when both fit (each at least kMinAccuracyLines lines), else the
// plot panel switches between them.
#pragma once
#include <vector>

namespace ui {

inline constexpr float kMinPlotShare = 0.40f;
inline constexpr float kThreeColumnsEm = 92.0f;
inline constexpr float kMinAccuracyLines = 7.0f;
inline constexpr float kTabPaddingEm = 0.25f;       // font sizes of padding either side of a tab's title
inline constexpr float kHeaderLineSpacing = 0.12f;  // font sizes between the header's lines (tighter than ImGui's)

// The sizes the layout depends on, in pixels (ImGui's current font and style; see layout_metrics()).
struct LayoutMetrics {
  float width = 0, height = 0;  // the window
  float font = 0;               // ImGui::GetFontSize()
  float text_line = 0;          // ImGui::GetTextLineHeightWithSpacing()
  float header_line = 0;        // a line of the race header (kHeaderLineSpacing apart)
  float views_min_width = 0;    // the tabbed views' narrowest useful width (the tab titles in one row, the controls' rows)
  float frame_row = 0;          // ImGui::GetFrameHeightWithSpacing(): one row of buttons or fields
  float padding_x = 0, padding_y = 0;  // WindowPadding
  float spacing_x = 0, spacing_y = 0;  // ItemSpacing
};

// The current ImGui context's metrics for a window of width x height.
LayoutMetrics layout_metrics(float width, float height);

struct DashboardLayout {
  int header_lines = 4;        // lines of the race header (2..4)
  float header_height = 0;     // pixels, fixed for the window and font (whatever the header shows)
  bool quick_bar = true;       // the bottom row of quick controls
  float bar_height = 0;        // its height (0 without it)
  float body_height = 0;       // plots and tabs
  float plots_width = 0;       // the left column
  bool controls_column = false;  // Controls beside the tabs instead of among them
  float controls_width = 0;
  float min_loss_canvas = 0;   // the loss plot's canvas must be at least this tall (kMinPlotShare of the height)
};

// The layout for `m`, following the rules above. A pure function.
DashboardLayout compute_layout(const LayoutMetrics& m);

// The tab titles shown in one row of `row` pixels: `widths` are the titles' widths in their order, `gap` the space
// between two, `more` the width of the "More" button that lists the others. All of them when they fit; else the
// first ones that fit beside the More button, the selected one (index `selected`) always among them (in the last
// place when it would not be). Returns the indices shown, in the order to draw them. A pure function.
std::vector<int> visible_tabs(const std::vector<float>& widths, int selected, float row, float gap, float more);

}  // namespace ui
