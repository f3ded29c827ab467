// The pure parts of the plot widget: Series storage, ticks and labels, M4 downsampling, lookup, view transforms.
#include "ui/plot_math.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

namespace ui {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// 10^k: exact for 0 <= k <= 22 (powers of ten up to 1e22 are exact doubles, and so is every product on the way),
// correctly rounded for -22 <= k < 0 (one division of exact numbers). Not std::pow, which only glibc's makes exact
// here: mingw-w64's pow(10, -3) is not the double nearest 0.001, and the axis labels then read "0.000999...".
double pow10(int k) {
  if (k < -22 || k > 22) return std::pow(10.0, k);
  double p = 1;
  for (int i = 0; i < (k < 0 ? -k : k); ++i) p *= 10;
  return k < 0 ? 1 / p : p;
}

// floor(log10(v)) for v > 0, robust to log10 returning 2.9999999999999996 for 1000.
int decade_of(double v) {
  int e = static_cast<int>(std::floor(std::log10(v)));
  if (pow10(e + 1) <= v) ++e;
  if (pow10(e) > v) --e;
  return e;
}

// m * 10^e rounded once: dividing by an exact 10^-e keeps 0.3 as the double nearest 0.3 (3 * 0.1 would not).
double scaled(double m, int e) { return e >= 0 ? m * pow10(e) : m / pow10(-e); }

// v with `decimals` decimals and a suffix: fixed(12.5, 1, "k") is "12.5k".
std::string fixed(double v, int decimals, const char* suffix = "") {
  std::array<char, 64> buf{};
  std::snprintf(buf.data(), buf.size(), "%.*f%s", decimals, v, suffix);
  return buf.data();
}

// "%.{decimals}fe{exp}" with the exponent of |value| itself: "1.5e-5", "2e20" (9.96e3 with 1 decimal: "1.0e4").
std::string scientific(double value, int decimals) {
  int e = decade_of(std::abs(value));
  if (std::round(std::abs(value) / scaled(1, e) * pow10(decimals)) >= 10 * pow10(decimals)) ++e;
  std::array<char, 64> buf{};
  std::snprintf(buf.data(), buf.size(), "%.*fe%d", decimals, value / scaled(1, e), e);
  return buf.data();
}

// The SI prefixes used on axes, for 10^(3 i).
constexpr std::array<const char*, 5> kSiSuffix = {"", "k", "M", "G", "T"};

}  // namespace

// ---- Series ------------------------------------------------------------------------------------------------------

namespace {

// Adds point `index` (y) to a min/max summary (a block's Series::Summary, with offsets in the block, or a
// downsampling Column, with indices in the series): first, last, min and max; ties keep the first min/max.
template <typename Summary, typename Index>
void summarize(Summary& s, double y, Index index) {
  if (s.count == 0) {
    s.first = s.min = s.max = index;
    s.y_min = s.y_max = y;
  } else if (y < s.y_min) {
    s.min = index;
    s.y_min = y;
  } else if (y > s.y_max) {
    s.max = index;
    s.y_max = y;
  }
  s.last = index;
  ++s.count;
}

}  // namespace

bool Series::push(double x, double y) {
  if (!std::isfinite(x) || (!xs_.empty() && x < xs_.back())) return false;
  const std::size_t i = xs_.size();
  xs_.push_back(x);
  ys_.push_back(y);
  if (i % kBlock == 0) {
    blocks_.emplace_back();
    blocks_.back().x_first = x;
  }
  blocks_.back().x_last = x;
  if (std::isfinite(y)) {
    const auto offset = static_cast<std::uint8_t>(i % kBlock);
    summarize(blocks_.back().finite, y, offset);
    y_min_ = std::min(y_min_, y);
    y_max_ = std::max(y_max_, y);
    if (y > 0) {
      summarize(blocks_.back().positive, y, offset);
      pos_min_ = std::min(pos_min_, y);
      pos_max_ = std::max(pos_max_, y);
    }
  }
  return true;
}

void Series::reserve(std::size_t n) {
  xs_.reserve(n);
  ys_.reserve(n);
  blocks_.reserve((n + kBlock - 1) / kBlock);
}

void Series::clear() { *this = Series{}; }

std::optional<Range> Series::x_extent() const {
  if (xs_.empty()) return std::nullopt;
  return Range{xs_.front(), xs_.back()};
}

