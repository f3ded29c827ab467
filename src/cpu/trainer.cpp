// cpu::Trainer: runs the StepPlan entry by entry with the CPU twins of the kernel table (cpu/kernel_calls.hpp) on a
// ThreadPool, timing each entry with std::chrono::steady_clock. Steps run synchronously: step() finishes the step,
// flush() hands over its records.
//
// One path for every precision, as the GPU trainer's: each tensor is stored in the element type its bindings have
// (core::elem_bytes: fp32, or fp16 / bf16 bits), each plan entry binds the tensors of its bindings' roles and runs
// through cpu::run_kernel. Mixed precision (TrainConfig::precision fp16 / bf16; Micikevicius et al. 2018): activations,
// the weights the kernels read and the gradients are 16-bit, the optimizer keeps fp32 master weights and fp32 state and
// writes the 16-bit weights copy as it updates them. fp16 adds dynamic loss scaling with the same kernels and the same
// 32-byte scaler state as the GPU (core::LossScalerBuffer): check_finite_grads raises found_inf, the optimizer skips
// the step (masters, state, 16-bit weights and AdamW's t unchanged, as torch skips optimizer.step()) or unscales, and
// update_loss_scale applies GradScaler's rule (core::LossScaler) and records the step's scale.
#include "cpu/trainer.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <fstream>
#include <initializer_list>
#include <numeric>
#include <thread>
#include <utility>

#include "core/boundary.hpp"
#include "core/error.hpp"
#include "core/half.hpp"
#include "core/kernel_table.hpp"
#include "cpu/gemm.hpp"
#include "cpu/kernel_calls.hpp"
#include "cpu/storage16.hpp"
#include "cpu/simd.hpp"
#include "cpu/thread_pool.hpp"

namespace cpu {
namespace {

using core::Op;
using core::Role;
using Clock = std::chrono::steady_clock;

// A tensor stored in the element type of the bindings it is bound to. (C++20: an array of std::byte implicitly
// creates the float / uint16_t objects the kernels access through its pointer.)
class Tensor {
 public:
  Tensor() = default;
  Tensor(size_t elements, size_t elem_bytes) : elements_(elements), bytes_(elements * elem_bytes) {}
  void* data() { return bytes_.empty() ? nullptr : bytes_.data(); }
  template <typename T>
  T* as() { return static_cast<T*>(data()); }
  size_t bytes() const { return bytes_.capacity(); }       // memory held
  size_t bytes_as_fp32() const { return elements_ * 4; }  // the same tensor at 4 bytes per element

 private:
  size_t elements_ = 0;
  std::vector<std::byte> bytes_;
};

class CpuTrainer final : public core::Trainer {
 public:
  CpuTrainer(const core::TrainConfig& cfg, const core::DataSplit& data, const std::vector<float>& init_params);

  const char* backend() const override { return "cpu"; }
  std::string device_name() const override { return cpu_description(pool_.size()); }
  const core::StepPlan& plan() const override { return plan_; }
  void begin_epoch(std::span<const uint32_t> order) override { order_.assign(order.begin(), order.end()); }
  void step(size_t first) override;
  std::vector<core::StepRecord> flush() override { return std::exchange(records_, {}); }
  core::EvalResult evaluate() override;
  std::vector<float> parameters() override { return params_; }
  core::TrainerState export_state() override;
  void import_state(const core::TrainerState& state) override;
  void set_learning_rate(float lr) override { cfg_.lr = lr; }
  float learning_rate() const override { return cfg_.lr; }
  core::MemoryUsage memory_usage() const override { return usage(false); }
  core::MemoryUsage memory_usage_fp32() const override { return usage(true); }
  // Every precision runs: the 16-bit conversions use F16C where the build targets it and portable bit manipulation
  // otherwise (core/half.cpp's scalar fallback; bf16 needs no instruction set support at all).
  std::string unsupported_reason(core::Precision) const override { return {}; }
  core::ExecutionCounts execution_counts() const override { return counts_; }
  std::vector<int32_t> predict(std::span<const float> x, size_t count) override;

 private:
  bool sixteen_bit() const { return plan_.precision != core::Precision::FP32; }
  size_t e() const { return plan_.bytes_per_element; }
  // The memory a role takes for layer l (kernel_table.hpp), in training or evaluation; null where the kernel may skip
  // it (the logits layer's preact, the correct flags while training).
  void* resolve(Role role, int l, bool evaluation);
  // Runs one entry's kernel on its bindings (in the table's order).
  void run(const core::PlanEntry& entry, const core::StepArgs& args, bool evaluation);
  void reset_scaler(const core::LossScalerState* state);  // null: a fresh scaler at cfg_.loss_scale_init
  core::MemoryUsage usage(bool as_fp32) const;  // as_fp32: 16-bit tensors counted at 4 bytes, no masters, no arena

