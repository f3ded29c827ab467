// The pure parts of the plot widget (ui/plot_math.hpp) against brute force and hand-worked cases: Series storage,
// 1-2-5 and log ticks with their labels, M4 downsampling, nearest-point lookup, view transforms, auto-fit, log ranges.
// The ImGui widget itself runs headlessly in test_ui_plot_widget.cpp.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "ui/plot_math.hpp"

namespace {

// Parses a tick label back to a number: "12.5k" -> 12500, "1.5e-5" -> 1.5e-5.
double parse_label(const std::string& s) {
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  const std::string suffix = end;
  if (suffix == "k") v *= 1e3;
  if (suffix == "M") v *= 1e6;
  if (suffix == "G") v *= 1e9;
  if (suffix == "T") v *= 1e12;
  CHECK_MESSAGE((suffix.empty() || suffix == "k" || suffix == "M" || suffix == "G" || suffix == "T"), s);
  return v;
}

std::vector<std::string> labels(const std::vector<ui::Tick>& ticks) {
  std::vector<std::string> out;
  for (const ui::Tick& t : ticks) out.push_back(t.label);
  return out;
}

// A random series with repeated x (steps logged twice) and some NaN and non-positive y; with `ties`, y takes few
// distinct values, so minima and maxima repeat.
ui::Series random_series(std::mt19937& rng, std::size_t n, bool ties = false) {
  std::uniform_real_distribution<double> u(0, 1);
  ui::Series s;
  double x = -50;
  for (std::size_t i = 0; i < n; ++i) {
    if (u(rng) > 0.1) x += u(rng);
    const double r = u(rng);
    double y = r < 0.03 ? std::nan("") : r < 0.08 ? -u(rng) : std::exp(4 * u(rng) - 2);
    if (ties) y = std::round(y);
    REQUIRE(s.push(x, y));
  }
  return s;
}

bool drawable(double y, bool positive_only) { return std::isfinite(y) && (!positive_only || y > 0); }

}  // namespace

TEST_CASE("nice_step is 1, 2 or 5 x 10^k and gives about target_count intervals") {
  std::mt19937 rng(1);
  std::uniform_real_distribution<double> exponent(-12, 12), mantissa(1, 10);
  for (int trial = 0; trial < 5000; ++trial) {
    const double span = mantissa(rng) * std::pow(10.0, std::floor(exponent(rng)));
    const int target = 2 + trial % 12;
    const double step = ui::nice_step(span, target);
    const double m = step / std::pow(10.0, std::floor(std::log10(step) + 1e-9));
    CHECK_MESSAGE((std::abs(m - 1) < 1e-9 || std::abs(m - 2) < 1e-9 || std::abs(m - 5) < 1e-9), step);
    const double intervals = span / step;
    CHECK_MESSAGE(intervals >= 0.59 * target, span, " ", target);
    CHECK_MESSAGE(intervals <= 1.51 * target, span, " ", target);
  }
  CHECK(ui::nice_step(0, 5) == 1);
  CHECK(ui::nice_step(-3, 5) == 1);
  CHECK(ui::nice_step(std::nan(""), 5) == 1);
}

TEST_CASE("linear ticks: multiples of a 1-2-5 step inside the range, for tiny, huge and negative ranges") {
  std::mt19937 rng(2);
  std::uniform_real_distribution<double> exponent(-14, 14), u(-1, 1);
  for (int trial = 0; trial < 3000; ++trial) {
    const double scale = std::pow(10.0, exponent(rng));
    double lo = u(rng) * scale, hi = u(rng) * scale;
    if (trial % 3 == 0) lo = 1e3 * scale + lo, hi = 1e3 * scale + hi;  // far from zero: 1000.1 .. 1000.7
    if (lo > hi) std::swap(lo, hi);
    if (!(hi > lo)) continue;
    const int target = 3 + trial % 8;
    const std::vector<ui::Tick> ticks = ui::linear_ticks({lo, hi}, target);
    const double step = ui::nice_step(hi - lo, target);
    INFO("range ", lo, " .. ", hi, " target ", target, " step ", step);
    REQUIRE(ticks.size() >= 1);
    CHECK(ticks.size() >= static_cast<std::size_t>(0.59 * target - 1));
    CHECK(ticks.size() <= static_cast<std::size_t>(1.51 * target + 1));
    CHECK(ticks.front().value - lo < step * (1 + 1e-9));
    CHECK(hi - ticks.back().value < step * (1 + 1e-9));
    std::set<std::string> seen;
    for (std::size_t i = 0; i < ticks.size(); ++i) {
      const ui::Tick& t = ticks[i];
      CHECK(t.value >= lo - step * 1e-6);
      CHECK(t.value <= hi + step * 1e-6);
      CHECK(std::abs(t.value / step - std::round(t.value / step)) < 1e-6);
      if (i > 0) CHECK(std::abs(t.value - ticks[i - 1].value - step) <= 1e-6 * step);
      CHECK(t.major);
      CHECK_MESSAGE(t.label.size() <= 16, t.label);  // 0.1 + 0.2 printed in full would be 19 characters
      CHECK_MESSAGE(std::abs(parse_label(t.label) - t.value) <= 1e-6 * step, t.label);
      if (t.value == 0) CHECK(t.label == "0");  // never "-0" or "-0.0"
      CHECK_MESSAGE((t.label[0] == '-') == (t.value < 0), t.label);
      seen.insert(t.label);
    }
    CHECK(seen.size() == ticks.size());  // distinct ticks never share a label
  }
}

