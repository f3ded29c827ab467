// cpu::Trainer: runs the StepPlan entry by entry with the CPU twins of the kernel table (cpu/kernel_calls.hpp) on a
// ThreadPool, timing each entry with std::chrono::steady_clock. Steps run synchronously: step() finishes the step,
// flush() hands over its records.
//
// Its tensors are core::TensorLayout's, each in host memory in the element type its bindings have (core::elem_bytes:
// fp32, or fp16 / bf16 bits), the dataset read in place from the caller's DataSplit; every binding of every entry is
// resolved through the layout and run through cpu::run_kernel: one path for every precision, as the GPU trainer's.
// Mixed precision (TrainConfig::precision fp16 / bf16; Micikevicius et al. 2018): activations, the weights the kernels
// read and the gradients are 16-bit, the optimizer keeps fp32 master weights and fp32 state and writes the 16-bit
// weights copy as it updates them. fp16 adds dynamic loss scaling with the same kernels and the same 32-byte scaler
// state as the GPU (core::LossScalerBuffer): check_finite_grads raises found_inf, the optimizer skips the step (masters,
// state, 16-bit weights and AdamW's t unchanged, as torch skips optimizer.step()) or unscales, and update_loss_scale
// applies GradScaler's rule (core::LossScaler) and records the step's scale.
#include "cpu/trainer.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <numeric>
#include <thread>
#include <utility>

#include "core/boundary.hpp"
#include "core/error.hpp"
#include "core/half.hpp"
#include "core/kernel_table.hpp"
#include "core/metrics.hpp"
#include "core/power.hpp"
#include "core/run_plan.hpp"
#include "core/tensor_layout.hpp"
#include "cpu/gemm.hpp"
#include "cpu/kernel_calls.hpp"
#include "cpu/simd.hpp"
#include "cpu/storage16.hpp"
#include "cpu/thread_pool.hpp"

namespace cpu {
namespace {

using core::Op;
using core::Role;
using Clock = std::chrono::steady_clock;

class CpuTrainer final : public core::Trainer {
 public:
  CpuTrainer(const core::TrainConfig& cfg, const core::DataSplit& data, const std::vector<float>& init_params);

  const char* backend() const override { return "cpu"; }
  std::string device_name() const override { return cpu_description(pool_.size()); }
  const core::StepPlan& plan() const override { return plan_; }
  void begin_epoch(std::span<const uint32_t> order) override;
  void step(size_t first) override;
  std::vector<core::StepRecord> flush() override { return std::exchange(records_, {}); }
  core::EvalResult evaluate() override;
  std::vector<float> parameters() override { return copy_of(Role::Params); }
  core::TrainerState export_state() override;
  void import_state(const core::TrainerState& state) override;
  void set_learning_rate(float lr) override { cfg_.lr = lr; }
  float learning_rate() const override { return cfg_.lr; }
  core::MemoryUsage memory_usage() const override;
  core::MemoryUsage memory_usage_fp32() const override { return memory_fp32_; }
  // Every precision runs: the 16-bit conversions use F16C where the build targets it and portable bit manipulation
  // otherwise (core/half.cpp's scalar fallback; bf16 needs no instruction set support at all).
  std::string unsupported_reason(core::Precision) const override { return {}; }
  core::ExecutionCounts execution_counts() const override { return counts_; }
  void set_batch_source(std::unique_ptr<core::BatchSource> source) override;
  std::vector<int32_t> predict(std::span<const float> x, size_t count) override;

