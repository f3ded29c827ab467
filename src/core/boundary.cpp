// The decision boundary's grid (see boundary.hpp).
#include "core/boundary.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace core {

size_t BoundaryGrid::cell(float x, float y) const {
  auto index = [&](float v, float lo, float hi) {
    const float t = (v - lo) / (hi - lo) * static_cast<float>(n);
    return static_cast<size_t>(std::clamp(static_cast<int>(std::floor(t)), 0, n - 1));
  };
  return index(y, y0, y1) * static_cast<size_t>(n) + index(x, x0, x1);
}

BoundaryGrid boundary_grid(const Dataset& data, int n) {
  if (data.features != 2 || data.count == 0 || n < 1)
    throw Error(ErrorKind::Internal, "boundary_grid: needs a non-empty dataset of 2 features");
  BoundaryGrid g;
  g.n = n;
  g.x0 = g.x1 = data.x[0];
  g.y0 = g.y1 = data.x[1];
  for (int i = 0; i < data.count; ++i) {
    const float x = data.x[2 * static_cast<size_t>(i)], y = data.x[2 * static_cast<size_t>(i) + 1];
    g.x0 = std::min(g.x0, x), g.x1 = std::max(g.x1, x);
    g.y0 = std::min(g.y0, y), g.y1 = std::max(g.y1, y);
  }
  const float mx = std::max(0.05f * (g.x1 - g.x0), 1e-3f), my = std::max(0.05f * (g.y1 - g.y0), 1e-3f);
  g.x0 -= mx, g.x1 += mx, g.y0 -= my, g.y1 += my;
  return g;
}

std::vector<float> grid_points(const BoundaryGrid& g) {
  std::vector<float> p;
  p.reserve(2 * static_cast<size_t>(g.n) * static_cast<size_t>(g.n));
  for (int i = 0; i < g.n; ++i)
    for (int j = 0; j < g.n; ++j) {
      p.push_back(g.x0 + (static_cast<float>(j) + 0.5f) * (g.x1 - g.x0) / static_cast<float>(g.n));
      p.push_back(g.y0 + (static_cast<float>(i) + 0.5f) * (g.y1 - g.y0) / static_cast<float>(g.n));
    }
  return p;
}

}  // namespace core
