// softmax_xent_forward_backward: the loss and its gradient in one pass over the logits (softmax and cross-entropy
// fused, as llm.c's crossentropy_softmax_backward with its forward).
//   losses (B) = -log softmax(logits (B,K))[labels (B)]
//   dlogits (B,K) = (softmax(logits) - onehot(labels)) * dloss_scale  (1/B: the gradient of the mean loss; fp16 also
//                   times the loss scale)
//   correct (B) = 1 where the first maximum of the row is the label, else 0
// Evaluation (write_grad 0): no dlogits; losses and correct at out_offset + b (one array for the whole test set).
// A label below 0 marks a row whose target does not count (a transformer's position outside the task's answer):
// loss 0, correct 0, a zero gradient row. The plan entry's N, where set, is the rows that count: the mean's divisor.
#include <algorithm>
#include <cmath>

#include "cpu/elementwise_loops.hpp"
#include "cpu/ops/op.hpp"

#ifndef TRAINSCOPE_KERNEL_TABLE  // the CPU twin and the reference in double: trainscope_cpu
namespace cpu::ops {
namespace {

void tuned(const Bindings& b, const KernelArgs& a, ThreadPool& pool) {
  const auto p = a.as<core::SoftmaxXentParams>();
  const auto* scaler = b.at<core::LossScalerBuffer>(5);
  const float dloss_scale = scaler ? p.dloss_scale * scaler->scale : p.dloss_scale;  // fp16: d(scale * loss)
  float* losses = b.f32(0) + p.out_offset;
  float* dlogits = p.write_grad ? b.f32(1) : nullptr;
  int32_t* correct = b.at<int32_t>(2) ? b.at<int32_t>(2) + p.out_offset : nullptr;
  const float* logits = b.f32(3);
  const int32_t* labels = b.at<int32_t>(4);
  const size_t K = p.K;
  const ElementwiseLoops& loops = elementwise_loops();
  pool.parallel_for(p.B, grain_for(20.0 * static_cast<double>(K)), [=, &loops](size_t b0, size_t b1) {
    float* kept = dlogits ? nullptr : chunk_buffer(0, K);  // evaluation's exps (no dlogits row to keep them in)
    for (size_t r = b0; r < b1; ++r) {
      if (labels[r] < 0) {  // a position that does not count
        losses[r] = 0;
        if (correct) correct[r] = 0;
        if (dlogits) std::fill(dlogits + r * K, dlogits + (r + 1) * K, 0.0f);
        continue;
      }
      const float* z = logits + r * K;
      size_t argmax = 0;
      for (size_t k = 1; k < K; ++k)
        if (z[k] > z[argmax]) argmax = k;
      // Each exp once, over the row at the CPU's SIMD level (elementwise_loops.hpp), kept (in training in the row's
      // dlogits, for the gradient) and then summed in order.
      float* d = dlogits ? dlogits + r * K : nullptr;
      float* e = d ? d : kept;
      const float zmax = z[argmax];
      exp_at_level(loops, e, long(K), [z, zmax](long k) { return z[k] - zmax; });
      float sum = 0;
      for (size_t k = 0; k < K; ++k) sum += e[k];
      const size_t label = static_cast<size_t>(labels[r]);
      // -log(exp(z_label - max) / sum), in the stable form. z[argmax], not zmax kept across exp_row's call (a
      // portable build): gcc then kept the row's maximum on the stack through the argmax loop (a store and a load
      // each element), and this kernel took twice its time.
      losses[r] = log_of(sum) - (z[label] - z[argmax]);
      if (correct) correct[r] = argmax == label ? 1 : 0;
      if (d) {
        const float inv_sum = 1.0f / sum;
        for (size_t k = 0; k < K; ++k) d[k] = (d[k] * inv_sum - (k == label ? 1.0f : 0.0f)) * dloss_scale;
      }
    }
  });
}

void reference(RefBindings b, const KernelArgs& a) {
  const auto p = a.as<core::SoftmaxXentParams>();
  const double dloss_scale = double(p.dloss_scale) * (ref(b, 5) ? b[5][0] : 1.0);  // fp16: times the loss scale
  const long K = p.K;
  for (long r = 0; r < long(p.B); ++r) {
    if (b[4][r] < 0) {  // a position that does not count
      b[0][p.out_offset + r] = 0;
      if (ref(b, 2)) b[2][p.out_offset + r] = 0;
      if (p.write_grad)
        for (long k = 0; k < K; ++k) b[1][r * K + k] = 0;
      continue;
    }
    const double* z = ref(b, 3) + r * K;
    long argmax = 0;
    for (long k = 1; k < K; ++k)
      if (z[k] > z[argmax]) argmax = k;
    double sum = 0;
    for (long k = 0; k < K; ++k) sum += std::exp(z[k] - z[argmax]);
    const long label = static_cast<long>(b[4][r]);
    b[0][p.out_offset + r] = std::log(sum) - (z[label] - z[argmax]);  // -log(exp(z_label - max) / sum)
    if (ref(b, 2)) b[2][p.out_offset + r] = argmax == label ? 1 : 0;
    if (p.write_grad)
      for (long k = 0; k < K; ++k) {
        const double prob = std::exp(z[k] - z[argmax]) / sum;
        b[1][r * K + k] = (prob - (k == label ? 1.0 : 0.0)) * dloss_scale;
      }
  }
}

}  // namespace

const Kernel softmax_xent_forward_backward{.tuned = tuned, .reference = reference};

}  // namespace cpu::ops
#else  // the kernel-table entry: trainscope_kernels (see cpu/ops/op.hpp)
namespace kernels {

const core::KernelDef softmax_xent_forward_backward{
    .bindings = {{.name = "losses", .access = Access::Write, .elem = Elem::F32, .role = Role::Losses},
                 {.name = "dlogits", .access = Access::Write, .elem = Elem::Storage, .role = Role::DLogits,
                  .elements = [](const PlanEntry& e, const StepArgs& s) -> size_t {
                    return s.evaluation ? 0 : static_cast<size_t>(e.B * e.C);
                  }},
                 {.name = "correct", .access = Access::Write, .elem = Elem::I32, .role = Role::Correct},
                 {.name = "logits", .access = Access::Read, .elem = Elem::Storage, .role = Role::Logits,
                  .elements = shape::B_x_C},
                 {.name = "labels", .access = Access::Read, .elem = Elem::I32, .role = Role::YBatch},
                 {.name = "scaler", .access = Access::Read, .elem = Elem::LossScaler, .role = Role::Scaler,
                  .when = When::LossScaling}},
    .params_bytes = sizeof(core::SoftmaxXentParams),
    .grid = Grid::Rows,
    .local_size = 64,
    .grid_size = [](const PlanEntry& e) { return std::array<uint64_t, 2>{uint64_t(e.B), 1}; },
    .args =
        [](const PlanEntry& e, const StepArgs& s) {
          // Training: the gradient of the mean loss (1/B, or 1/the rows that count); evaluation writes no
          // gradient.
          const float dloss_scale = s.evaluation ? 1.0f : 1.0f / static_cast<float>(counted(e));
          return KernelArgs::of(core::SoftmaxXentParams{u32(e.B), u32(e.C), dloss_scale,
                                                        s.evaluation ? 0u : 1u, s.out_offset});
        },
    // max, exp, sum, divide, subtract per logit (an estimate of the element-wise work)
    .flops = [](const PlanEntry& e, Precision) { return 5.0 * e.B * e.C; },
    // logits once, labels; with loss scaling the scale
    .bytes_read = [](const PlanEntry& e,
                     Precision p) { return e.B * e.C * e_of(p) + e.B * kIdx + (loss_scaled(p) ? 4 : 0); },
    // dlogits; per-sample losses (fp32 in every precision) and correct flags (int32)
    .bytes_written = [](const PlanEntry& e,
                        Precision p) { return e.B * e.C * e_of(p) + e.B * 4.0 + e.B * kIdx; }};

}  // namespace kernels
#endif