TEST_CASE("linear tick labels read like a person wrote them") {
  CHECK(labels(ui::linear_ticks({0, 0.3}, 3)) == std::vector<std::string>{"0", "0.1", "0.2", "0.3"});
  CHECK(labels(ui::linear_ticks({-1, 1}, 4)) == std::vector<std::string>{"-1.0", "-0.5", "0", "0.5", "1.0"});
  CHECK(labels(ui::linear_ticks({0, 50000}, 5)) == std::vector<std::string>{"0", "10k", "20k", "30k", "40k", "50k"});
  CHECK(labels(ui::linear_ticks({10000, 11000}, 2)) == std::vector<std::string>{"10.0k", "10.5k", "11.0k"});
  CHECK(labels(ui::linear_ticks({0, 2.5e6}, 5)) ==
        std::vector<std::string>{"0", "0.5M", "1.0M", "1.5M", "2.0M", "2.5M"});
  CHECK(labels(ui::linear_ticks({1e-6, 3e-6}, 2)) == std::vector<std::string>{"1e-6", "2e-6", "3e-6"});
  CHECK(labels(ui::linear_ticks({0, 1000}, 5)) == std::vector<std::string>{"0", "200", "400", "600", "800", "1000"});
  const std::vector<ui::Tick> t = ui::linear_ticks({0, 1}, 10);
  REQUIRE(t.size() == 11);
  CHECK(t[3].value == 0.3);  // the double nearest 0.3, not 3 * 0.1
  CHECK(t[3].label == "0.3");
  CHECK(ui::linear_ticks({1, 1}, 5).empty());
  CHECK(ui::linear_ticks({2, 1}, 5).empty());
}

TEST_CASE("tick_label and format_value") {
  CHECK(ui::tick_label(0.3, 0.1, 1) == "0.3");
  CHECK(ui::tick_label(-0.0, 0.1, 1) == "0");
  CHECK(ui::tick_label(12000, 2000, 20000) == "12k");
  CHECK(ui::tick_label(12500, 500, 20000) == "12.5k");
  CHECK(ui::tick_label(1.5e-5, 5e-6, 2e-5) == "1.5e-5");
  CHECK(ui::tick_label(2e20, 2e20, 2e20) == "2e20");
  CHECK(ui::tick_label(3e9, 1e9, 5e9) == "3G");
  CHECK(ui::tick_label(1000.25, 0.05, 1001) == "1000.25");
  CHECK(ui::format_value(12345) == "12345");
  CHECK(ui::format_value(0.12345) == "0.1235");
  CHECK(ui::format_value(12345.6) == "12.35k");
  CHECK(ui::format_value(2.5e6 + 0.5) == "2.500M");
  CHECK(ui::format_value(1.5e-7) == "1.500e-7");
  CHECK(ui::format_value(-0.5) == "-0.5000");
  CHECK(ui::format_value(std::nan("")) == "nan");
  CHECK(ui::format_value(-INFINITY) == "-inf");
}

