// core::TensorLayout: every tensor of a training step and of its evaluation, derived once from the StepPlan: the role
// it plays (and its layer), its element count and type, the memory category it counts in. Both trainers allocate from
// it (gpu::Trainer as Vulkan buffers, cpu::Trainer as host memory) and resolve every binding of every kernel through
// it, so they hold the same tensors laid out the same way; their memory figures are sums over it (MemoryUsage).
//
// The tensors (B = batch, C0 = inputs, OC_l = layer l's outputs, P = the flat parameters, R = read-back slots):
//   dataset      x and y of the training and the test set (fp32 images, int32 labels), and the sample orders (the
//                epoch's, 0..N-1 for the test set)                                        dataset / workspace
//   parameters   params (fp32: the weights the kernels read; 16-bit: the fp32 masters), weights16 (16-bit: the copy
//                the kernels read), grads, the optimizer's state1 (AdamW m, SGD momentum) and state2 (AdamW v)
//   the batch    x_batch (B, C0), y_batch, per-sample losses and correct flags (B)              activations
//   per layer    preact (layers followed by the activation: not the logits, not a pool), act (the output; the
//                logits for the last), dact: the gradient of act, which act_backward turns into the gradient of
//                preact in place; each B x the layer's outputs per sample (an image layer: H x W x channels, NHWC)
//                                                                                               activations
//   read-back    loss_history (R), and in fp16 the loss scaler and its scale_history (R)       workspace
//   evaluation   per-sample losses and correct flags of the whole test set                    workspace
//   placeholder  16 bytes bound where a kernel's binding has no tensor (the logits layer's preact) workspace
//   split-K      the fp32 partial products of a split matmul_backward_weight (a GPU plan's)     workspace
//   staging      --input host, pinned (a GPU's): the ring of S batches the host writes and each step copies into
//                x_batch and y_batch: staging_x (S, B, C0), staging_y (S, B); host-visible, mapped  workspace
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "core/kernel_table.hpp"
#include "core/step_plan.hpp"

namespace core {

// Where a trainer's memory goes, in bytes, by category.
struct MemoryUsage {
  // weights: the parameters the kernels read. In fp32 they ARE the master weights, so master_weights is 0; with
  // 16-bit storage, weights is the 16-bit copy and master_weights the fp32 masters the optimizer updates.
  size_t weights = 0;
  size_t master_weights = 0;
  size_t gradients = 0;        // parameter gradients (one flat buffer, ModelShape layout)
  size_t optimizer_state = 0;  // AdamW m and v, or the SGD momentum buffer
  size_t activations = 0;      // per-layer outputs, pre-activations and their gradients, the batch input and labels,
                               // per-sample losses and correct flags
  size_t attention_scores = 0;  // --attention naive: every attention layer's (B, heads, T, T) scores in memory
  size_t workspace = 0;        // everything else the step and evaluation need: the sample orders, read-back rings,
                               // evaluation outputs, the placeholder, split-K partials, the loss scaler, scratch
  size_t dataset = 0;          // training + test set copies the trainer itself holds (0 when it reads the caller's)

  size_t total() const {
    return weights + master_weights + gradients + optimizer_state + activations + attention_scores + workspace +
           dataset;
  }
  bool operator==(const MemoryUsage&) const = default;
};

struct TensorDesc {
  std::string name;  // as buffers are named in messages and validation output: "x_batch", "act L1", ...
  Role role;         // the role that takes the whole tensor
  int layer = -1;    // its layer, -1 where it is not per layer
  bool evaluation = false;  // the tensor this role takes in evaluation (the test set, its order, its results)
  size_t elements = 0;
  Elem elem = Elem::F32;
  size_t MemoryUsage::*category = &MemoryUsage::workspace;
  bool host_read = false;  // read by the host after the steps that write it (the read-back rings)
  bool host_write = false; // written by the host before the steps that read it (the staging ring)
};

// What a binding takes: tensor `tensor`'s elements [offset, offset + elements).
struct TensorView {
  int tensor = -1;
  size_t offset = 0;
  size_t elements = 0;
};

// The sizes a layout needs beyond the plan.
struct LayoutSizes {
  size_t train = 0, test = 0;  // samples of the training and the test set
  size_t readback = 1;         // read-back slots (TrainConfig::readback_interval)
  size_t staging = 0;          // batches in the staging ring (--input host, pinned, GPU); 0: none
};

class TensorLayout {
 public:
  Precision precision = Precision::FP32;
  std::vector<TensorDesc> tensors;

  // The tensor (or part of one) that a binding of `role` for layer `layer` takes, in training or in evaluation. A
  // binding whose role has no tensor in this configuration (the logits layer's preact, which matmul_forward binds
  // and does not touch) takes the placeholder. Throws core::Error(Internal) for a role this layout cannot give
  // (an fp16-only role in another precision, a layer out of range).
  TensorView resolve(Role role, int layer, bool evaluation) const;
  // The index of the tensor of this role and layer, or -1 where there is none.
  int find(Role role, int layer = -1, bool evaluation = false) const;
  // Bytes of tensor i: its elements in their type, at least 16 (the smallest buffer a trainer makes).
  size_t bytes(size_t i) const;
  // Bytes by category, summed over the tensors; with_dataset false: without the dataset's tensors (a trainer that
  // reads the caller's data in place).
  MemoryUsage usage(bool with_dataset) const;

 private:
  TensorView whole(int i) const;
  TensorView params_view(Role role, int layer) const;
  friend TensorLayout tensor_layout(const StepPlan&, const LayoutSizes&, Precision);
  ModelShape shape_;
};

// The tensors of a step of `plan` and of the evaluation, in `precision` (its storage type; the plan's precision, or
// FP32 for "the same model in fp32"). Pure: sizes only, nothing allocated.
TensorLayout tensor_layout(const StepPlan& plan, const LayoutSizes& sizes, Precision precision);
inline TensorLayout tensor_layout(const StepPlan& plan, const LayoutSizes& sizes) {
  return tensor_layout(plan, sizes, plan.precision);
}

}  // namespace core
