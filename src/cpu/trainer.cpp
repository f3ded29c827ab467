// cpu::Trainer: runs the StepPlan entry by entry with the CPU kernels on a ThreadPool, timing each entry with
// std::chrono::steady_clock. Steps run synchronously: step() finishes the step, flush() hands over its records.
//
// Mixed precision (TrainConfig::precision fp16 / bf16; Micikevicius et al. 2018): activations, the weights the kernels
// read and the gradients are 16-bit (kernels16.hpp), the optimizer keeps fp32 master weights and fp32 state and
// writes the 16-bit weights copy as it updates them. fp16 adds dynamic loss scaling (core::LossScaler, GradScaler
// semantics): the backward pass starts from dlogits scaled by the loss scale, a step whose 16-bit gradients hold an
// inf/NaN is skipped (masters, optimizer state, 16-bit weights and AdamW's t unchanged, as torch skips
// optimizer.step()), and the others are unscaled inside the optimizer.
#include "cpu/trainer.hpp"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <initializer_list>
#include <numeric>
#include <optional>
#include <thread>
#include <utility>

#include "core/error.hpp"
#include "cpu/gemm.hpp"
#include "cpu/kernels.hpp"
#include "cpu/kernels16.hpp"
#include "cpu/thread_pool.hpp"

namespace cpu {
namespace {

using core::Op;
using Clock = std::chrono::steady_clock;

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
  double measure_peak_bandwidth_gbps() override;
  core::MemoryUsage memory_usage() const override { return usage(false); }
  core::MemoryUsage memory_usage_fp32() const override { return usage(true); }
  // Every precision runs: the 16-bit conversions use F16C where the build targets it and portable bit manipulation
  // otherwise (core/half.cpp's scalar fallback; bf16 needs no instruction set support at all).
  std::string unsupported_reason(core::Precision) const override { return {}; }

 private:
  // The input of layer l: the gathered batch for the first layer, else the previous layer's output.
  const float* layer_input(int l) const { return l == 0 ? x_batch_.data() : out_[l - 1].data(); }
  // d loss / d (pre-activation) of layer l: dlogits for the last layer, else the act_backward result.
  float* layer_dout(int l) { return l == L_ - 1 ? dlogits_.data() : dpreact_[l].data(); }
  void forward(long B, const core::PlanEntry& e);  // one MatmulForward entry on B rows
  float run_entry(const core::PlanEntry& e, size_t first);  // returns the loss for LossReduce

  // The 16-bit twins of the above (mixed_ only), on the 16-bit tensors.
  bool mixed() const { return plan_.precision != core::Precision::FP32; }
  const uint16_t* layer_input16(int l) const { return l == 0 ? x16_.data() : out16_[l - 1].data(); }
  uint16_t* layer_dout16(int l) { return l == L_ - 1 ? dlogits16_.data() : dpreact16_[l].data(); }
  void forward16(long B, const core::PlanEntry& e);
  float run_entry16(const core::PlanEntry& e, size_t first);
  void optimizer_update16(const core::PlanEntry& e);
  void reset_loss_scaler(const core::LossScalerState* state);  // null: a fresh scaler at cfg_.loss_scale_init
  core::MemoryUsage usage(bool as_fp32) const;  // as_fp32: 16-bit tensors counted at 4 bytes, no masters, no arena

  core::TrainConfig cfg_;
  const core::DataSplit& data_;
  core::ModelShape shape_;
  core::StepPlan plan_;
  ThreadPool pool_;
  int L_ = 0;
  long t_ = 0;  // optimizer steps taken; the next update uses t_ + 1 (torch counts from 1)
  long step_index_ = 0;
  std::vector<uint32_t> order_;  // reserved for the whole training set at construction
  std::vector<core::StepRecord> records_;

  std::vector<float> params_, grads_, state1_, state2_;  // AdamW m, v; SGD: momentum buffer in state1_
  std::vector<float> x_batch_, losses_, dlogits_;
  std::vector<int32_t> y_batch_, correct_;
  std::vector<std::vector<float>> preact_, out_, dact_, dpreact_;  // per layer, (B, OC_l)