std::optional<Range> Series::y_extent(bool positive_only) const {
  const double lo = positive_only ? pos_min_ : y_min_;
  const double hi = positive_only ? pos_max_ : y_max_;
  if (lo > hi) return std::nullopt;
  return Range{lo, hi};
}

std::pair<std::size_t, std::size_t> Series::index_range(double lo, double hi) const {
  const auto first = std::lower_bound(xs_.begin(), xs_.end(), lo);
  const auto last = std::upper_bound(first, xs_.end(), hi);
  return {static_cast<std::size_t>(first - xs_.begin()), static_cast<std::size_t>(last - xs_.begin())};
}

// ---- ticks -------------------------------------------------------------------------------------------------------

double nice_step(double span, int target_count) {
  if (!(span > 0) || !std::isfinite(span)) return 1;
  const double raw = span / std::max(target_count, 1);
  const int e = decade_of(raw);
  const double f = raw / scaled(1, e);
  const double m = f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10;
  return scaled(m, e);
}

std::vector<Tick> linear_ticks(Range r, int target_count) {
  std::vector<Tick> ticks;
  if (!std::isfinite(r.lo) || !std::isfinite(r.hi) || !(r.hi > r.lo)) return ticks;
  const double step = nice_step(r.span(), target_count);
  // step = m * 10^e with m in {1, 2, 5, 10}: tick i is (i * m) * 10^e, an exact integer scaled once.
  const int e = decade_of(step);
  const double m = std::round(step / scaled(1, e));
  const double slack = 1e-9;  // a bound that is itself a tick (up to rounding) still gets one
  const double i0 = std::ceil(r.lo / step - slack), i1 = std::floor(r.hi / step + slack);
  if (!(i1 - i0 < 10000)) return ticks;  // only for absurd target counts
  for (double i = i0; i <= i1; ++i) ticks.push_back({scaled(i * m, e), {}, true});
  double magnitude = 0;
  for (const Tick& t : ticks) magnitude = std::max(magnitude, std::abs(t.value));
  for (Tick& t : ticks) t.label = tick_label(t.value, step, magnitude);
  return ticks;
}

std::vector<Tick> log_ticks(Range r, int target_count) {
  std::vector<Tick> ticks;
  if (!(r.lo > 0) || !(r.hi > r.lo) || !std::isfinite(r.hi)) return ticks;
  const double slack = 1e-9;
  const auto inside = [&](double v) { return v >= r.lo * (1 - slack) && v <= r.hi * (1 + slack); };
  const int e0 = decade_of(r.lo), e1 = decade_of(r.hi);
  const int decades = e1 - e0 + (inside(scaled(1, e0)) ? 1 : 0);  // decade ticks inside r
  const int target = std::max(target_count, 1);
  if (decades > target) {
    const int stride = (decades + target - 1) / target;
    for (int e = e0; e <= e1; ++e) {
      const double v = scaled(1, e);
      if (inside(v) && ((e % stride) + stride) % stride == 0) ticks.push_back({v, tick_label(v, v, v), true});
    }
    return ticks;
  }
  const bool label_2_5 = decades < 2 || 3 * decades <= target;
  int labelled = 0;
  for (int e = e0; e <= e1; ++e) {
    for (int m = 1; m <= 9; ++m) {
      const double v = scaled(m, e);
      if (!inside(v)) continue;
      const bool label = m == 1 || (label_2_5 && (m == 2 || m == 5));
      ticks.push_back({v, label ? tick_label(v, v, v) : std::string{}, m == 1});
      labelled += label ? 1 : 0;
    }
  }
  if (labelled < 2) return linear_ticks(r, target_count);
  return ticks;
}

std::string tick_label(double value, double step, double magnitude) {
  if (value == 0) return "0";  // also turns -0 into "0"
  if (!std::isfinite(value)) return format_value(value);
  magnitude = std::max(magnitude, std::abs(value));
  const int step_exp = step > 0 && std::isfinite(step) ? decade_of(step) : decade_of(magnitude);
  const int mag_exp = decade_of(magnitude);
  if (mag_exp >= 4 && mag_exp < 15) {
    const int si = std::min(mag_exp / 3, 4);
    const int decimals = std::max(0, 3 * si - step_exp);
    return fixed(value / scaled(1, 3 * si), decimals, kSiSuffix[si]);
  }
  const int decimals = std::max(0, -step_exp);
  if (mag_exp >= -3 && mag_exp < 15 && decimals <= 6) return fixed(value, decimals);
  // Scientific: as many mantissa decimals as separate this value from its neighbours one step away.
  return scientific(value, std::max(0, decade_of(std::abs(value)) - step_exp));
}

