// The decision boundary of a 2-D dataset (the spiral): a square grid of points over the plane the training points
// span, the class a model predicts at each, and what the dashboard's Boundary tab draws.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/dataset.hpp"

namespace core {

// n x n cells over [x0, x1] x [y0, y1]; cell (i, j) is row i from the bottom (y0), column j from the left (x0).
struct BoundaryGrid {
  float x0 = -1, x1 = 1, y0 = -1, y1 = 1;
  int n = 0;
  // The cell containing (x, y), clamped to the grid: row * n + column.
  size_t cell(float x, float y) const;
};

inline constexpr int kBoundaryCells = 64;     // per side: 4,096 points per evaluation
inline constexpr int kBoundaryPoints = 600;   // training points drawn on the map (every k-th)
inline constexpr double kBoundarySeconds = 0.3;  // how often a worker refreshes its map while training

// The grid over the bounding box of `data`'s first two features, 5% margin on each side, n cells per side.
// data must have 2 features (throws core::Error(Internal) otherwise).
BoundaryGrid boundary_grid(const Dataset& data, int n = kBoundaryCells);

// The cell centres, row-major from the bottom row, as n*n rows of (x, y): the inputs of Trainer::predict().
std::vector<float> grid_points(const BoundaryGrid& grid);

// A model's predicted class at every cell of `grid` (row-major, as grid_points), and the step of the weights.
struct DecisionBoundary {
  BoundaryGrid grid;
  std::vector<int32_t> classes;
  long step = -1;  // the training steps taken when it was computed (-1: never)
};

}  // namespace core
