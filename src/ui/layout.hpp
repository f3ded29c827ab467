// Where the dashboard's parts go, computed from the window size and the font's metrics alone, before anything is
// drawn: the projector (1280x720 in presentation mode) is the reference, and the rules hold at every size from
// 1024x768 up and every font size 10-48 px:
//   - the loss plot's canvas is at least 40% of the window's height (kMinPlotShare), first of all;
//   - in a lesson, a caption band under the header, across the whole width, as many lines of large type as the
//     lesson's longest caption needs (kCaptionScale font sizes each); the header and the quick bar give way before
//     it does, and only then is it cut to fewer lines (ending in an ellipsis);
//   - the race header has a fixed height: 4 lines (3 in a lesson, whose caption takes the room), fewer (down to 2)
//     only when the plot needs the room;
//   - one row of quick controls along the bottom (pause, reset, batch presets, precision, screenshot), dropped only
//     when even a 2-line header leaves the plot too little (then the Controls tab has them all);
//   - the body: the plots on the left, the other views (ui::kTabs) as tabs on the right, as wide as the controls'
//     rows need (their titles in one row, those that do not fit in a "More" menu at the row's end, visible_tabs);
//     the plots take the rest up to 52%: at least half the width (kMinPlotWidthShare) from 1280x720 in presentation
//     mode up whatever the number of tabs, and in a lesson at every size (its caption is about them), 30% at the
//     least; wide windows (at least kThreeColumnsEm font sizes wide) keep the Controls in a column of their own.
// The accuracy plot is shown under the loss plot when both fit (each at least kMinAccuracyLines lines), else the
// plot panel switches between them.
#pragma once
#include <string>
#include <vector>

namespace ui {

inline constexpr float kMinPlotShare = 0.40f;
inline constexpr float kMinPlotWidthShare = 0.50f;
inline constexpr float kThreeColumnsEm = 100.0f;
inline constexpr float kCaptionScale = 1.2f;        // the caption's type, in font sizes
inline constexpr int kMaxCaptionLines = 3;          // a longer caption is cut with an ellipsis
inline constexpr float kMinAccuracyLines = 7.0f;
inline constexpr float kTabPaddingEm = 0.25f;       // font sizes of padding either side of a tab's title
inline constexpr float kHeaderLineSpacing = 0.12f;  // font sizes between the header's lines (tighter than ImGui's)

// The sizes the layout depends on, in pixels (ImGui's current font and style; see layout_metrics()).
struct LayoutMetrics {
  float width = 0, height = 0;  // the window
  float font = 0;               // ImGui::GetFontSize()
  float text_line = 0;          // ImGui::GetTextLineHeightWithSpacing()
  float header_line = 0;        // a line of the race header (kHeaderLineSpacing apart)
  float views_min_width = 0;    // the tabbed views' narrowest useful width (the controls' widest row)
  float frame_row = 0;          // ImGui::GetFrameHeightWithSpacing(): one row of buttons or fields
  float padding_x = 0, padding_y = 0;  // WindowPadding
  float spacing_x = 0, spacing_y = 0;  // ItemSpacing
  float caption_line = 0;       // a line of the caption band (kCaptionScale font sizes, with its spacing)
  int caption_lines = 0;        // the lines the caption band wants (0: no band, not a lesson)
};

// The current ImGui context's metrics for a window of width x height; caption_lines: what the band wants (see
// caption_band_lines).
LayoutMetrics layout_metrics(float width, float height, int caption_lines = 0);

// The lines a caption band `width` pixels wide needs for `caption` in the current font at kCaptionScale (0 for "").
int caption_band_lines(const std::string& caption, float width);
// The caption band's padding around its text, pixels (a fraction of the caption's line): part of caption_height.
float caption_band_padding(const LayoutMetrics& m);

struct DashboardLayout {
  int header_lines = 4;        // lines of the race header (2..4)
  float header_height = 0;     // pixels, fixed for the window and font (whatever the header shows)
  int caption_lines = 0;       // lines of the caption band (0: none)
  float caption_height = 0;    // its height, with its padding and the separator under it
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
