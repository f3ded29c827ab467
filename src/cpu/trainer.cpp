// cpu::Trainer: runs the StepPlan entry by entry with the CPU kernels on a ThreadPool, timing each entry with
// std::chrono::steady_clock. Steps run synchronously: step() finishes the step, flush() hands over its records.
#include "cpu/trainer.hpp"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <numeric>
#include <thread>
#include <utility>

#include "core/error.hpp"
#include "cpu/kernels.hpp"
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
  core::MemoryUsage memory_usage() const override;
  core::MemoryUsage memory_usage_fp32() const override { return memory_usage(); }  // TODO(precision): 16-bit
  std::string unsupported_reason(core::Precision) const override { return {}; }

 private:
  // The input of layer l: the gathered batch for the first layer, else the previous layer's output.
  const float* layer_input(int l) const { return l == 0 ? x_batch_.data() : out_[l - 1].data(); }
  // d loss / d (pre-activation) of layer l: dlogits for the last layer, else the act_backward result.
  float* layer_dout(int l) { return l == L_ - 1 ? dlogits_.data() : dpreact_[l].data(); }
  void forward(long B, const core::PlanEntry& e);  // one MatmulForward entry on B rows
  float run_entry(const core::PlanEntry& e, size_t first);  // returns the loss for LossReduce

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
};

CpuTrainer::CpuTrainer(const core::TrainConfig& cfg, const core::DataSplit& data, const std::vector<float>& init_params)
    : cfg_(cfg), data_(data), pool_(cfg.threads) {
  shape_ = core::model_shape(cfg, data);
  plan_ = core::build_step_plan(shape_, cfg.batch, cfg.activation, cfg.optimizer);
  L_ = shape_.layers();
  if (init_params.size() != shape_.param_count)
    throw core::Error(core::ErrorKind::Internal, "cpu trainer: " + std::to_string(init_params.size()) +
                                                     " initial parameters given, the model " + shape_.describe() +
                                                     " has " + std::to_string(shape_.param_count));
  const size_t B = static_cast<size_t>(cfg.batch), P = shape_.param_count;
  params_ = init_params;
  grads_.assign(P, 0.0f);  // the padding between tensors stays 0, so the update leaves it at 0
  state1_.assign(P, 0.0f);
  state2_.assign(cfg.optimizer == core::Optimizer::AdamW ? P : 0, 0.0f);
  order_.reserve(static_cast<size_t>(data.train.count));  // so that memory_usage() holds from the start
  x_batch_.resize(B * static_cast<size_t>(shape_.inputs()));
  y_batch_.resize(B);
  losses_.resize(B);
  correct_.resize(B);
  dlogits_.resize(B * static_cast<size_t>(shape_.classes()));
  for (int l = 0; l < L_; ++l) {
    const size_t n = B * static_cast<size_t>(shape_.fan_out(l));
    const bool hidden = l < L_ - 1;
    preact_.emplace_back(hidden ? n : 0);
    out_.emplace_back(n);
    dact_.emplace_back(hidden ? n : 0);
    dpreact_.emplace_back(hidden ? n : 0);
  }
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
  }
  return 0.0f;
}

void CpuTrainer::step(size_t first) {
  core::StepRecord rec;
  rec.step = step_index_++;
  rec.kernel_ms.reserve(plan_.entries.size());
  const auto step_start = Clock::now();
  for (const auto& e : plan_.entries) {
    const auto start = Clock::now();
    const float loss = run_entry(e, first);
    rec.kernel_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    if (e.op == Op::LossReduce) rec.loss = loss;
  }
  rec.step_ms = std::chrono::duration<double, std::milli>(Clock::now() - step_start).count();
  ++t_;
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
    gather_batch(x_batch_.data(), y_batch_.data(), test.x.data(), test.y.data(), rows.data(), n, shape_.inputs(),
                 pool_);
    for (const auto& e : plan_.entries)
      if (e.op == Op::MatmulForward) forward(n, e);
    softmax_xent_forward_backward(losses_.data(), static_cast<float*>(nullptr), correct_.data(), out_[L_ - 1].data(),
                                  y_batch_.data(), n, shape_.classes(), 1.0f, pool_);
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
}

// From the capacity of the vectors the trainer owns. Not counted: the dataset (the caller's, read in place: 0), the
// step records waiting for flush(), the kernels' thread-local packing strips (owned by the pool's threads; they grow
// with the batch and the widest layer), evaluate()'s row list and the bandwidth measurement's short-lived 2 x 64 MiB.
core::MemoryUsage CpuTrainer::memory_usage() const {
  auto bytes = [](const auto& v) { return v.capacity() * sizeof(v[0]); };
  auto per_layer = [&](const std::vector<std::vector<float>>& layers) {
    size_t sum = 0;
    for (const auto& v : layers) sum += bytes(v);
    return sum;
  };
  core::MemoryUsage m;
  m.weights = bytes(params_);
  m.gradients = bytes(grads_);
  m.optimizer_state = bytes(state1_) + bytes(state2_);
  m.activations = bytes(x_batch_) + bytes(y_batch_) + bytes(losses_) + bytes(dlogits_) + per_layer(preact_) +
                  per_layer(out_) + per_layer(dact_) + per_layer(dpreact_);
  m.workspace = bytes(order_) + bytes(correct_);  // correct_: per-sample flags of evaluate() only
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
#if defined(__AVX512F__)
  const char* simd = "AVX-512";
#elif defined(__AVX2__)
  const char* simd = "AVX2";
#elif defined(__ARM_NEON)
  const char* simd = "NEON";
#else
  const char* simd = "SSE2";
#endif
  return model + " (" + std::to_string(threads) + (threads == 1 ? " thread, " : " threads, ") + simd + ")";
}

}  // namespace cpu