std::string format_value(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == 0) return "0";
  if (v == std::round(v) && std::abs(v) < 1e9) return fixed(v, 0);
  const int e = decade_of(std::abs(v));
  if (e >= 4 && e < 15) {
    const int si = std::min(e / 3, 4);
    return fixed(v / scaled(1, 3 * si), std::max(0, 3 - (e - 3 * si)), kSiSuffix[si]);
  }
  if (e >= -3 && e < 4) return fixed(v, 3 - e);
  return scientific(v, 3);
}

// ---- downsampling ------------------------------------------------------------------------------------------------

void downsample_min_max(const Series& s, Range x, int width, bool positive_only, Downsampled& out) {
  out.columns.assign(static_cast<std::size_t>(std::max(width, 0)), Column{});
  out.before.reset();
  out.after.reset();
  if (width <= 0 || s.empty() || !(x.hi > x.lo) || !std::isfinite(x.span())) return;
  const auto drawable = [positive_only](double y) { return std::isfinite(y) && (!positive_only || y > 0); };
  const auto [first, last] = s.index_range(x.lo, x.hi);
  const std::span<const double> xs = s.xs(), ys = s.ys();
  const double columns_per_x = width / x.span();
  const std::size_t last_column = out.columns.size() - 1;
  const auto column_of = [&](double xi) {  // xi >= x.lo; via int64, which x86 converts in one instruction
    return std::min(static_cast<std::size_t>(static_cast<std::int64_t>((xi - x.lo) * columns_per_x)), last_column);
  };
  // Columns are filled left to right (x is sorted), each in a local accumulator until the next one starts: updating
  // out.columns[c] in memory point by point costs a store-to-load round trip per point.
  Column acc;
  std::size_t acc_c = 0;
  const auto start_column = [&](std::size_t c) {
    if (c == acc_c) return;
    if (acc.count > 0) out.columns[acc_c] = acc;
    acc = Column{};
    acc_c = c;
  };
  constexpr std::size_t B = Series::kBlock;
  for (std::size_t i = first; i < last;) {
    // A whole block inside one column: merge its summary (x is sorted, so its first and last x decide).
    if (i % B == 0 && i + B <= last) {
      const Series::Block& block = s.blocks_[i / B];
      const std::size_t c = column_of(block.x_first);
      if (c == column_of(block.x_last)) {
        const Series::Summary& sum = positive_only ? block.positive : block.finite;
        if (sum.count > 0) {
          start_column(c);
          if (acc.count == 0) {
            acc.first = i + sum.first;
            acc.min = i + sum.min, acc.y_min = sum.y_min;
            acc.max = i + sum.max, acc.y_max = sum.y_max;
          } else {
            if (sum.y_min < acc.y_min) acc.min = i + sum.min, acc.y_min = sum.y_min;
            if (sum.y_max > acc.y_max) acc.max = i + sum.max, acc.y_max = sum.y_max;
          }
          acc.last = i + sum.last;
          acc.count += sum.count;
        }
        i += B;
        continue;
      }
    }
    if (drawable(ys[i])) {
      start_column(column_of(xs[i]));
      summarize(acc, ys[i], i);
    }
    ++i;
  }
  if (acc.count > 0) out.columns[acc_c] = acc;
  for (std::size_t i = first; i-- > 0;) {
    if (drawable(ys[i])) {
      out.before = i;
      break;
    }
  }
  for (std::size_t i = last; i < s.size(); ++i) {
    if (drawable(ys[i])) {
      out.after = i;
      break;
    }
  }
}

void drawable_indices(const Downsampled& d, std::vector<std::size_t>& out) {
  out.clear();
  if (d.before) out.push_back(*d.before);
  for (const Column& col : d.columns) {
    if (col.count == 0) continue;
    std::array<std::size_t, 4> four = {col.first, col.min, col.max, col.last};
    std::sort(four.begin(), four.end());
    for (std::size_t i : four) {
      if (out.empty() || out.back() != i) out.push_back(i);
    }
  }
  if (d.after) out.push_back(*d.after);
}

// ---- lookup ------------------------------------------------------------------------------------------------------

