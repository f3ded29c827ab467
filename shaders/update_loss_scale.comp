// update_loss_scale: one invocation at the end of an fp16 step, torch's _amp_update_scale_ plus trainscope's counters.
//   overflow (found_inf): scale *= backoff_factor, growth_tracker = 0, skipped += 1
//   clean step:           growth_tracker += 1; at growth_interval: scale *= growth_factor unless that is inf,
//                         growth_tracker = 0; and the optimizer's clock advances (optimizer_steps, beta powers)
// It first records the step's (scale used, found_inf) in history[slot] for the host, then clears found_inf.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "kernel_params.h"
layout(local_size_x = 1, local_size_x_id = 0) in;  // the default; gpu::Kernels specializes it to the device (workgroup_size)

layout(std430, binding = 0) buffer Scaler { LossScalerBuffer s; };
layout(std430, binding = 1) writeonly buffer History { ScaleHistoryEntry history[]; };

layout(push_constant) uniform Push { UpdateLossScaleParams p; };

void main() {
  float scale = s.scale;
  uint found_inf = s.found_inf;
  history[p.slot] = ScaleHistoryEntry(scale, found_inf);
  if (found_inf != 0u) {
    s.scale = scale * p.backoff_factor;
    s.growth_tracker = 0u;
    s.skipped += 1u;
  } else {
    uint tracker = s.growth_tracker + 1u;
    if (tracker >= p.growth_interval) {
      float grown = scale * p.growth_factor;
      if ((floatBitsToUint(grown) & 0x7fffffffu) < 0x7f800000u) s.scale = grown;  // finite
      tracker = 0u;
    }
    s.growth_tracker = tracker;
    s.optimizer_steps += 1u;
    s.beta1_pow *= p.beta1;
    s.beta2_pow *= p.beta2;
  }
  s.found_inf = 0u;
}