TEST_CASE("log ticks: decades, thinned when many, with 2 and 5 when few") {
  const std::vector<ui::Tick> six = ui::log_ticks({1e-3, 1e3}, 10);
  std::vector<std::string> labelled;
  for (const ui::Tick& t : six) {
    CHECK(t.value >= 1e-3 * (1 - 1e-9));
    CHECK(t.value <= 1e3 * (1 + 1e-9));
    if (!t.label.empty()) labelled.push_back(t.label);
    const double e = std::log10(t.value);
    CHECK(t.major == (std::abs(e - std::round(e)) < 1e-9));  // major exactly at the powers of ten
  }
  CHECK(labelled == std::vector<std::string>{"0.001", "0.01", "0.1", "1", "10", "100", "1000"});
  CHECK(six.size() == 6 * 9 + 1);  // 1..9 x 10^k for six decades, and 1000

  const std::vector<ui::Tick> wide = ui::log_ticks({1e-10, 1e10}, 5);
  CHECK(labels(wide) == std::vector<std::string>{"1e-10", "1e-5", "1", "100k", "10G"});

  const std::vector<ui::Tick> loss = ui::log_ticks({0.05, 3}, 6);
  labelled.clear();
  for (const ui::Tick& t : loss) {
    if (!t.label.empty()) labelled.push_back(t.label);
  }
  CHECK(labelled == std::vector<std::string>{"0.05", "0.1", "0.2", "0.5", "1", "2"});

  const std::vector<ui::Tick> narrow = ui::log_ticks({0.3, 0.9}, 6);  // inside one decade: linear ticks
  CHECK(labels(narrow) == std::vector<std::string>{"0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9"});
  CHECK(ui::log_ticks({0, 10}, 5).empty());
  CHECK(ui::log_ticks({-1, 10}, 5).empty());
}

TEST_CASE("Series keeps a whole run of a million points, in order") {
  ui::Series s;
  const std::size_t n = 1'000'000;
  for (std::size_t i = 0; i < n; ++i) REQUIRE(s.push(static_cast<double>(i), std::sin(0.001 * static_cast<double>(i))));
  REQUIRE(s.size() == n);
  bool all_there = true;
  for (std::size_t i = 0; i < n; ++i) {
    all_there = all_there && s.x(i) == static_cast<double>(i) && s.y(i) == std::sin(0.001 * static_cast<double>(i));
  }
  CHECK(all_there);
  CHECK(s.x_extent() == ui::Range{0, n - 1.0});
  CHECK(s.y_extent()->lo >= -1);
  CHECK(s.y_extent()->hi <= 1);
  CHECK(s.y_extent()->hi > 0.9999);
  CHECK(s.index_range(10, 20) == std::pair<std::size_t, std::size_t>{10, 21});
  CHECK(s.index_range(10.5, 10.7).first == s.index_range(10.5, 10.7).second);  // no point inside

  CHECK_FALSE(s.push(5, 1));  // x going back: refused, nothing stored
  CHECK_FALSE(s.push(std::nan(""), 1));
  CHECK(s.size() == n);
  CHECK(s.push(n - 1.0, 7));  // an equal x is fine
  CHECK(s.y_extent()->hi == 7);
  s.clear();
  CHECK(s.empty());
  CHECK_FALSE(s.x_extent());
  CHECK_FALSE(s.y_extent());
}