std::optional<NearestPoint> nearest_by_x(const Series& s, double x) {
  if (s.empty() || std::isnan(x)) return std::nullopt;
  const std::span<const double> xs = s.xs();
  const auto right = std::lower_bound(xs.begin(), xs.end(), x);  // first point with x_i >= x
  auto best = right;
  if (right != xs.begin()) {
    const double left_x = *(right - 1);
    if (right == xs.end() || x - left_x <= *right - x) {
      best = std::lower_bound(xs.begin(), right, left_x);  // the first of the points sharing that x
    }
  }
  const auto i = static_cast<std::size_t>(best - xs.begin());
  return NearestPoint{i, s.x(i), s.y(i)};
}

// ---- view transforms ---------------------------------------------------------------------------------------------

double AxisMap::to_pixel(double v) const {
  double t = 0;
  if (log) {
    if (!(v > 0)) return kNaN;
    const double l0 = std::log10(range.lo);
    t = (std::log10(v) - l0) / (std::log10(range.hi) - l0);
  } else {
    t = (v - range.lo) / range.span();
  }
  return p_lo + t * (p_hi - p_lo);
}

double AxisMap::to_data(double p) const {
  const double t = (p - p_lo) / (p_hi - p_lo);
  if (!log) return range.lo + t * range.span();
  const double l0 = std::log10(range.lo);
  return std::pow(10.0, l0 + t * (std::log10(range.hi) - l0));
}

namespace {

// A range in the space the axis is linear in (log10 for a log axis), and back.
Range to_linear_space(Range r, bool log) { return log ? Range{std::log10(r.lo), std::log10(r.hi)} : r; }
Range from_linear_space(Range r, bool log) { return log ? Range{std::pow(10.0, r.lo), std::pow(10.0, r.hi)} : r; }

// Whether a range can be shown: finite, not reversed, and not so thin that pixels stop mapping to distinct doubles.
bool usable(Range r, bool log) {
  if (!std::isfinite(r.lo) || !std::isfinite(r.hi) || !(r.hi > r.lo)) return false;
  if (log) return r.lo >= 1e-300 && r.hi <= 1e300 && r.hi / r.lo - 1 >= 1e-12;
  return std::abs(r.lo) <= 1e300 && std::abs(r.hi) <= 1e300 &&
         r.span() >= 1e-12 * std::max(std::abs(r.lo), std::abs(r.hi));
}

}  // namespace

Range zoom(Range r, double anchor, double factor, bool log) {
  if (!(factor > 0) || !std::isfinite(factor) || (log && !(r.lo > 0))) return r;
  const Range l = to_linear_space(r, log);
  double a = log ? (anchor > 0 ? std::log10(anchor) : kNaN) : anchor;
  if (!std::isfinite(a)) a = 0.5 * (l.lo + l.hi);
  const Range z = from_linear_space({a - (a - l.lo) * factor, a + (l.hi - a) * factor}, log);
  return usable(z, log) ? z : r;
}

Range pan(Range r, double fraction, bool log) {
  if (log && !(r.lo > 0)) return r;
  const Range l = to_linear_space(r, log);
  const double d = fraction * l.span();
  const Range p = from_linear_space({l.lo + d, l.hi + d}, log);
  return usable(p, log) ? p : r;
}

Range fit_range(Range extent, double pad, bool log) {
  if (log && !(extent.lo > 0)) return {0.1, 10};
  if (!std::isfinite(extent.lo) || !std::isfinite(extent.hi) || extent.hi < extent.lo)
    return log ? Range{0.1, 10} : Range{0, 1};
  const Range l = to_linear_space(extent, log);
  Range f;
  if (l.span() == 0) {
    const double half = log ? 0.25 : (l.lo != 0 ? 0.1 * std::abs(l.lo) : 0.5);
    f = {l.lo - half, l.hi + half};
  } else {
    f = {l.lo - pad * l.span(), l.hi + pad * l.span()};
  }
  return from_linear_space(f, log);
}

Range log_safe(Range r, std::optional<Range> positive_extent) {
  if (r.lo > 0 && r.hi > r.lo) return r;
  if (r.hi > 0) {
    const double lo = positive_extent && positive_extent->lo < r.hi ? positive_extent->lo : r.hi / 1000;
    return {lo, r.hi};
  }
  return positive_extent ? fit_range(*positive_extent, 0.05, true) : Range{0.1, 10};
}

}  // namespace ui