  core::TrainConfig cfg_;
  const core::DataSplit& data_;
  core::ModelShape shape_;
  core::StepPlan plan_;
  ThreadPool pool_;
  Workspace16 ws_;  // 16-bit: sized in the constructor for the largest kernel of a step (evaluate's are no larger)
  int L_ = 0;
  long t_ = 0;  // optimizer steps taken; the next update uses t_ + 1 (torch counts from 1)
  long step_index_ = 0;
  std::vector<uint32_t> order_;      // reserved for the whole training set at construction
  std::vector<uint32_t> eval_rows_;  // evaluate(): the test rows of one batch
  std::vector<core::StepRecord> records_;
  const float* predict_x_ = nullptr;    // predict(): its inputs as the evaluation's dataset (null otherwise)
  const int32_t* predict_y_ = nullptr;  // and zero labels for gather_batch to copy
  core::ExecutionCounts counts_;  // of step() only (ExecutionCounts: submits = host waits = the pool's hand-offs)
  std::vector<ThreadPool::Span> spans_;  // step(): the pool threads' spans of one kernel

  std::vector<float> params_, state1_, state2_;  // fp32 masters; AdamW m, v (SGD: momentum buffer in state1_)
  Tensor weights16_;                             // 16-bit only: round(params_), the weights the kernels read
  Tensor grads_, x_batch_, dlogits_;             // storage type
  std::vector<int32_t> y_batch_, correct_;
  std::vector<float> losses_;
  std::vector<Tensor> preact_, out_, dact_, dpreact_;  // per layer, (B, OC_l); hidden layers only but out_
  float loss_ = 0;                                     // loss_reduce's result (a read-back ring of one slot)
  core::LossScalerBuffer scaler_{};                    // fp16: the loss scaler and the optimizer's step clock
  core::ScaleHistoryEntry scale_history_{};            // fp16: this step's (scale, found_inf)
};

CpuTrainer::CpuTrainer(const core::TrainConfig& cfg, const core::DataSplit& data, const std::vector<float>& init_params)
    : cfg_(cfg), data_(data), pool_(cfg.threads) {
  shape_ = core::model_shape(cfg, data);
  plan_ = core::build_step_plan(shape_, cfg.batch, cfg.activation, cfg.optimizer, cfg.precision,
                                cfg.execution.unfused);
  L_ = shape_.layers();
  pool_.record_spans(true);  // the step timeline's per-thread spans (step() takes them after each kernel)
  if (init_params.size() != shape_.param_count)
    throw core::Error(core::ErrorKind::Internal, "cpu trainer: " + std::to_string(init_params.size()) +
                                                     " initial parameters given, the model " + shape_.describe() +
                                                     " has " + std::to_string(shape_.param_count));
  const size_t B = static_cast<size_t>(cfg.batch), P = shape_.param_count;
  params_ = init_params;
  state1_.assign(P, 0.0f);
  state2_.assign(cfg.optimizer == core::Optimizer::AdamW ? P : 0, 0.0f);
  order_.reserve(static_cast<size_t>(data.train.count));  // so that memory_usage() holds from the start
  eval_rows_.resize(B);
  y_batch_.resize(B);
  losses_.resize(B);
  correct_.resize(B);
  grads_ = Tensor(P, e());  // zero bytes are +0 in every type: the padding between tensors stays 0
  x_batch_ = Tensor(B * static_cast<size_t>(shape_.inputs()), e());
  dlogits_ = Tensor(B * static_cast<size_t>(shape_.classes()), e());
  for (int l = 0; l < L_; ++l) {
    const size_t n = B * static_cast<size_t>(shape_.fan_out(l)), hidden_n = l < L_ - 1 ? n : 0;
    preact_.emplace_back(hidden_n, e());
    out_.emplace_back(n, e());
    dact_.emplace_back(hidden_n, e());
    dpreact_.emplace_back(hidden_n, e());
  }
  if (sixteen_bit()) {
    weights16_ = Tensor(P, e());
    const Narrow copy{weights16_.as<uint16_t>(), params_.data(), P};
    narrow_all(std::span<const Narrow>(&copy, 1), cfg.precision, pool_);
    // The arena of the largest kernel of a step, so that memory_usage() is fixed from here: evaluate() runs the same
    // matmul_forward shapes with at most plan_.batch rows.
    size_t floats = 0;
    for (const auto& entry : plan_.entries) floats = std::max(floats, workspace_floats(entry, cfg.precision));
    ws_.reserve(floats);
  }
  if (plan_.loss_scaling()) reset_scaler(nullptr);
}

void CpuTrainer::reset_scaler(const core::LossScalerState* state) {
  core::LossScalerOptions options;
  options.init_scale = cfg_.loss_scale_init;
  core::LossScaler check(options);
  if (state) check.import_state(*state);  // throws on a corrupt state, before anything is changed
  core::set_scaler_state(scaler_, check.export_state());
  scaler_.found_inf = 0;
  scaler_.optimizer_steps = static_cast<uint32_t>(t_);
  scaler_.beta1_pow = static_cast<float>(std::pow(double(cfg_.beta1), double(t_)));
  scaler_.beta2_pow = static_cast<float>(std::pow(double(cfg_.beta2), double(t_)));
}

void* CpuTrainer::resolve(Role role, int l, bool evaluation) {
  auto* weights = sixteen_bit() ? static_cast<std::byte*>(weights16_.data())
                                : reinterpret_cast<std::byte*>(params_.data());
  auto* grads = static_cast<std::byte*>(grads_.data());
  switch (role) {
    case Role::DataX:
      if (evaluation && predict_x_) return const_cast<float*>(predict_x_);
      return const_cast<float*>((evaluation ? data_.test : data_.train).x.data());
    case Role::DataY:
      if (evaluation && predict_y_) return const_cast<int32_t*>(predict_y_);
      return const_cast<int32_t*>((evaluation ? data_.test : data_.train).y.data());
    case Role::Order: return evaluation ? eval_rows_.data() : order_.data();
    case Role::XBatch: return x_batch_.data();
    case Role::YBatch: return y_batch_.data();
    case Role::LayerIn: return l == 0 ? x_batch_.data() : out_[l - 1].data();
    case Role::Act: return out_[l].data();
    case Role::Preact: return preact_[l].data();  // null for the logits layer: it has no activation
    case Role::DAct: return dact_[l].data();
    case Role::DPreact: return l == L_ - 1 ? dlogits_.data() : dpreact_[l].data();
    case Role::DLayerIn: return dact_[l - 1].data();
    case Role::Weight: return weights + shape_.weight_offset[l] * e();
    case Role::Bias: return weights + shape_.bias_offset[l] * e();
    case Role::DWeight: return grads + shape_.weight_offset[l] * e();
    case Role::DBias: return grads + shape_.bias_offset[l] * e();
    case Role::Logits: return out_[L_ - 1].data();
    case Role::DLogits: return dlogits_.data();
    case Role::Losses: return losses_.data();
    case Role::Correct: return evaluation ? correct_.data() : nullptr;  // training needs no flags here
    case Role::LossHistory: return &loss_;
    case Role::Params: return params_.data();
    case Role::Grads: return grads_.data();
    case Role::State1: return state1_.data();
    case Role::State2: return state2_.data();
    case Role::Weights16: return weights16_.data();
    case Role::Scaler: return &scaler_;
    case Role::ScaleHistory: return &scale_history_;
  }
  throw core::Error(core::ErrorKind::Internal, std::string("cpu trainer: no tensor for role ") + core::to_string(role));
}

void CpuTrainer::run(const core::PlanEntry& entry, const core::StepArgs& args, bool evaluation) {
  const core::KernelDef& def = core::kernel_def(entry.op);
  std::array<void*, 8> bindings{};
  size_t n = 0;
  for (const core::BindingDef& b : def.bindings)
    if (core::present(b.when, plan_.precision)) bindings.at(n++) = resolve(b.role, entry.layer, evaluation);
  run_kernel(entry, args, std::span<void* const>(bindings.data(), n), {plan_.precision, pool_, ws_});
}

void CpuTrainer::step(size_t first) {
  if (first + static_cast<size_t>(plan_.batch) > order_.size())
    throw core::Error(core::ErrorKind::Internal, "cpu trainer: step past the end of the epoch's order");
  const core::StepArgs args = core::step_args(cfg_, t_ + 1, first);  // fp16: t from the scaler's clock
  const unsigned long pool_before = pool_.dispatches();
  core::StepRecord rec;
  rec.step = step_index_++;
  rec.kernel_ms.reserve(plan_.entries.size());
  rec.kernel_start_ms.reserve(plan_.entries.size());
  // The timeline: the step's start and each kernel's on the steady clock, and per pool worker when it worked on each
  // kernel (ThreadPool span recording: two clock reads per chunk).
  pool_.take_spans(spans_);  // drops spans of work outside a step (evaluate, a weight copy)
  const auto step_start = Clock::now();
  rec.start_s = std::chrono::duration<double>(step_start.time_since_epoch()).count();
  for (size_t i = 0; i < plan_.entries.size(); ++i) {
    const auto start = Clock::now();
    run(plan_.entries[i], args, false);
    ++counts_.kernels;
    const auto end = Clock::now();
    rec.kernel_start_ms.push_back(std::chrono::duration<double, std::milli>(start - step_start).count());
    rec.kernel_ms.push_back(std::chrono::duration<double, std::milli>(end - start).count());
    pool_.take_spans(spans_);
    for (size_t t = 1; t < spans_.size(); ++t)
      if (spans_[t].start_s > 0)
        rec.threads.push_back({static_cast<int>(t), static_cast<int>(i), spans_[t].start_s, spans_[t].end_s});
  }
  rec.step_ms = std::chrono::duration<double, std::milli>(Clock::now() - step_start).count();
  rec.loss = loss_;
  if (plan_.loss_scaling()) {
    rec.loss_scale = scale_history_.loss_scale;  // the scale this step's backward pass used
    rec.skipped = scale_history_.found_inf != 0;
    t_ = scaler_.optimizer_steps;  // a skipped step is no optimizer step (AdamW's bias correction counts updates)
  } else {
    ++t_;
  }
  ++counts_.steps;
  const long handoffs = static_cast<long>(pool_.dispatches() - pool_before);
  counts_.submits += handoffs;
  counts_.host_waits += handoffs;
  records_.push_back(std::move(rec));
}

core::EvalResult CpuTrainer::evaluate() {
  // The plan's forward kernels on the test set, batch by batch (the last batch may be partial), in the trained
  // precision: what training optimises.
  const core::Dataset& test = data_.test;
  const long N = test.count, B = plan_.batch;
  core::StepArgs args = core::step_args(cfg_, t_ + 1);
  args.evaluation = true;
  double loss = 0;
  long right = 0;
  for (long start = 0; start < N; start += B) {
    const long n = std::min(B, N - start);
    std::iota(eval_rows_.begin(), eval_rows_.begin() + n, static_cast<uint32_t>(start));
    run({.op = Op::gather_batch, .B = n, .C = shape_.inputs()}, args, true);
    for (const core::PlanEntry& entry : plan_.entries)
      if (entry.layer_forward()) run(entry.with_rows(n), args, true);
    run({.op = Op::softmax_xent_forward_backward, .B = n, .C = shape_.classes()}, args, true);
    for (long b = 0; b < n; ++b) {
      loss += losses_[static_cast<size_t>(b)];
      right += correct_[static_cast<size_t>(b)];
    }
  }
  if (N == 0) return {};
  return {loss / static_cast<double>(N), static_cast<double>(right) / static_cast<double>(N)};
}

std::vector<int32_t> CpuTrainer::predict(std::span<const float> x, size_t count) {
  const long F = shape_.inputs(), K = shape_.classes(), B = plan_.batch;
  if (x.size() != count * static_cast<size_t>(F))
    throw core::Error(core::ErrorKind::Internal, "cpu trainer: predict() needs count x features inputs");
  // The points as the dataset evaluation reads (gather_batch then the forward kernels), batch by batch.
  const std::vector<int32_t> labels(count, 0);
  predict_x_ = x.data();
  predict_y_ = labels.data();
  core::StepArgs args = core::step_args(cfg_, t_ + 1);
  args.evaluation = true;
  std::vector<float> z(count * static_cast<size_t>(K));
  try {
    for (size_t start = 0; start < count; start += static_cast<size_t>(B)) {
      const long n = static_cast<long>(std::min<size_t>(static_cast<size_t>(B), count - start));
      std::iota(eval_rows_.begin(), eval_rows_.begin() + n, static_cast<uint32_t>(start));
      run({.op = Op::gather_batch, .B = n, .C = F}, args, true);
      for (const core::PlanEntry& entry : plan_.entries)
        if (entry.layer_forward()) run(entry.with_rows(n), args, true);
      float* dst = z.data() + start * static_cast<size_t>(K);
      const size_t values = static_cast<size_t>(n * K);
      if (!sixteen_bit())
        std::copy_n(out_[L_ - 1].as<float>(), values, dst);
      else if (cfg_.precision == core::Precision::FP16)
        core::from_fp16(dst, out_[L_ - 1].as<uint16_t>(), values);
      else
        core::from_bf16(dst, out_[L_ - 1].as<uint16_t>(), values);
    }
  } catch (...) {
    predict_x_ = nullptr;
    predict_y_ = nullptr;
    throw;
  }
  predict_x_ = nullptr;
  predict_y_ = nullptr;
  return core::argmax_rows(z, count, static_cast<size_t>(K));
}

core::TrainerState CpuTrainer::export_state() {
  core::TrainerState s;
  s.optimizer = cfg_.optimizer;
  s.params = params_;
  s.state1 = state1_;
  s.state2 = state2_;
  s.steps = step_index_;
  s.optimizer_steps = t_;
  if (plan_.loss_scaling()) s.loss_scaler = core::scaler_state(scaler_);
  return s;
}

void CpuTrainer::import_state(const core::TrainerState& s) {
  if (s.params.size() != params_.size())
    throw core::Error(core::ErrorKind::Internal, "cpu trainer: imported state has the wrong parameter count");
  params_ = s.params;
  step_index_ = s.steps;
  if (s.optimizer == cfg_.optimizer && s.state1.size() == state1_.size() && s.state2.size() == state2_.size()) {
    state1_ = s.state1;
    state2_ = s.state2;
    t_ = s.optimizer_steps;
  } else {  // another optimizer: its state starts fresh
    std::fill(state1_.begin(), state1_.end(), 0.0f);
    std::fill(state2_.begin(), state2_.end(), 0.0f);
    t_ = 0;
  }
  // The 16-bit copy follows the fp32 masters, so a switch of precision loses nothing; the loss scale carries over
  // between fp16 trainers and starts at loss_scale_init after another precision.
  if (sixteen_bit()) {
    const Narrow copy{weights16_.as<uint16_t>(), params_.data(), params_.size()};
    narrow_all(std::span<const Narrow>(&copy, 1), cfg_.precision, pool_);
  }
  if (plan_.loss_scaling()) reset_scaler(s.loss_scaler ? &*s.loss_scaler : nullptr);
}

// From the capacity of what the trainer allocates. Not counted: the dataset (the caller's, read in place: 0), the
// step records waiting for flush(), the GEMM's thread-local packing buffers (cpu/gemm.cpp: the packed B of the
// largest GEMM, K x N floats, held by the training thread, and an mc x kc slice of A per pool thread) and the 16-bit
// kernels' chunk buffers, evaluate()'s row list, the loss scaler's few bytes held in the trainer itself, and the
// bandwidth measurement's short-lived 2 x 64 MiB.
// as_fp32 (memory_usage_fp32): every storage-type tensor at 4 bytes per element, the weights counted once (in fp32
// they are the masters) and no Workspace16 arena (fp32 kernels need no widened copies): the fp32 trainer's own figure.
core::MemoryUsage CpuTrainer::usage(bool as_fp32) const {
  auto bytes = [](const auto& v) { return v.capacity() * sizeof(v[0]); };
  auto tensor = [&](const Tensor& t) { return as_fp32 ? t.bytes_as_fp32() : t.bytes(); };
  auto per_layer = [&](const std::vector<Tensor>& layers) {
    size_t sum = 0;
    for (const auto& t : layers) sum += tensor(t);
    return sum;
  };
  core::MemoryUsage m;
  const bool masters = sixteen_bit() && !as_fp32;
  m.weights = masters ? weights16_.bytes() : bytes(params_);
  m.master_weights = masters ? bytes(params_) : 0;
  m.gradients = tensor(grads_);
  m.optimizer_state = bytes(state1_) + bytes(state2_);
  m.activations = tensor(x_batch_) + bytes(y_batch_) + bytes(losses_) + tensor(dlogits_) + per_layer(preact_) +
                  per_layer(out_) + per_layer(dact_) + per_layer(dpreact_);
  m.workspace = bytes(order_) + bytes(correct_);  // correct_: per-sample flags of evaluate() only
  if (!as_fp32) m.workspace += ws_.bytes();
  return m;
}

}  // namespace

std::unique_ptr<core::Trainer> make_trainer(const core::TrainConfig& cfg, const core::DataSplit& data,
                                            const std::vector<float>& init_params) {
  return std::make_unique<CpuTrainer>(cfg, data, init_params);
}

std::string cpu_description(int threads) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const std::string simd = gemm_kernel_name();  // the GEMM micro-kernel that runs, e.g. "AVX-512 8x32/6x32/12x16"
  return cpu_model_name() + " (" + std::to_string(threads) + (threads == 1 ? " thread, " : " threads, ") + simd + ")";
}

}  // namespace cpu
