// The fp16 loss scaler's device state (dynamic loss scaling, torch.cuda.amp.GradScaler semantics; core/loss_scaler.hpp),
// one 32-byte std430 block shared by check_finite_grads, update_loss_scale, softmax_xent_forward_backward and the
// optimizers' fp16 variants. The first 16 bytes are core::LossScalerState, the rest is the optimizer's step clock,
// kept on the device because a skipped step must not count as an optimizer step (torch skips optimizer.step()) and
// the host learns about skips only when it reads the steps back:
//   scale           the loss scale of the current step (the softmax multiplies dlogits by it; the optimizer divides)
//   growth_tracker  clean steps since the last growth or overflow
//   skipped         optimizer steps skipped since the start
//   found_inf       set to 1 by check_finite_grads when a gradient is inf/NaN; update_loss_scale consumes and clears it
//   optimizer_steps optimizer updates applied (AdamW's t of the next update is optimizer_steps + 1)
//   beta1_pow,      beta1^optimizer_steps and beta2^optimizer_steps, multiplied in on every applied update, so that
//   beta2_pow       AdamW's bias corrections 1 - beta^t need no pow() on the device
#ifndef TRAINSCOPE_LOSS_SCALE_GLSL
#define TRAINSCOPE_LOSS_SCALE_GLSL
#define LOSS_SCALER_MEMBERS \
  float scale;               \
  uint growth_tracker;       \
  uint skipped;              \
  uint found_inf;            \
  uint optimizer_steps;      \
  float beta1_pow;           \
  float beta2_pow;           \
  uint reserved;
#endif
