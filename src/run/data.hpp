// Loading the dataset a TrainConfig names (Fashion-MNIST or any MNIST-format directory, or the spiral).
#pragma once
#include "core/config.hpp"
#include "core/dataset.hpp"

namespace run {

// cfg.dataset "fashion-mnist": cfg.data_dir (empty: the Debian package's directory); "spiral": generated from
// cfg.spiral_* and cfg.seed (test set a quarter the size). cfg.limit > 0 keeps the first N training samples.
// Throws core::Error(Data) naming the file and field on a missing or corrupt dataset.
core::DataSplit load_data(const core::TrainConfig& cfg);

// True when a and b name the same data (so a reset can keep the loaded data).
bool same_data(const core::TrainConfig& a, const core::TrainConfig& b);

}  // namespace run