 private:
  // The memory of a tensor of the layout; T: its element type as the host sees it.
  template <typename T>
  T* tensor(Role role, int layer = -1, bool evaluation = false) {
    const int i = layout_.find(role, layer, evaluation);
    return i < 0 ? nullptr : static_cast<T*>(base_[static_cast<size_t>(i)]);
  }
  std::vector<float> copy_of(Role role) {  // an fp32 tensor of P elements (params, optimizer state)
    const float* p = tensor<float>(role);
    return p ? std::vector<float>(p, p + shape_.param_count) : std::vector<float>();
  }
  // The memory a binding of `role` for layer l takes, in training or evaluation (core::TensorLayout::resolve);
  // predict() points the dataset and the order of evaluation at its own arrays.
  void* resolve(Role role, int l, bool evaluation);
  // Runs one entry's kernel on its bindings (in the table's order).
  void run(const core::PlanEntry& entry, const core::StepArgs& args, bool evaluation);
  // The evaluation's (`loss`) or the prediction's forward pass (core::forward_pass) over `count` rows of the evaluation
  // dataset from position `start` of its order; the evaluation's per-sample results at `start`.
  void forward_rows(long start, long count, bool loss);
  void narrow_weights();  // the 16-bit weights copy from the fp32 masters
  void reset_scaler(const core::LossScalerState* state);  // null: a fresh scaler at cfg_.loss_scale_init