TEST_CASE("min/max downsampling equals brute force per column, keeps first/last and never loses a spike") {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 200; ++trial) {
    // Every 4th trial: many points on few columns, where whole 64-point blocks are merged from their summaries.
    const bool dense = trial % 4 == 0;
    const ui::Series s = random_series(rng, 1 + rng() % (dense ? 200'000 : 5000), trial % 3 == 0);
    const ui::Series before_copy = s;
    const double x0 = s.x(0), x1 = s.x(s.size() - 1);
    std::uniform_real_distribution<double> u(x0 - 5, x1 + 5);
    double lo = u(rng), hi = u(rng);
    if (lo > hi) std::swap(lo, hi);
    if (!(hi > lo)) continue;
    const int width = 1 + static_cast<int>(rng() % (dense ? 100 : 700));
    const bool positive_only = trial % 2 == 1;
    ui::Downsampled d;
    ui::downsample_min_max(s, {lo, hi}, width, positive_only, d);
    REQUIRE(d.columns.size() == static_cast<std::size_t>(width));

    std::vector<ui::Column> want(static_cast<std::size_t>(width));
    std::optional<std::size_t> before, after;
    for (std::size_t i = 0; i < s.size(); ++i) {
      const double y = s.y(i);
      if (!drawable(y, positive_only)) continue;
      if (s.x(i) < lo) before = i;
      if (s.x(i) > hi && !after) after = i;
      if (s.x(i) < lo || s.x(i) > hi) continue;
      const auto c = std::min(static_cast<std::size_t>((s.x(i) - lo) * (width / (hi - lo))), want.size() - 1);
      ui::Column& w = want[c];
      if (w.count == 0) w.first = w.min = w.max = i, w.y_min = w.y_max = y;
      if (y < w.y_min) w.min = i, w.y_min = y;
      if (y > w.y_max) w.max = i, w.y_max = y;
      w.last = i;
      ++w.count;
    }
    INFO("trial ", trial);
    CHECK(d.before == before);
    CHECK(d.after == after);
    for (std::size_t c = 0; c < want.size(); ++c) {
      const ui::Column &got = d.columns[c], &w = want[c];
      REQUIRE(got.count == w.count);
      if (w.count == 0) continue;
      CHECK(got.first == w.first);
      CHECK(got.last == w.last);
      CHECK(got.y_min == w.y_min);
      CHECK(got.y_max == w.y_max);
      CHECK(got.min == w.min);
      CHECK(got.max == w.max);
    }
    std::vector<std::size_t> idx;
    ui::drawable_indices(d, idx);
    CHECK(std::is_sorted(idx.begin(), idx.end()));
    CHECK(std::adjacent_find(idx.begin(), idx.end()) == idx.end());
    CHECK(s.xs().size() == before_copy.xs().size());
    CHECK(std::equal(s.ys().begin(), s.ys().end(), before_copy.ys().begin(), before_copy.ys().end(),
                     [](double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }));
  }

  ui::Series three;  // the neighbours outside the view are the very first and last points
  for (double x : {0.0, 1.0, 2.0}) REQUIRE(three.push(x, x + 1));
  ui::Downsampled edge;
  ui::downsample_min_max(three, {0.5, 1.5}, 4, false, edge);
  CHECK(edge.before == std::optional<std::size_t>{0});
  CHECK(edge.after == std::optional<std::size_t>{2});
  CHECK(edge.columns[2].count == 1);
  CHECK(edge.columns[2].first == 1);

  ui::Series flat;  // a million points at 1 and a single spike: the spike survives a 300-pixel plot
  const std::size_t spike = 654'321;
  for (std::size_t i = 0; i < 1'000'000; ++i) REQUIRE(flat.push(static_cast<double>(i), i == spike ? 1000.0 : 1.0));
  ui::Downsampled d;
  ui::downsample_min_max(flat, *flat.x_extent(), 300, false, d);
  std::vector<std::size_t> idx;
  ui::drawable_indices(d, idx);
  CHECK(std::find(idx.begin(), idx.end(), spike) != idx.end());
  CHECK(idx.front() == 0);               // first point kept
  CHECK(idx.back() == flat.size() - 1);  // last point kept
  CHECK(idx.size() <= 4 * 300);
}

TEST_CASE("nearest point by x equals brute force, at the edges too") {
  std::mt19937 rng(4);
  for (int trial = 0; trial < 100; ++trial) {
    const ui::Series s = random_series(rng, 1 + rng() % 300);
    std::uniform_real_distribution<double> u(s.x(0) - 3, s.x(s.size() - 1) + 3);
    for (int q = 0; q < 50; ++q) {
      const double x = q % 5 == 0 ? s.x(rng() % s.size()) : u(rng);  // exact hits too
      std::size_t best = 0;
      for (std::size_t i = 1; i < s.size(); ++i) {
        if (std::abs(s.x(i) - x) < std::abs(s.x(best) - x)) best = i;
      }
      const std::optional<ui::NearestPoint> p = ui::nearest_by_x(s, x);
      REQUIRE(p);
      CHECK(p->index == best);
      CHECK(p->x == s.x(best));
      CHECK((p->y == s.y(best) || std::isnan(p->y)));
    }
    CHECK(ui::nearest_by_x(s, -1e9)->index == 0);
    CHECK(ui::nearest_by_x(s, 1e9)->x == s.x(s.size() - 1));
  }
  CHECK_FALSE(ui::nearest_by_x(ui::Series{}, 1.0));
  ui::Series one;
  REQUIRE(one.push(2, 3));
  CHECK(ui::nearest_by_x(one, -5)->index == 0);
  CHECK_FALSE(ui::nearest_by_x(one, std::nan("")));
}

TEST_CASE("axis maps round-trip, and zoom keeps the point under the cursor in place") {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(0, 1);
  for (int trial = 0; trial < 1000; ++trial) {
    const bool log = trial % 2 == 1;
    const double lo = log ? std::pow(10.0, 8 * u(rng) - 6) : 200 * u(rng) - 100;
    const double hi = log ? lo * std::pow(10.0, 0.01 + 6 * u(rng)) : lo + 0.001 + 100 * u(rng);
    const ui::AxisMap m{{lo, hi}, 700, 40, log};  // a y axis: lo at the bottom pixel
    INFO("trial ", trial, " range ", lo, " .. ", hi);
    CHECK(m.to_pixel(lo) == doctest::Approx(700));
    CHECK(m.to_pixel(hi) == doctest::Approx(40));
    const double p = 40 + 660 * u(rng);
    CHECK(m.to_pixel(m.to_data(p)) == doctest::Approx(p).epsilon(1e-9));
    const double v = m.to_data(p);
    CHECK(m.to_data(m.to_pixel(v)) == doctest::Approx(v).epsilon(1e-9));

    const double factor = trial % 3 == 0 ? 0.85 : trial % 3 == 1 ? 1 / 0.85 : 0.1;
    const ui::AxisMap z{ui::zoom({lo, hi}, v, factor, log), 700, 40, log};
    CHECK(z.to_pixel(v) == doctest::Approx(p).epsilon(1e-7));
    const double new_span = log ? std::log10(z.range.hi / z.range.lo) : z.range.span();
    const double old_span = log ? std::log10(hi / lo) : hi - lo;
    CHECK(new_span == doctest::Approx(factor * old_span).epsilon(1e-7));
  }
  const ui::AxisMap log_axis{{1, 100}, 0, 100, true};
  CHECK(log_axis.to_pixel(10) == doctest::Approx(50));
  CHECK(std::isnan(log_axis.to_pixel(0)));
  CHECK(std::isnan(log_axis.to_pixel(-3)));

  ui::Range r{0, 1};  // zooming in forever stops at a range doubles can still show
  for (int i = 0; i < 500; ++i) r = ui::zoom(r, 0.3, 0.5, false);
  CHECK(r.hi > r.lo);
  CHECK(r.contains(0.3));
  CHECK(ui::zoom({1, 2}, 1.5, 0, false) == ui::Range{1, 2});
}

TEST_CASE("pan moves by a fraction of the view, in decades on a log axis") {
  const ui::Range p = ui::pan({10, 20}, 0.1, false);
  CHECK(p.lo == doctest::Approx(11));
  CHECK(p.hi == doctest::Approx(21));
  const ui::Range back = ui::pan(p, -0.1, false);
  CHECK(back.lo == doctest::Approx(10));
  CHECK(back.hi == doctest::Approx(20));
  const ui::Range l = ui::pan({1, 100}, 0.5, true);
  CHECK(l.lo == doctest::Approx(10));
  CHECK(l.hi == doctest::Approx(1000));
}

TEST_CASE("auto-fit pads the data extent, in decades on a log axis") {
  CHECK(ui::fit_range({0, 10}, 0.05, false).lo == doctest::Approx(-0.5));
  CHECK(ui::fit_range({0, 10}, 0.05, false).hi == doctest::Approx(10.5));
  CHECK(ui::fit_range({5, 5}, 0.05, false) == ui::Range{4.5, 5.5});
  CHECK(ui::fit_range({0, 0}, 0.05, false) == ui::Range{-0.5, 0.5});
  const ui::Range l = ui::fit_range({1, 100}, 0.1, true);
  CHECK(l.lo == doctest::Approx(std::pow(10.0, -0.2)));
  CHECK(l.hi == doctest::Approx(std::pow(10.0, 2.2)));
  const ui::Range single = ui::fit_range({10, 10}, 0.1, true);
  CHECK(single.lo == doctest::Approx(std::pow(10.0, 0.75)));
  CHECK(single.hi == doctest::Approx(std::pow(10.0, 1.25)));
}

TEST_CASE("log ranges ignore y <= 0") {
  ui::Series s;
  for (double y : {-1.0, 0.0, 0.01, 5.0, std::nan(""), double{INFINITY}}) REQUIRE(s.push(1, y));
  CHECK(s.y_extent(false) == ui::Range{-1, 5});
  CHECK(s.y_extent(true) == ui::Range{0.01, 5});
  const ui::Range fit = ui::fit_range(*s.y_extent(true), 0.05, true);
  CHECK(fit.lo > 0);
  CHECK(fit.lo < 0.01);
  CHECK(ui::log_safe({-2, 10}, s.y_extent(true)) == ui::Range{0.01, 10});
  CHECK(ui::log_safe({-2, 0.001}, s.y_extent(true)).lo == doctest::Approx(1e-6));
  CHECK(ui::log_safe({-2, -1}, std::nullopt) == ui::Range{0.1, 10});
  CHECK(ui::log_safe({2, 3}, std::nullopt) == ui::Range{2, 3});
  ui::Series negative;
  REQUIRE(negative.push(0, -3));
  CHECK_FALSE(negative.y_extent(true));

  ui::Downsampled d;
  ui::downsample_min_max(s, {0, 2}, 10, true, d);
  std::size_t drawn = 0;
  for (const ui::Column& c : d.columns) {
    drawn += c.count;
    if (c.count > 0) CHECK(c.y_min == 0.01);
  }
  CHECK(drawn == 2);  // 0.01 and 5 only
}
