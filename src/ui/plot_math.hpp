// The ImGui-free half of the plot widget (ui/plot.hpp): a Series that keeps a whole run, "nice" tick values and their
// labels, min/max-per-pixel-column downsampling, nearest-point lookup by x, and the view transforms (data <-> pixel,
// zoom, pan, auto-fit). Everything here is pure and unit-tested in tests/test_ui_plot.cpp.
#pragma once
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace ui {

// A closed interval [lo, hi] of data values on one axis.
struct Range {
  double lo = 0;
  double hi = 1;
  double span() const { return hi - lo; }
  bool contains(double v) const { return v >= lo && v <= hi; }
  bool operator==(const Range&) const = default;
};

struct Downsampled;

// The (x, y) points of one curve (e.g. the loss per step of one backend), x non-decreasing.
// Keeps the whole run: storage grows by capacity doubling (two std::vectors, x and y apart so binary searches walk
// contiguous x) and nothing is ever dropped; 1e6 points take 16 MB. Not a ring that overwrites: a teacher scrolling
// back to step 10 of a long run must still find it. One writer; read it on the writer's thread (the UI thread copies
// from run snapshots into its Series).
class Series {
 public:
  // Appends a point. Returns false and stores nothing when x is not finite or smaller than the last x (a caller bug
  // that would break every binary search below). y may be NaN or infinite (a diverged loss): stored, but left out of
  // extents, downsampling and drawing.
  bool push(double x, double y);
  void reserve(std::size_t n);
  void clear();

  std::size_t size() const { return xs_.size(); }
  bool empty() const { return xs_.empty(); }
  double x(std::size_t i) const { return xs_[i]; }
  double y(std::size_t i) const { return ys_[i]; }
  std::span<const double> xs() const { return xs_; }
  std::span<const double> ys() const { return ys_; }

  // [first x, last x]; nullopt when empty. O(1).
  std::optional<Range> x_extent() const;
  // [min y, max y] over finite y, or over y > 0 only when positive_only (for a log axis); nullopt when no y counts.
  // O(1): kept up to date by push().
  std::optional<Range> y_extent(bool positive_only = false) const;
  // Indices [first, last) of the points with lo <= x <= hi. Binary search, O(log n).
  std::pair<std::size_t, std::size_t> index_range(double lo, double hi) const;

 private:
  friend void downsample_min_max(const Series& s, Range x, int width, bool positive_only, Downsampled& out);

  // What downsampling needs of kBlock consecutive points to take them in one step when they fall in one pixel column:
  // 1e6 points on a 1000-pixel plot then cost ~16k merges of these summaries, read in order (1 byte per point),
  // instead of 1e6 point visits. Offsets are within the block.
  static constexpr std::size_t kBlock = 64;
  struct Summary {
    std::uint8_t count = 0;  // drawable points in the block
    std::uint8_t first = 0, last = 0, min = 0, max = 0;
    double y_min = 0, y_max = 0;
  };
  struct Block {
    double x_first = 0, x_last = 0;
    Summary finite;    // over finite y
    Summary positive;  // over finite y > 0 (a log axis)
  };
  static constexpr double kInf = std::numeric_limits<double>::infinity();

  std::vector<double> xs_, ys_;
  std::vector<Block> blocks_;                // blocks_[b] covers points [b * kBlock, (b + 1) * kBlock)
  double y_min_ = kInf, y_max_ = -kInf;      // over finite y
  double pos_min_ = kInf, pos_max_ = -kInf;  // over finite y > 0
};

// ---- ticks -----------------------------------------------------------------------------------------------------

struct Tick {
  double value = 0;
  std::string label;  // empty for a minor tick (a faint grid line only)
  bool major = true;
};

// The step 1, 2 or 5 x 10^k nearest to span / target_count, rounding at 1.5, 3 and 7 as in Heckbert, "Nice numbers
// for graph labels", Graphics Gems (1990). span <= 0 or not finite gives 1.
double nice_step(double span, int target_count);

// Ticks at the multiples of nice_step(r.span(), target_count) inside r (about target_count of them, 0.6x to 1.5x),
// all major and labelled alike by tick_label. Values are computed as i * step without accumulation, so 0.3 is the
// double nearest 0.3, and its label is "0.3", never "0.30000000000000004".
std::vector<Tick> linear_ticks(Range r, int target_count);

// Ticks for a log axis (needs r.lo > 0): the decades 10^k inside r, every n-th one when there are more than
// target_count; when few decades are shown, 2 and 5 x 10^k are labelled too and 3, 4, 6..9 x 10^k are unlabelled minor
// ticks. A range inside one decade with fewer than two such ticks gets linear_ticks instead.
std::vector<Tick> log_ticks(Range r, int target_count);

// The label of tick `value` on an axis whose ticks are `step` apart and whose largest |tick| is `magnitude`: only as
// many decimals as the step needs ("0.25", "12", "-3.5"); SI suffixes k/M/G/T from 1e4 on ("12k", "2.5M");
// scientific ("1.5e-5", "2e20") below 1e-3 or from 1e15 on, or when a fixed label would need more than 6 decimals.
std::string tick_label(double value, double step, double magnitude);

// A data value for tooltips: integers exactly up to 1e9 ("12345"), else 4 significant digits ("0.1234", "12.35k",
// "1.235e-7"); "nan", "inf", "-inf" as such.
std::string format_value(double v);

// ---- downsampling ------------------------------------------------------------------------------------------------

// The drawable points of one pixel column (finite y, and y > 0 on a log axis): indices of the first and last point,
// of the smallest and of the largest y (the first such point on ties), and those y. count == 0: an empty column.
struct Column {
  std::size_t first = 0, last = 0, min = 0, max = 0;
  double y_min = 0, y_max = 0;
  std::size_t count = 0;
};

struct Downsampled {
  std::vector<Column> columns;        // one per pixel column, left to right
  std::optional<std::size_t> before;  // the last drawable point left of the x range: where a line entering it starts
  std::optional<std::size_t> after;   // the first drawable point right of it: where a line leaving it ends
};

// Bins the points with x in [x.lo, x.hi] into `width` equal pixel columns (column c holds
// x.lo + c * x.span() / width <= x < x.lo + (c + 1) * x.span() / width; x == x.hi goes to the last column) and keeps
// the first, last, min and max of each: the M4 aggregation of Jugel et al., "M4: A Visualization-Oriented Time Series
// Data Aggregation", VLDB 2014. A line through those points in index order rasterizes like the line through every
// point. Reads only the visible points (binary search for the x range), so a frame costs O(visible + width). `out`
// is reused to spare allocations. Points with non-finite y (or y <= 0 when positive_only) are skipped.
void downsample_min_max(const Series& s, Range x, int width, bool positive_only, Downsampled& out);

// The indices to draw, in order: `before`, then each column's first/min/max/last sorted by index without repeats,
// then `after`. Clears `out` first.
void drawable_indices(const Downsampled& d, std::vector<std::size_t>& out);

// ---- lookup --------------------------------------------------------------------------------------------------------

struct NearestPoint {
  std::size_t index = 0;
  double x = 0, y = 0;
};

// The point whose x is nearest to `x` (the first one on ties); nullopt when `s` is empty or x is NaN. O(log n).
std::optional<NearestPoint> nearest_by_x(const Series& s, double x);

// ---- view transforms -------------------------------------------------------------------------------------------

// Maps the data values of one axis to pixels: range.lo -> p_lo, range.hi -> p_hi (for a y axis p_lo is the bottom
// pixel, larger than p_hi: screen y grows downwards). A log axis is linear in log10(v); there v <= 0 maps to NaN.
struct AxisMap {
  Range range;
  double p_lo = 0, p_hi = 1;
  bool log = false;
  double to_pixel(double v) const;
  double to_data(double p) const;
};

// `r` zoomed by `factor` (< 1 zooms in) about `anchor`, a data value that keeps its pixel position; in log10 space on a
// log axis. Returns r unchanged rather than a range too thin or too wide for doubles (span < 1e-12 of its magnitude,
// or beyond 1e±300).
Range zoom(Range r, double anchor, double factor, bool log);

// `r` moved by `fraction` of its span (of its log10 span on a log axis): pan(r, 0.1, false) shows what lay 10% of a
// view to the right.
Range pan(Range r, double fraction, bool log);

// The range auto-fit shows for data spanning `extent`: widened by pad * span on each side (in log10 space on a log
// axis, where extent.lo must be > 0). A single value v gets v +- 10% (+-0.5 for 0), or a quarter decade each side on
// a log axis.
Range fit_range(Range extent, double pad, bool log);

// A range a log axis can show: r itself when r.lo > 0; otherwise r.lo is replaced by the smallest positive y of the
// data (positive_extent->lo) when that lies below r.hi, else by r.hi / 1000. With r.hi <= 0 too: the auto-fit of
// positive_extent, or [0.1, 10] without positive data.
Range log_safe(Range r, std::optional<Range> positive_extent);

}  // namespace ui
