// core::LossScaler: dynamic loss scaling for mixed-precision training. The loss is multiplied by scale() before the
// backward pass so that small gradients survive in fp16; the gradients are divided by it again before the optimizer
// step, and a step whose gradients overflowed (inf or NaN) is skipped while the scale backs off.
//
// Semantics and defaults are those documented for torch.cuda.amp.GradScaler (init_scale 2^16, growth_factor 2,
// backoff_factor 0.5, growth_interval 2000): after a step with an overflow, scale *= backoff_factor and the count
// of clean steps restarts; after growth_interval clean steps in a row, scale *= growth_factor. As in PyTorch's
// scale update, a growth that would make the scale infinite is not applied (the count still restarts).
// The skipped-step counter is trainscope's own addition (the dashboard shows it).
#pragma once
#include <cstddef>
#include <cstdint>

#include "kernel_params.h"  // shaders/common: LossScalerBuffer

namespace core {

struct LossScalerOptions {
  float init_scale = 65536.0f;   // 2^16
  float growth_factor = 2.0f;    // > 1
  float backoff_factor = 0.5f;   // in (0, 1)
  uint32_t growth_interval = 2000;  // clean steps before a growth, >= 1
};

// The whole mutable state, laid out as the GPU twin keeps it in a 16-byte storage buffer (std430, one struct):
//   offset 0  float scale           the current loss scale
//   offset 4  uint  growth_tracker  clean steps since the last growth or overflow, in [0, growth_interval)
//   offset 8  uint  skipped         optimizer steps skipped because of an overflow, since the start
//   offset 12 uint  found_inf       1 if the last checked gradients held an inf/NaN, else 0. On the GPU the gradient
//                                   check kernel sets it and the update kernel reads it (and the optimizer kernels
//                                   skip the step when it is 1); on the CPU it records the last update()'s flag.
// The options are not part of the state: the GPU update kernel takes them as push constants.
struct LossScalerState {
  float scale = 65536.0f;
  uint32_t growth_tracker = 0;
  uint32_t skipped = 0;
  uint32_t found_inf = 0;
};
static_assert(sizeof(LossScalerState) == 16, "LossScalerState must match the GPU buffer layout");

class LossScaler {
 public:
  // Throws core::Error(InvalidArgument) when an option is out of range (init_scale not finite or <= 0,
  // growth_factor <= 1, backoff_factor outside (0, 1), growth_interval 0).
  explicit LossScaler(const LossScalerOptions& options = {});

  // Call once per training step with whether the (scaled) gradients held any inf or NaN (see all_finite()).
  // Returns true when the optimizer step may be applied, false when it must be skipped (found_inf).
  //   found_inf: scale *= backoff_factor, growth_tracker = 0, skipped += 1, returns false.
  //   else:      growth_tracker += 1; when it reaches growth_interval, scale *= growth_factor (unless that is inf)
  //              and growth_tracker = 0; returns true.
  bool update(bool found_inf);

  float scale() const { return state_.scale; }
  float inv_scale() const { return 1.0f / state_.scale; }  // the factor that unscales gradients
  uint32_t growth_tracker() const { return state_.growth_tracker; }
  uint32_t skipped_steps() const { return state_.skipped; }
  const LossScalerOptions& options() const { return options_; }

  // Export/import for checkpoints, a reset between runs or a copy to/from the GPU buffer.
  // import_state throws core::Error(InvalidArgument) when the scale is not finite and > 0, the tracker is not below
  // growth_interval, or found_inf is not 0/1; the scaler is unchanged then.
  LossScalerState export_state() const { return state_; }
  void import_state(const LossScalerState& state);

 private:
  LossScalerOptions options_;
  LossScalerState state_;
};

// The scaler state inside the kernels' 32-byte LossScalerBuffer (its first four members; shaders/common/kernel_params.h)
// and back; the buffer's step clock is left as it is.
LossScalerState scaler_state(const LossScalerBuffer& buffer);
void set_scaler_state(LossScalerBuffer& buffer, const LossScalerState& state);

// True when none of grads[0..n) is inf or NaN (n may be 0). Tests the exponent bits, so it stays correct even
// where a translation unit is compiled with -ffinite-math-only. Reads the whole array unless a non-finite value
// shows up early (checked per block of 4096 elements).
bool all_finite(const float* grads, size_t n);

}  // namespace core