  // Mixed precision only (empty in fp32, where the fp32 tensors above are used; in 16-bit those stay empty, except the
  // fp32 masters params_, the optimizer state, losses_, and the int32 y_batch_ and correct_).
  Storage16 s16_ = Storage16::FP16;
  std::vector<uint16_t> weights16_, grads16_, x16_, dlogits16_;  // weights16_ = round(params_) at every update
  std::vector<std::vector<uint16_t>> preact16_, out16_, dact16_, dpreact16_;
  Workspace16 ws_;  // sized in the constructor for the largest kernel of a step (evaluate's are no larger)
  std::optional<core::LossScaler> scaler_;  // fp16 only
  bool found_inf_ = false;  // this step's check_finite_grads result
};

CpuTrainer::CpuTrainer(const core::TrainConfig& cfg, const core::DataSplit& data, const std::vector<float>& init_params)
    : cfg_(cfg), data_(data), pool_(cfg.threads) {
  shape_ = core::model_shape(cfg, data);
  plan_ = core::build_step_plan(shape_, cfg.batch, cfg.activation, cfg.optimizer, cfg.precision);
  L_ = shape_.layers();
  if (init_params.size() != shape_.param_count)
    throw core::Error(core::ErrorKind::Internal, "cpu trainer: " + std::to_string(init_params.size()) +
                                                     " initial parameters given, the model " + shape_.describe() +
                                                     " has " + std::to_string(shape_.param_count));
  const size_t B = static_cast<size_t>(cfg.batch), P = shape_.param_count;
  params_ = init_params;
  state1_.assign(P, 0.0f);
  state2_.assign(cfg.optimizer == core::Optimizer::AdamW ? P : 0, 0.0f);
  order_.reserve(static_cast<size_t>(data.train.count));  // so that memory_usage() holds from the start
  y_batch_.resize(B);
  losses_.resize(B);
  correct_.resize(B);
  const size_t x_n = B * static_cast<size_t>(shape_.inputs()), logits_n = B * static_cast<size_t>(shape_.classes());
  if (!mixed()) {
    grads_.assign(P, 0.0f);  // the padding between tensors stays 0, so the update leaves it at 0
    x_batch_.resize(x_n);
    dlogits_.resize(logits_n);
  } else {
    s16_ = cfg.precision == core::Precision::FP16 ? Storage16::FP16 : Storage16::BF16;
    weights16_.resize(P);
    narrow16(weights16_.data(), params_.data(), P, s16_, pool_);
    grads16_.assign(P, 0);  // 16-bit +0: the padding stays 0 as in fp32
    x16_.resize(x_n);
    dlogits16_.resize(logits_n);
    if (plan_.loss_scaling()) reset_loss_scaler(nullptr);
  }
  for (int l = 0; l < L_; ++l) {
    const size_t n = B * static_cast<size_t>(shape_.fan_out(l));
    const size_t hidden_n = l < L_ - 1 ? n : 0;
    if (!mixed()) {
      preact_.emplace_back(hidden_n);
      out_.emplace_back(n);
      dact_.emplace_back(hidden_n);
      dpreact_.emplace_back(hidden_n);
    } else {
      preact16_.emplace_back(hidden_n);
      out16_.emplace_back(n);
      dact16_.emplace_back(hidden_n);
      dpreact16_.emplace_back(hidden_n);
    }
  }
  if (mixed()) {
    // The arena of the largest kernel of a step (kernels16.hpp lists each kernel's operands), so that memory_usage()
    // is fixed from here: evaluate() runs the same matmul_forward16 shapes with at most plan_.batch rows.
    size_t floats = 0;
    for (const auto& e : plan_.entries) {
      const size_t b = static_cast<size_t>(e.B), c = static_cast<size_t>(e.C), oc = static_cast<size_t>(e.OC);
      auto need = [&](std::initializer_list<size_t> sizes) {
        floats = std::max(floats, Workspace16::floats_for(sizes.begin(), static_cast<int>(sizes.size())));
      };
      switch (e.op) {
        case Op::MatmulForward: need({b * c, oc * c, oc, b * oc, e.activation ? b * oc : 0}); break;
        case Op::MatmulBackwardWeight: need({b * oc, b * c, oc * c}); break;
        case Op::MatmulBackwardData: need({b * oc, oc * c, b * c}); break;
        case Op::BiasBackward: need({b * oc, oc}); break;
        default: break;
      }
    }
    ws_.reserve(floats);
  }
}

void CpuTrainer::reset_loss_scaler(const core::LossScalerState* state) {
  core::LossScalerOptions options;
  options.init_scale = cfg_.loss_scale_init;
  scaler_.emplace(options);
  if (state) scaler_->import_state(*state);
}

void CpuTrainer::forward(long B, const core::PlanEntry& e) {
  const int l = e.layer;
  matmul_forward(out_[l].data(), e.activation ? preact_[l].data() : nullptr, layer_input(l),
                 params_.data() + shape_.weight_offset[l], params_.data() + shape_.bias_offset[l], B, e.C, e.OC,
                 e.activation, cfg_.activation, pool_);
}

float CpuTrainer::run_entry(const core::PlanEntry& e, size_t first) {
  const long B = e.B;
  const int l = e.layer;
  switch (e.op) {
    case Op::GatherBatch:
      if (first + static_cast<size_t>(B) > order_.size())
        throw core::Error(core::ErrorKind::Internal, "cpu trainer: step past the end of the epoch's order");
      gather_batch(x_batch_.data(), y_batch_.data(), data_.train.x.data(), data_.train.y.data(), order_.data() + first,
                   B, e.C, pool_);
      break;
    case Op::MatmulForward:
      forward(B, e);
      break;
    case Op::SoftmaxXentForwardBackward:
      softmax_xent_forward_backward(losses_.data(), dlogits_.data(), static_cast<int32_t*>(nullptr),
                                    out_[L_ - 1].data(), y_batch_.data(), B, e.C, 1.0f / static_cast<float>(B), pool_);
      break;
    case Op::LossReduce:
      return loss_reduce(losses_.data(), B);
    case Op::ActBackward:
      act_backward(dpreact_[l].data(), dact_[l].data(), preact_[l].data(), e.N, cfg_.activation, pool_);
      break;
    case Op::MatmulBackwardWeight:
      matmul_backward_weight(grads_.data() + shape_.weight_offset[l], layer_dout(l), layer_input(l), B, e.C, e.OC,
                             pool_);
      break;
    case Op::BiasBackward:
      bias_backward(grads_.data() + shape_.bias_offset[l], layer_dout(l), B, e.OC, pool_);
      break;
    case Op::MatmulBackwardData:  // into the gradient of the previous layer's output
      matmul_backward_data(dact_[l - 1].data(), layer_dout(l), params_.data() + shape_.weight_offset[l], B, e.C, e.OC,
                           pool_);
      break;
    case Op::AdamWUpdate:
      adamw_update(params_.data(), state1_.data(), state2_.data(), grads_.data(), e.N, cfg_.lr, cfg_.beta1, cfg_.beta2,
                   cfg_.eps, cfg_.effective_weight_decay(), t_ + 1, pool_);
      break;
    case Op::SgdUpdate:
      sgd_update(params_.data(), state1_.data(), grads_.data(), e.N, cfg_.lr, cfg_.momentum,
                 cfg_.effective_weight_decay(), t_ + 1, pool_);
      break;
    case Op::CheckFiniteGrads:  // fp16 plans only
    case Op::UpdateLossScale:
      break;
  }
  return 0.0f;
}

void CpuTrainer::forward16(long B, const core::PlanEntry& e) {
  const int l = e.layer;
  matmul_forward16(out16_[l].data(), e.activation ? preact16_[l].data() : nullptr, layer_input16(l),
                   weights16_.data() + shape_.weight_offset[l], weights16_.data() + shape_.bias_offset[l], B, e.C,
                   e.OC, e.activation, cfg_.activation, s16_, ws_, pool_);
}

float CpuTrainer::run_entry16(const core::PlanEntry& e, size_t first) {
  const long B = e.B;
  const int l = e.layer;
  switch (e.op) {
    case Op::GatherBatch:
      if (first + static_cast<size_t>(B) > order_.size())
        throw core::Error(core::ErrorKind::Internal, "cpu trainer: step past the end of the epoch's order");
      gather_batch16(x16_.data(), y_batch_.data(), data_.train.x.data(), data_.train.y.data(), order_.data() + first,
                     B, e.C, s16_, pool_);
      break;
    case Op::MatmulForward:
      forward16(B, e);
      break;
    case Op::SoftmaxXentForwardBackward: {
      // Loss scaling: d(scale * mean loss) / dlogits, so every gradient of the backward pass is scaled.
      const float scale = scaler_ ? scaler_->scale() : 1.0f;
      softmax_xent_forward_backward16(losses_.data(), dlogits16_.data(), nullptr, out16_[L_ - 1].data(),
                                      y_batch_.data(), B, e.C, 1.0f / static_cast<float>(B) * scale, s16_, pool_);
      break;
    }
    case Op::LossReduce:
      return loss_reduce(losses_.data(), B);
    case Op::ActBackward:
      act_backward16(dpreact16_[l].data(), dact16_[l].data(), preact16_[l].data(), e.N, cfg_.activation, s16_, pool_);
      break;
    case Op::MatmulBackwardWeight:
      matmul_backward_weight16(grads16_.data() + shape_.weight_offset[l], layer_dout16(l), layer_input16(l), B, e.C,
                               e.OC, s16_, ws_, pool_);
      break;
    case Op::BiasBackward:
      bias_backward16(grads16_.data() + shape_.bias_offset[l], layer_dout16(l), B, e.OC, s16_, ws_, pool_);
      break;
    case Op::MatmulBackwardData:
      matmul_backward_data16(dact16_[l - 1].data(), layer_dout16(l), weights16_.data() + shape_.weight_offset[l], B,
                             e.C, e.OC, s16_, ws_, pool_);
      break;
    case Op::CheckFiniteGrads:
      found_inf_ = check_finite_grads16(grads16_.data(), e.N, s16_, pool_);
      break;
    case Op::AdamWUpdate:
    case Op::SgdUpdate:
      if (!found_inf_) optimizer_update16(e);
      break;
    case Op::UpdateLossScale:
      scaler_->update(found_inf_);
      break;
  }
  return 0.0f;
}

void CpuTrainer::optimizer_update16(const core::PlanEntry& e) {
  const float grad_scale = scaler_ ? scaler_->inv_scale() : 1.0f;  // unscales the loss-scaled gradients
  if (e.op == Op::AdamWUpdate)
    adamw_update16(params_.data(), state1_.data(), state2_.data(), weights16_.data(), grads16_.data(), e.N, cfg_.lr,
                   cfg_.beta1, cfg_.beta2, cfg_.eps, cfg_.effective_weight_decay(), t_ + 1, s16_, pool_, grad_scale);
  else
    sgd_update16(params_.data(), state1_.data(), weights16_.data(), grads16_.data(), e.N, cfg_.lr, cfg_.momentum,
                 cfg_.effective_weight_decay(), t_ + 1, s16_, pool_, grad_scale);
}

void CpuTrainer::step(size_t first) {
  core::StepRecord rec;
  rec.step = step_index_++;
  rec.kernel_ms.reserve(plan_.entries.size());
  found_inf_ = false;
  if (scaler_) rec.loss_scale = scaler_->scale();  // the scale this step's backward pass uses
  const bool mixed16 = mixed();
  const auto step_start = Clock::now();
  for (const auto& e : plan_.entries) {
    const auto start = Clock::now();
    const float loss = mixed16 ? run_entry16(e, first) : run_entry(e, first);
    rec.kernel_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    if (e.op == Op::LossReduce) rec.loss = loss;
  }
  rec.step_ms = std::chrono::duration<double, std::milli>(Clock::now() - step_start).count();
  rec.skipped = found_inf_;
  if (!found_inf_) ++t_;  // a skipped step is no optimizer step (AdamW's bias correction counts applied updates)
  records_.push_back(std::move(rec));
}

core::EvalResult CpuTrainer::evaluate() {
  const core::Dataset& test = data_.test;
  const long N = test.count, B = plan_.batch;
  std::vector<uint32_t> rows(static_cast<size_t>(B));
  double loss = 0;
  long right = 0;
  for (long start = 0; start < N; start += B) {
    const long n = std::min(B, N - start);  // the last batch may be partial
    std::iota(rows.begin(), rows.begin() + n, static_cast<uint32_t>(start));
    if (!mixed()) {
      gather_batch(x_batch_.data(), y_batch_.data(), test.x.data(), test.y.data(), rows.data(), n, shape_.inputs(),
                   pool_);
      for (const auto& e : plan_.entries)
        if (e.op == Op::MatmulForward) forward(n, e);
      softmax_xent_forward_backward(losses_.data(), static_cast<float*>(nullptr), correct_.data(),
                                    out_[L_ - 1].data(), y_batch_.data(), n, shape_.classes(), 1.0f, pool_);
    } else {  // the 16-bit model: what training optimises in this precision
      gather_batch16(x16_.data(), y_batch_.data(), test.x.data(), test.y.data(), rows.data(), n, shape_.inputs(), s16_,
                     pool_);
      for (const auto& e : plan_.entries)
        if (e.op == Op::MatmulForward) forward16(n, e);
      softmax_xent_forward_backward16(losses_.data(), nullptr, correct_.data(), out16_[L_ - 1].data(),
                                      y_batch_.data(), n, shape_.classes(), 1.0f, s16_, pool_);
    }
    for (long b = 0; b < n; ++b) {
      loss += losses_[static_cast<size_t>(b)];
      right += correct_[static_cast<size_t>(b)];
    }
  }
  if (N == 0) return {};
  return {loss / static_cast<double>(N), static_cast<double>(right) / static_cast<double>(N)};
}

core::TrainerState CpuTrainer::export_state() {
  core::TrainerState s;
  s.optimizer = cfg_.optimizer;
  s.params = params_;
  s.state1 = state1_;
  s.state2 = state2_;
  s.steps = step_index_;
  s.optimizer_steps = t_;
  if (scaler_) s.loss_scaler = scaler_->export_state();
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
  if (mixed()) narrow16(weights16_.data(), params_.data(), params_.size(), s16_, pool_);
  if (scaler_) reset_loss_scaler(s.loss_scaler ? &*s.loss_scaler : nullptr);
}

// From the capacity of the vectors the trainer owns. Not counted: the dataset (the caller's, read in place: 0), the
// step records waiting for flush(), the GEMM's thread-local packing buffers (cpu/gemm.cpp: the packed B of the
// largest GEMM, K x N floats, held by the training thread, and an mc x kc slice of A per pool thread) and the 16-bit
// kernels' chunk buffers, evaluate()'s row list and the bandwidth measurement's short-lived 2 x 64 MiB.
// as_fp32 (memory_usage_fp32): every 16-bit tensor at 4 bytes per element, the weights counted once (in fp32 they are
// the masters) and no Workspace16 arena (fp32 kernels need no widened copies): the fp32 trainer's own figure.
core::MemoryUsage CpuTrainer::usage(bool as_fp32) const {
  auto bytes = [](const auto& v) { return v.capacity() * sizeof(v[0]); };
  auto bytes16 = [&](const std::vector<uint16_t>& v) { return v.capacity() * (as_fp32 ? 4 : 2); };
  auto per_layer = [&](const auto& layers) {
    size_t sum = 0;
    for (const auto& v : layers) sum += bytes(v);
    return sum;
  };
  auto per_layer16 = [&](const std::vector<std::vector<uint16_t>>& layers) {
    size_t sum = 0;
    for (const auto& v : layers) sum += bytes16(v);
    return sum;
  };
  // Each fp32 tensor below is empty in 16-bit and each 16-bit one empty in fp32, so the sums hold in both.
  core::MemoryUsage m;
  const bool masters = mixed() && !as_fp32;
  m.weights = masters ? bytes16(weights16_) : bytes(params_);
  m.master_weights = masters ? bytes(params_) : 0;
  m.gradients = bytes(grads_) + bytes16(grads16_);
  m.optimizer_state = bytes(state1_) + bytes(state2_);
  m.activations = bytes(x_batch_) + bytes(y_batch_) + bytes(losses_) + bytes(dlogits_) + per_layer(preact_) +
                  per_layer(out_) + per_layer(dact_) + per_layer(dpreact_) + bytes16(x16_) + bytes16(dlogits16_) +
                  per_layer16(preact16_) + per_layer16(out16_) + per_layer16(dact16_) + per_layer16(dpreact16_);
  m.workspace = bytes(order_) + bytes(correct_);  // correct_: per-sample flags of evaluate() only
  if (!as_fp32) m.workspace += ws_.bytes();
  return m;
}

double CpuTrainer::measure_peak_bandwidth_gbps() {
  // STREAM-style copy (McCalpin): 64 MiB read + 64 MiB written, split over the pool's threads; best of 5.
  const size_t n = (64u << 20) / sizeof(float);
  std::vector<float> src(n, 1.0f), dst(n, 0.0f);
  double best = 0;
  for (int rep = 0; rep < 5; ++rep) {
    const auto start = Clock::now();
    pool_.parallel_for(n, 1 << 16, [&](size_t begin, size_t end) {
      std::copy(src.begin() + static_cast<long>(begin), src.begin() + static_cast<long>(end),
                dst.begin() + static_cast<long>(begin));
    });
    const double s = std::chrono::duration<double>(Clock::now() - start).count();
    if (s > 0) best = std::max(best, 2.0 * static_cast<double>(n * sizeof(float)) / s / 1e9);
  }
  return best;
}

}  // namespace

std::unique_ptr<core::Trainer> make_trainer(const core::TrainConfig& cfg, const core::DataSplit& data,
                                            const std::vector<float>& init_params) {
  return std::make_unique<CpuTrainer>(cfg, data, init_params);
}

std::string cpu_description(int threads) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::string model = "unknown CPU";
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const auto begin = line.find_first_not_of(" \t", colon + 1);
    if (begin != std::string::npos) model = line.substr(begin);
    break;
  }
  const std::string simd = gemm_kernel_name();  // the GEMM micro-kernel that runs, e.g. "AVX-512 6x32"
  return model + " (" + std::to_string(threads) + (threads == 1 ? " thread, " : " threads, ") + simd + ")";
}

}  // namespace cpu