  core::TrainConfig cfg_;
  const core::DataSplit& data_;
  core::ModelShape shape_;
  core::StepPlan plan_;
  core::TensorLayout layout_;
  ThreadPool pool_;
  Workspace16 ws_;  // 16-bit: sized in the constructor for the largest kernel of a step (evaluate's are no larger)
  std::vector<std::vector<std::byte>> memory_;  // per layout tensor (C++20: byte arrays create the floats in them)
  std::vector<void*> base_;                     // per layout tensor: memory_, or the caller's dataset
  long t_ = 0;  // optimizer steps taken; the next update uses t_ + 1 (torch counts from 1)
  long step_index_ = 0;
  size_t epoch_samples_ = 0;  // of the order given to begin_epoch
  std::vector<core::StepRecord> records_;
  const void* predict_x_ = nullptr;  // predict(): its points, zero labels and order as the evaluation's dataset
  const void* predict_y_ = nullptr;
  const void* predict_order_ = nullptr;
  core::ExecutionCounts counts_;  // of step() only (ExecutionCounts: submits = host waits = the pool's hand-offs)
  std::vector<ThreadPool::Span> spans_;  // step(): the pool threads' spans of one kernel
  std::unique_ptr<core::BatchSource> source_;  // --input host: the loader of the batches
  core::MemoryUsage memory_fp32_;        // the same model's layout in fp32
};

CpuTrainer::CpuTrainer(const core::TrainConfig& cfg, const core::DataSplit& data, const std::vector<float>& init_params)
    : cfg_(cfg), data_(data), pool_(cfg.threads) {
  // --input host: the plan's gather_batch is the loader's batch copied into x_batch, y_batch.
  core::RunPlan run = core::run_plan(cfg, data);
  memory_fp32_ = run.layout_in(core::Precision::FP32).usage(false);
  shape_ = std::move(run.shape);
  plan_ = std::move(run.plan);
  layout_ = std::move(run.layout);
  pool_.record_spans(true);  // the step timeline's per-thread spans (step() takes them after each kernel)
  if (init_params.size() != shape_.param_count)
    throw core::Error(core::ErrorKind::Internal, "cpu trainer: " + std::to_string(init_params.size()) +
                                                     " initial parameters given, the model " + shape_.describe() +
                                                     " has " + std::to_string(shape_.param_count));
  // Every tensor zeroed (zero bytes are +0 in every type: the padding between parameter tensors stays 0); the dataset
  // is the caller's.
  for (size_t i = 0; i < layout_.tensors.size(); ++i) {
    const core::TensorDesc& t = layout_.tensors[i];
    const bool dataset = t.category == &core::MemoryUsage::dataset;
    memory_.emplace_back(dataset ? 0 : layout_.bytes(i));
    base_.push_back(memory_.back().data());
    if (dataset) {
      const core::Dataset& d = t.evaluation ? data.test : data.train;
      base_.back() = t.role == Role::DataX ? static_cast<void*>(const_cast<float*>(d.x.data()))
                                           : static_cast<void*>(const_cast<int32_t*>(d.y.data()));
    }
  }
  uint32_t* test_order = tensor<uint32_t>(Role::Order, -1, true);
  std::iota(test_order, test_order + data.test.count, 0u);
  std::copy(init_params.begin(), init_params.end(), tensor<float>(Role::Params));
  if (cfg.precision != core::Precision::FP32) {
    narrow_weights();
    // The arena of the largest kernel of a step, so that memory_usage() is fixed from here: evaluate() runs the same
    // matmul_forward shapes with at most plan_.batch rows.
    size_t floats = 0;
    for (const auto& entry : plan_.entries) floats = std::max(floats, workspace_floats(entry, cfg.precision));
    ws_.reserve(floats);
  }
  if (plan_.loss_scaling()) reset_scaler(nullptr);
}

void CpuTrainer::narrow_weights() {
  const Narrow copy{tensor<uint16_t>(Role::Weights16), tensor<float>(Role::Params), shape_.param_count};
  narrow_all(std::span<const Narrow>(&copy, 1), cfg_.precision, pool_);
}

void CpuTrainer::reset_scaler(const core::LossScalerState* state) {
  core::LossScalerOptions options;
  options.init_scale = cfg_.loss_scale_init;
  core::LossScaler check(options);
  if (state) check.import_state(*state);  // throws on a corrupt state, before anything is changed
  core::LossScalerBuffer& s = *tensor<core::LossScalerBuffer>(Role::Scaler);
  core::set_scaler_state(s, check.export_state());
  s.found_inf = 0;
  s.optimizer_steps = static_cast<uint32_t>(t_);
  s.beta1_pow = static_cast<float>(core::integer_power(double(cfg_.beta1), static_cast<uint64_t>(t_)));
  s.beta2_pow = static_cast<float>(core::integer_power(double(cfg_.beta2), static_cast<uint64_t>(t_)));
}

void* CpuTrainer::resolve(Role role, int l, bool evaluation) {
  if (evaluation && predict_x_) {
    if (role == Role::DataX) return const_cast<void*>(predict_x_);
    if (role == Role::DataY) return const_cast<void*>(predict_y_);
    if (role == Role::Order) return const_cast<void*>(predict_order_);
  }
  const core::TensorView v = layout_.resolve(role, l, evaluation);
  const core::TensorDesc& t = layout_.tensors[static_cast<size_t>(v.tensor)];
  return static_cast<std::byte*>(base_[static_cast<size_t>(v.tensor)]) +
         v.offset * core::elem_bytes(t.elem, layout_.precision);
}

void CpuTrainer::run(const core::PlanEntry& entry, const core::StepArgs& args, bool evaluation) {
  const core::KernelDef& def = core::kernel_def(entry.op);
  std::array<void*, 8> bindings{};
  size_t n = 0;
  for (const core::BindingDef& b : def.bindings)
    if (core::present(b.when, plan_.precision)) bindings.at(n++) = resolve(b.role, entry.layer, evaluation);
  run_kernel(entry, args, std::span<void* const>(bindings.data(), n), {plan_.precision, pool_, ws_});
}

void CpuTrainer::begin_epoch(std::span<const uint32_t> order) {
  if (order.size() > static_cast<size_t>(data_.train.count))
    throw core::Error(core::ErrorKind::Internal, "cpu trainer: an epoch's order longer than the training set");
  std::copy(order.begin(), order.end(), tensor<uint32_t>(Role::Order));
  epoch_samples_ = order.size();
  if (source_) source_->begin_epoch(order);
}

void CpuTrainer::set_batch_source(std::unique_ptr<core::BatchSource> source) {
  if (!cfg_.input.host()) throw core::Error(core::ErrorKind::Internal, "cpu trainer: a loader for device input");
  source_ = std::move(source);
}

void CpuTrainer::step(size_t first) {
  if (first + static_cast<size_t>(plan_.batch) > epoch_samples_)
    throw core::Error(core::ErrorKind::Internal, "cpu trainer: step past the end of the epoch's order");
  if (cfg_.input.host() && !source_)
    throw core::Error(core::ErrorKind::Internal, "cpu trainer: --input host without a loader");
  const core::StepArgs args = core::step_args(cfg_, t_ + 1, first);  // slot 0; fp16: t from the scaler's clock
  const unsigned long pool_before = pool_.dispatches();
  core::StepRecord rec;
  core::HostBatch batch;
  if (source_) {  // the loader's batch, waited for (the loader's lag is this backend's too)
    const double wait_start = core::monotonic_seconds();
    batch = source_->take(first);
    rec.host.push_back({core::HostPhase::LoaderWait, wait_start, core::monotonic_seconds()});
    rec.loader = std::move(batch.spans);
  }
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
    if (plan_.entries[i].transfer()) {  // the CPU's "upload": the batch into its input tensors, by the clock
      std::memcpy(tensor<std::byte>(Role::XBatch), batch.x.data(), batch.x.size_bytes());
      std::memcpy(tensor<int32_t>(Role::YBatch), batch.y.data(), batch.y.size_bytes());
    } else {
      run(plan_.entries[i], args, false);
      ++counts_.kernels;
    }
    const auto end = Clock::now();
    rec.kernel_start_ms.push_back(std::chrono::duration<double, std::milli>(start - step_start).count());
    rec.kernel_ms.push_back(std::chrono::duration<double, std::milli>(end - start).count());
    pool_.take_spans(spans_);
    for (size_t t = 1; t < spans_.size(); ++t)
      if (spans_[t].start_s > 0)
        rec.threads.push_back({static_cast<int>(t), static_cast<int>(i), spans_[t].start_s, spans_[t].end_s});
  }
  rec.step_ms = std::chrono::duration<double, std::milli>(Clock::now() - step_start).count();
  rec.loss = tensor<float>(Role::LossHistory)[0];
  if (plan_.loss_scaling()) {
    const core::ScaleHistoryEntry& h = tensor<core::ScaleHistoryEntry>(Role::ScaleHistory)[0];
    rec.loss_scale = h.loss_scale;  // the scale this step's backward pass used
    rec.skipped = h.found_inf != 0;
    t_ = tensor<core::LossScalerBuffer>(Role::Scaler)->optimizer_steps;  // a skipped step is no optimizer step
  } else {
    ++t_;
  }
  ++counts_.steps;
  const long handoffs = static_cast<long>(pool_.dispatches() - pool_before);
  counts_.submits += handoffs;
  counts_.host_waits += handoffs;
  records_.push_back(std::move(rec));
}

void CpuTrainer::forward_rows(long start, long count, bool loss) {
  core::StepArgs args = core::step_args(cfg_, t_ + 1, static_cast<size_t>(start));
  args.evaluation = true;
  args.out_offset = static_cast<uint32_t>(start * shape_.positions);  // a transformer's: every position
  for (const core::PlanEntry& e :
       core::forward_pass(plan_, count, loss ? core::Pass::Evaluation : core::Pass::Prediction))
    run(e, args, true);
}

core::EvalResult CpuTrainer::evaluate() {
  // The plan's forward kernels on the test set, batch by batch (the last batch may be partial), in the trained
  // precision, with the per-sample results into the layout's test-set arrays: as the GPU evaluates.
  const long N = data_.test.count, B = plan_.batch;
  for (long start = 0; start < N; start += B) forward_rows(start, std::min(B, N - start), true);
  const size_t rows = size_t(N) * size_t(shape_.positions);
  return core::evaluation_result(data_.test, {tensor<float>(Role::Losses, -1, true), rows},
                                 {tensor<int32_t>(Role::Correct, -1, true), rows});
}

std::vector<int32_t> CpuTrainer::predict(std::span<const float> x, size_t count) {
  // A transformer's: count sequences of T token ids in, a class (the next token) per position out.
  const size_t P = static_cast<size_t>(shape_.positions);
  const long F = shape_.inputs() * long(P), B = plan_.batch;
  if (x.size() != count * static_cast<size_t>(F))
    throw core::Error(core::ErrorKind::Internal, "cpu trainer: predict() needs count x features inputs");
  // The points as the dataset evaluation reads (gather_batch then the forward kernels), batch by batch.
  const std::vector<int32_t> labels(count * P, 0);
  std::vector<uint32_t> order(count);
  std::iota(order.begin(), order.end(), 0u);
  predict_x_ = x.data(), predict_y_ = labels.data(), predict_order_ = order.data();
  std::vector<int32_t> classes(count * P);
  try {
    for (size_t start = 0; start < count; start += static_cast<size_t>(B)) {
      const long n = static_cast<long>(std::min<size_t>(static_cast<size_t>(B), count - start));
      forward_rows(static_cast<long>(start), n, false);
      std::copy_n(tensor<int32_t>(Role::Predictions), size_t(n) * P, classes.data() + start * P);
    }
  } catch (...) {
    predict_x_ = predict_y_ = predict_order_ = nullptr;
    throw;
  }
  predict_x_ = predict_y_ = predict_order_ = nullptr;
  return classes;
}

core::TrainerState CpuTrainer::export_state() {
  core::TrainerState s;
  s.optimizer = cfg_.optimizer;
  s.params = copy_of(Role::Params);
  s.state1 = copy_of(Role::State1);
  s.state2 = copy_of(Role::State2);  // empty for SGD
  s.steps = step_index_;
  s.optimizer_steps = t_;
  if (plan_.loss_scaling()) s.loss_scaler = core::scaler_state(*tensor<core::LossScalerBuffer>(Role::Scaler));
  return s;
}

void CpuTrainer::import_state(const core::TrainerState& s) {
  const size_t P = shape_.param_count;
  if (s.params.size() != P)
    throw core::Error(core::ErrorKind::Internal, "cpu trainer: imported state has the wrong parameter count");
  std::copy(s.params.begin(), s.params.end(), tensor<float>(Role::Params));
  step_index_ = s.steps;
  float* state2 = tensor<float>(Role::State2);
  const size_t n2 = state2 ? P : 0;
  if (s.optimizer == cfg_.optimizer && s.state1.size() == P && s.state2.size() == n2) {
    std::copy(s.state1.begin(), s.state1.end(), tensor<float>(Role::State1));
    std::copy(s.state2.begin(), s.state2.end(), state2);
    t_ = s.optimizer_steps;
  } else {  // another optimizer: its state starts fresh
    std::fill_n(tensor<float>(Role::State1), P, 0.0f);
    if (state2) std::fill_n(state2, P, 0.0f);
    t_ = 0;
  }
  // The 16-bit copy follows the fp32 masters, so a switch of precision loses nothing; the loss scale carries over
  // between fp16 trainers and starts at loss_scale_init after another precision.
  if (cfg_.precision != core::Precision::FP32) narrow_weights();
  if (plan_.loss_scaling()) reset_scaler(s.loss_scaler ? &*s.loss_scaler : nullptr);
}

// The layout's tensors less the dataset (read in place), and the Workspace16 arena of the 16-bit kernels' widened
// operands. Not counted: the step records waiting for flush(), the GEMM's thread-local packing buffers
// (cpu/gemm.cpp: the packed B of the largest GEMM, K x N floats, held by the training thread, and an mc x kc slice of
// A per pool thread), the 16-bit optimizers' chunk buffers, predict()'s points and the bandwidth measurement's
// short-lived 2 x 64 MiB.
core::MemoryUsage CpuTrainer::memory_usage() const {
  core::MemoryUsage m = layout_.usage(false);
  m.workspace += ws_.bytes();
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
