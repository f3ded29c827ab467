// The 16-bit storage variants of every GPU kernel (fp16, bf16; fp32 arithmetic inside) against the fp32 CPU kernels
// (cpu/kernels.hpp), on odd shapes, with the Vulkan validation layer on (any error message fails the test).
//
// The inputs are made on the host, rounded to the 16-bit type (core/half.hpp, round to nearest even) and uploaded as
// uint16 arrays; the CPU reference runs in fp32 on the same rounded values. What remains is the kernel's own error:
// the final rounding of each output to 16 bits (at most half an ulp: 2^-11 relative for fp16, 2^-8 for bf16) and the
// fp32 differences (summation order, exp/tanh of the device). Per element |gpu - ref| <= atol + rtol*|ref| with
//   rtol = 1e-3 (fp16), 1.6e-2 (bf16): CONVENTIONS.md's per-dtype defaults, above half an ulp of each type;
//   atol, element-wise outputs: 2^-14 for fp16 (its smallest normal: a device without shaderDenormPreserveFloat16
//     may flush fp16 subnormals), 0 for bf16 (float's range: nothing to flush at these magnitudes);
//   atol, outputs that are sums (GEMMs, bias_backward): 1e-3 * max|ref| in addition, because a sum that cancels to
//     near zero carries the fp32 rounding of its large terms (K * 2^-24 * max|term|), which rtol*|ref| cannot cover.
// The tolerances cannot tell round-to-nearest from truncation (one ulp is below rtol), so each test also counts the
// outputs whose value equals the host's rounding of the fp32 reference (compared as values: ReLU gives -0 on one side
// and +0 on the other): at least 99% must (only outputs within an fp32 rounding difference of a 16-bit midpoint may
// differ; truncation would match about half). The count skips outputs below 1e-3 * max|ref|: their fp32 values carry
// cancellation (sums; GELU's 1 + tanh(u) for x << 0, where lavapipe's tanh and glibc's tanhf differ by a few 1e-8
// absolute), so their 16-bit rounding is not a test of the kernel's store; the tolerance still covers them.
// gather_batch's x_batch and the optimizers' weights16 (one rounding of an fp32 value) must match bit for bit; the
// optimizers' fp32 master weights and state use the fp32 measure of test_gpu_kernels.cpp (NMSE <= 1e-7).
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <string>

#include "core/half.hpp"
#include "core/loss_scaler.hpp"
#include "cpu/kernels.hpp"
#include "cpu/thread_pool.hpp"
#include "gpu/kernels.hpp"
#include "gpu_test_util.hpp"

using test::from_buffer;
using test::random_vector;
using test::to_buffer;

namespace {

struct Dtype {
  core::Precision precision;
  double rtol;
  double atol;  // element-wise outputs
  uint16_t to_bits(float x) const {
    return precision == core::Precision::FP16 ? core::float_to_fp16(x) : core::float_to_bf16(x);
  }
  float from_bits(uint16_t b) const {
    return precision == core::Precision::FP16 ? core::fp16_to_float(b) : core::bf16_to_float(b);
  }
  std::vector<uint16_t> bits(const std::vector<float>& v) const {
    std::vector<uint16_t> out(v.size());
    for (size_t i = 0; i < v.size(); ++i) out[i] = to_bits(v[i]);
    return out;
  }
  std::vector<float> floats(const std::vector<uint16_t>& v) const {
    std::vector<float> out(v.size());
    for (size_t i = 0; i < v.size(); ++i) out[i] = from_bits(v[i]);
    return out;
  }
  // The value the GPU sees: v rounded to the 16-bit type, back in float.
  std::vector<float> rounded(const std::vector<float>& v) const { return floats(bits(v)); }
};

const std::array<Dtype, 2> kDtypes = {Dtype{core::Precision::FP16, 1e-3, 0x1p-14},
                                      Dtype{core::Precision::BF16, 1.6e-2, 0.0}};

struct Shape {
  long B, C, OC;
};
// As test_gpu_kernels.cpp: batch 1, 7, 33; feature counts below, between and above the tile sizes; 10 classes.
const std::array<Shape, 5> kShapes = {Shape{1, 5, 3}, Shape{7, 17, 10}, Shape{33, 70, 65}, Shape{33, 130, 10},
                                      Shape{64, 64, 64}};

// Per output name, over a whole test case: element count, how many were correctly rounded, the largest error.
struct Stats {
  size_t n = 0, counted = 0, exact = 0;  // counted: |ref| >= 1e-3 * max|ref|; exact: of those, correctly rounded
  double max_abs = 0, max_ratio = 0;  // ratio: |gpu - ref| / (atol + rtol*|ref|), <= 1 passes
};

class Checker {
 public:
  explicit Checker(const Dtype& dt) : dt_(dt) {}

  // gpu (16-bit bits) against the fp32 reference; sum: the output is a sum (adds 1e-3 * max|ref| to atol).
  void check(const std::vector<uint16_t>& gpu, const std::vector<float>& ref, const std::string& what, bool sum) {
    REQUIRE(gpu.size() == ref.size());
    double max_ref = 0;
    for (float r : ref) max_ref = std::max(max_ref, double(std::fabs(r)));
    const double atol = dt_.atol + (sum ? 1e-3 * max_ref : 0.0);
    Stats& s = stats_[what];
    int shown = 0;
    size_t bad = 0;
    for (size_t i = 0; i < ref.size(); ++i) {
      const double g = dt_.from_bits(gpu[i]);
      const double err = std::fabs(g - double(ref[i]));
      const double tol = atol + dt_.rtol * std::fabs(double(ref[i]));
      s.max_abs = std::max(s.max_abs, err);
      s.max_ratio = std::max(s.max_ratio, tol > 0 ? err / tol : (err > 0 ? INFINITY : 0.0));
      if (std::fabs(ref[i]) >= 1e-3 * max_ref) {  // see the top of the file: the rounding count skips tiny outputs
        ++s.counted;
        s.exact += g == double(dt_.from_bits(dt_.to_bits(ref[i])));  // as values: -0 == +0 (ReLU of a negative)
      }
      if (err > tol) {
        ++bad;
        if (shown++ < 5) MESSAGE(what, "[", i, "]: gpu ", g, " cpu ", ref[i], " |diff| ", err, " > tol ", tol);
      }
    }
    s.n += ref.size();
    CHECK_MESSAGE(bad == 0, what, ": ", bad, " of ", ref.size(), " outside the tolerance");
  }

  // The end of a test case: at least 99% correctly rounded per output; the largest errors, for the record.
  ~Checker() {
    for (const auto& [what, s] : stats_) {
      MESSAGE(std::string(core::to_string(dt_.precision)), " ", what, ": ", s.n, " values, max |gpu-ref| ", s.max_abs,
              ", max |gpu-ref|/tol ", s.max_ratio, ", correctly rounded ", s.exact, " of ",
              s.counted, " (", 100.0 * double(s.exact) / double(s.counted), "%)");
      CHECK_MESSAGE(double(s.exact) >= 0.99 * double(s.counted), what,
                    ": too few outputs are the nearest 16-bit value");
    }
  }

 private:
  const Dtype& dt_;
  std::map<std::string, Stats> stats_;
};

// The fp16 kernels' scaler state buffer (gpu::LossScalerDeviceState) with `scale` and a fresh step clock.
std::vector<gpu::LossScalerDeviceState> scaler_state(float scale) {
  gpu::LossScalerDeviceState st;
  st.scaler.scale = scale;
  return {st};
}

struct Fixture {
  std::unique_ptr<vk::Context> ctx = test::make_context();
  std::unique_ptr<gpu::Kernels> kernels;
  cpu::ThreadPool pool{2};
  vk::DescriptorPool descriptors = ctx ? vk::DescriptorPool(*ctx, 512, 5) : vk::DescriptorPool();

  // False (recorded as a skip) when there is no device or it lacks 16-bit storage.
  bool use(core::Precision p, std::optional<gpu::GemmTiles> tiles = {}) {
    if (!ctx) return false;
    std::string why;
    if (!gpu::precision_supported(ctx->info(), p, &why)) {
      test::skip(std::string(core::to_string(p)) + " GPU kernels", why);
      return false;
    }
    kernels = std::make_unique<gpu::Kernels>(*ctx, tiles, p);
    return true;
  }
  VkDescriptorSet set(core::Op op, std::vector<vk::BufferRange> ranges) {
    return descriptors.allocate(*ctx, kernels->pipeline(op), ranges);
  }
  std::vector<uint16_t> read16(const vk::Buffer& b, size_t n) { return from_buffer<uint16_t>(*ctx, b, n); }
  ~Fixture() {
    if (ctx) test::check_no_validation_messages(ctx->validation_log());
  }
};

}  // namespace

TEST_CASE("precision_supported: fp32 always, 16-bit storage variants only with storageBuffer16BitAccess") {
  vk::DeviceInfo d;
  d.name = "test device";
  std::string why;
  CHECK(gpu::precision_supported(d, core::Precision::FP32, &why));
  CHECK_FALSE(gpu::precision_supported(d, core::Precision::FP16, &why));
  CHECK(why.find("storageBuffer16BitAccess") != std::string::npos);
  CHECK_FALSE(gpu::precision_supported(d, core::Precision::BF16, nullptr));
  d.storage_16bit = true;
  CHECK(gpu::precision_supported(d, core::Precision::FP16, nullptr));
  CHECK(gpu::precision_supported(d, core::Precision::BF16, nullptr));
  CHECK(core::parse_precision("bf16") == core::Precision::BF16);
  CHECK(core::parse_precision("fp16") == core::Precision::FP16);
  CHECK(core::parse_precision("fp32") == core::Precision::FP32);
  CHECK_FALSE(core::parse_precision("FP8").has_value());
}

TEST_CASE("16-bit matmul_forward matches the fp32 CPU on rounded inputs, odd shapes, every tiling") {
  Fixture f;
  for (const Dtype& dt : kDtypes) {
    const std::string dtype = core::to_string(dt.precision);
    CAPTURE(dtype);
    Checker check(dt);
    for (const auto& tiles : gpu::gemm_tile_candidates()) {
      if (!f.ctx || tiles.shared_bytes() > f.ctx->limits().maxComputeSharedMemorySize) continue;
      if (!f.use(dt.precision, tiles)) return;
      CAPTURE(tiles.tile_m);
      CAPTURE(tiles.thread_m);
      for (const auto& s : kShapes) {
        for (int mode = 0; mode < 3; ++mode) {
          const bool apply_act = mode > 0;
          const auto act = mode == 2 ? core::Activation::GELU : core::Activation::ReLU;
          CAPTURE(s.B);
          CAPTURE(s.C);
          CAPTURE(s.OC);
          CAPTURE(mode);
          auto inp = dt.rounded(random_vector(s.B * s.C, 1));
          auto w = dt.rounded(random_vector(s.OC * s.C, 2));
          auto b = dt.rounded(random_vector(s.OC, 3));
          std::vector<float> out(s.B * s.OC), pre(s.B * s.OC);
          cpu::matmul_forward(out.data(), pre.data(), inp.data(), w.data(), b.data(), s.B, s.C, s.OC, apply_act, act,
                              f.pool);
          auto g_out = to_buffer(*f.ctx, std::vector<uint16_t>(out.size()), "out");
          auto g_pre = to_buffer(*f.ctx, std::vector<uint16_t>(pre.size()), "preact");
          auto g_inp = to_buffer(*f.ctx, dt.bits(inp), "inp");
          auto g_w = to_buffer(*f.ctx, dt.bits(w), "weight");
          auto g_b = to_buffer(*f.ctx, dt.bits(b), "bias");
          auto set = f.set(core::Op::MatmulForward, {{&g_out}, {&g_pre}, {&g_inp}, {&g_w}, {&g_b}});
          f.ctx->run_one_shot(
              [&](VkCommandBuffer cmd) { f.kernels->matmul_forward(cmd, set, s.B, s.C, s.OC, apply_act, act); });
          const std::string out_name = apply_act ? std::string("out ") + core::to_string(act) : "logits";
          check.check(f.read16(g_out, out.size()), out, out_name, true);
          if (apply_act) check.check(f.read16(g_pre, pre.size()), pre, "preact", true);
        }
      }
    }
  }
}

TEST_CASE("16-bit matmul_backward_data, matmul_backward_weight and bias_backward match the fp32 CPU, every tiling") {
  Fixture f;
  for (const Dtype& dt : kDtypes) {
    const std::string dtype = core::to_string(dt.precision);
    CAPTURE(dtype);
    Checker check(dt);
    for (const auto& tiles : gpu::gemm_tile_candidates()) {
      if (!f.ctx || tiles.shared_bytes() > f.ctx->limits().maxComputeSharedMemorySize) continue;
      if (!f.use(dt.precision, tiles)) return;
      CAPTURE(tiles.tile_m);
      CAPTURE(tiles.thread_m);
      for (const auto& s : kShapes) {
        CAPTURE(s.B);
        CAPTURE(s.C);
        CAPTURE(s.OC);
        auto dout = dt.rounded(random_vector(s.B * s.OC, 4));
        auto w = dt.rounded(random_vector(s.OC * s.C, 5));
        auto inp = dt.rounded(random_vector(s.B * s.C, 6));
        std::vector<float> dinp(s.B * s.C), dw(s.OC * s.C), db(s.OC);
        cpu::matmul_backward_data(dinp.data(), dout.data(), w.data(), s.B, s.C, s.OC, f.pool);
        cpu::matmul_backward_weight(dw.data(), dout.data(), inp.data(), s.B, s.C, s.OC, f.pool);
        cpu::bias_backward(db.data(), dout.data(), s.B, s.OC, f.pool);
        auto g_dinp = to_buffer(*f.ctx, std::vector<uint16_t>(dinp.size()), "dinp");
        auto g_dw = to_buffer(*f.ctx, std::vector<uint16_t>(dw.size()), "dweight");
        auto g_db = to_buffer(*f.ctx, std::vector<uint16_t>(db.size()), "dbias");
        auto g_dout = to_buffer(*f.ctx, dt.bits(dout), "dout");
        auto g_w = to_buffer(*f.ctx, dt.bits(w), "weight");
        auto g_inp = to_buffer(*f.ctx, dt.bits(inp), "inp");
        auto set_d = f.set(core::Op::MatmulBackwardData, {{&g_dinp}, {&g_dout}, {&g_w}});
        auto set_w = f.set(core::Op::MatmulBackwardWeight, {{&g_dw}, {&g_dout}, {&g_inp}});
        auto set_b = f.set(core::Op::BiasBackward, {{&g_db}, {&g_dout}});
        f.ctx->run_one_shot([&](VkCommandBuffer cmd) {
          f.kernels->matmul_backward_data(cmd, set_d, s.B, s.C, s.OC);
          f.kernels->matmul_backward_weight(cmd, set_w, s.B, s.C, s.OC);
          f.kernels->bias_backward(cmd, set_b, s.B, s.OC);
        });
        check.check(f.read16(g_dinp, dinp.size()), dinp, "dinp", true);
        check.check(f.read16(g_dw, dw.size()), dw, "dweight", true);
        check.check(f.read16(g_db, db.size()), db, "dbias", true);
      }
    }
  }
}

TEST_CASE("16-bit softmax_xent_forward_backward, loss_reduce and act_backward match the fp32 CPU") {
  Fixture f;
  for (const Dtype& dt : kDtypes) {
    const std::string dtype = core::to_string(dt.precision);
    CAPTURE(dtype);
    if (!f.use(dt.precision)) return;
    Checker check(dt);
    for (long B : {1L, 7L, 33L}) {
      for (long K : {3L, 10L}) {
        CAPTURE(B);
        CAPTURE(K);
        auto logits = dt.rounded(random_vector(B * K, 8, -4, 4));
        std::vector<int32_t> labels(B);
        for (long b = 0; b < B; ++b) labels[b] = static_cast<int32_t>((b * 7 + 3) % K);
        std::vector<float> losses(B), dlogits(B * K);
        std::vector<int32_t> correct(B);
        // fp16 multiplies dlogits by the loss scale of its scaler binding: a power of two, so the reference's
        // dlogits scaled by it round the same way.
        const float scale = dt.precision == core::Precision::FP16 ? 4.0f : 1.0f;
        cpu::softmax_xent_forward_backward(losses.data(), dlogits.data(), correct.data(), logits.data(), labels.data(),
                                           B, K, scale / B, f.pool);
        const float mean = cpu::loss_reduce(losses.data(), B);
        auto g_losses = to_buffer(*f.ctx, std::vector<float>(B), "losses (fp32)");
        auto g_dlogits = to_buffer(*f.ctx, std::vector<uint16_t>(B * K), "dlogits");
        auto g_correct = to_buffer(*f.ctx, std::vector<int32_t>(B), "correct");
        auto g_logits = to_buffer(*f.ctx, dt.bits(logits), "logits");
        auto g_labels = to_buffer(*f.ctx, labels, "labels");
        auto g_hist = to_buffer(*f.ctx, std::vector<float>(4), "loss_history (fp32)");
        auto g_scaler = to_buffer(*f.ctx, scaler_state(scale), "loss scaler");
        std::vector<vk::BufferRange> ranges = {{&g_losses}, {&g_dlogits}, {&g_correct}, {&g_logits}, {&g_labels}};
        if (dt.precision == core::Precision::FP16) ranges.push_back({&g_scaler});
        auto set = f.set(core::Op::SoftmaxXentForwardBackward, ranges);
        auto set_r = f.set(core::Op::LossReduce, {{&g_hist}, {&g_losses}});
        f.ctx->run_one_shot([&](VkCommandBuffer cmd) {
          f.kernels->softmax_xent_forward_backward(cmd, set, B, K, 1.0f / B, true, 0);
          vk::compute_barrier(cmd);  // RAW: loss_reduce reads the losses
          f.kernels->loss_reduce(cmd, set_r, B, 2);
        });
        // The losses stay fp32: computed in fp32 from the same rounded logits, so the fp32 tolerance applies.
        CHECK(test::nmse(from_buffer<float>(*f.ctx, g_losses, B), losses, "losses") <= 1e-7);
        check.check(f.read16(g_dlogits, B * K), dlogits, "dlogits", false);
        CHECK(from_buffer<int32_t>(*f.ctx, g_correct, B) == correct);
        CHECK(from_buffer<float>(*f.ctx, g_hist, 4)[2] == doctest::Approx(mean).epsilon(1e-6));
      }
    }
    for (auto act : {core::Activation::ReLU, core::Activation::GELU}) {
      const size_t N = 1000;
      auto dout = dt.rounded(random_vector(N, 9));
      auto pre = dt.rounded(random_vector(N, 10, -3, 3));
      std::vector<float> dpre(N);
      cpu::act_backward(dpre.data(), dout.data(), pre.data(), N, act, f.pool);
      auto g_d = to_buffer(*f.ctx, dt.bits(dout), "dout (in place)");
      auto g_pre = to_buffer(*f.ctx, dt.bits(pre), "preact");
      auto set = f.set(core::Op::ActBackward, {{&g_d}, {&g_d}, {&g_pre}});
      f.ctx->run_one_shot([&](VkCommandBuffer cmd) { f.kernels->act_backward(cmd, set, N, act); });
      check.check(f.read16(g_d, N), dpre, std::string("act_backward ") + core::to_string(act), false);
    }
  }
}

TEST_CASE(
    "16-bit gather_batch rounds the fp32 dataset; adamw_update and sgd_update keep fp32 masters and write "
    "weights16 = round(master)") {
  Fixture f;
  for (const Dtype& dt : kDtypes) {
    const std::string dtype = core::to_string(dt.precision);
    CAPTURE(dtype);
    if (!f.use(dt.precision)) return;
    {
      const long N = 50, C = 13, B = 7;
      auto x = random_vector(N * C, 11);  // fp32 on the device, not rounded: gather_batch does the rounding
      std::vector<int32_t> y(N);
      std::vector<uint32_t> order(N);
      for (long i = 0; i < N; ++i) {
        y[i] = static_cast<int32_t>(i % 10);
        order[i] = static_cast<uint32_t>((i * 17 + 5) % N);
      }
      std::vector<float> xb(B * C);
      std::vector<int32_t> yb(B);
      cpu::gather_batch(xb.data(), yb.data(), x.data(), y.data(), order.data() + 20, B, C, f.pool);
      auto g_xb = to_buffer(*f.ctx, std::vector<uint16_t>(B * C), "x_batch");
      auto g_yb = to_buffer(*f.ctx, std::vector<int32_t>(B), "y_batch");
      auto g_x = to_buffer(*f.ctx, x, "x (fp32)");
      auto g_y = to_buffer(*f.ctx, y, "y");
      auto g_o = to_buffer(*f.ctx, order, "order");
      auto set = f.set(core::Op::GatherBatch, {{&g_xb}, {&g_yb}, {&g_x}, {&g_y}, {&g_o}});
      f.ctx->run_one_shot([&](VkCommandBuffer cmd) { f.kernels->gather_batch(cmd, set, B, C, 20); });
      CHECK(f.read16(g_xb, B * C) == dt.bits(xb));  // bit for bit: one rounding to nearest even, as the host's
      CHECK(from_buffer<int32_t>(*f.ctx, g_yb, B) == yb);
    }
    const size_t N = 777;
    const auto params = random_vector(N, 12);
    const auto grads = dt.rounded(random_vector(N, 13, -0.1f, 0.1f));
    // fp16: the device holds the gradients multiplied by the loss scale (exact for a power of two) and divides them
    // again; its step clock advances in update_loss_scale, run after every update as in training.
    const bool scaled = dt.precision == core::Precision::FP16;
    const float S = scaled ? 256.0f : 1.0f;
    std::vector<float> scaled_grads(N);
    for (size_t i = 0; i < N; ++i) scaled_grads[i] = grads[i] * S;
    const auto grad_bits = dt.bits(scaled_grads);
    auto advance_clock = [&](VkCommandBuffer cmd, VkDescriptorSet clock_set) {
      if (!scaled) return;
      vk::compute_barrier(cmd);
      f.kernels->update_loss_scale(cmd, clock_set, 0, 2.0f, 0.5f, 2000, 0.9f, 0.999f);
    };
    {
      std::vector<float> p = params, m(N, 0), v(N, 0);
      auto g_p = to_buffer(*f.ctx, p, "params (fp32 master)");
      auto g_m = to_buffer(*f.ctx, m, "m");
      auto g_v = to_buffer(*f.ctx, v, "v");
      auto g_g = to_buffer(*f.ctx, grad_bits, "grads");
      auto g_w16 = to_buffer(*f.ctx, std::vector<uint16_t>(N), "weights16");
      auto g_scaler = to_buffer(*f.ctx, scaler_state(S), "loss scaler");
      auto g_hist = to_buffer(*f.ctx, std::vector<gpu::ScaleHistoryEntry>(1), "scale history");
      std::vector<vk::BufferRange> ranges = {{&g_p}, {&g_m}, {&g_v}, {&g_g}, {&g_w16}};
      if (scaled) ranges.push_back({&g_scaler});
      auto set = f.set(core::Op::AdamWUpdate, ranges);
      VkDescriptorSet clock = scaled ? f.set(core::Op::UpdateLossScale, {{&g_scaler}, {&g_hist}}) : VK_NULL_HANDLE;
      for (long t = 1; t <= 3; ++t) {
        cpu::adamw_update(p.data(), m.data(), v.data(), grads.data(), N, 1e-2f, 0.9f, 0.999f, 1e-8f, 0.01f, t, f.pool);
        const float bc1 = static_cast<float>(1 - std::pow(0.9, double(t)));
        const float bc2 = static_cast<float>(1 - std::pow(0.999, double(t)));
        f.ctx->run_one_shot([&](VkCommandBuffer cmd) {
          f.kernels->adamw_update(cmd, set, N, 1e-2f, 0.9f, 0.999f, 1e-8f, 0.01f, bc1, bc2);
          advance_clock(cmd, clock);
        });
      }
      const auto master = from_buffer<float>(*f.ctx, g_p, N);
      CHECK(test::nmse(master, p, "adamw params") <= 1e-7);
      CHECK(test::nmse(from_buffer<float>(*f.ctx, g_m, N), m, "adamw m") <= 1e-7);
      CHECK(test::nmse(from_buffer<float>(*f.ctx, g_v, N), v, "adamw v") <= 1e-7);
      CHECK(f.read16(g_w16, N) == dt.bits(master));
    }
    {
      std::vector<float> p = params, buf(N, 0);
      auto g_p = to_buffer(*f.ctx, p, "params (fp32 master)");
      auto g_buf = to_buffer(*f.ctx, buf, "momentum");
      auto g_g = to_buffer(*f.ctx, grad_bits, "grads");
      auto g_w16 = to_buffer(*f.ctx, std::vector<uint16_t>(N), "weights16");
      auto g_scaler = to_buffer(*f.ctx, scaler_state(S), "loss scaler");
      auto g_hist = to_buffer(*f.ctx, std::vector<gpu::ScaleHistoryEntry>(1), "scale history");
      std::vector<vk::BufferRange> ranges = {{&g_p}, {&g_buf}, {&g_g}, {&g_w16}};
      if (scaled) ranges.push_back({&g_scaler});
      auto set = f.set(core::Op::SgdUpdate, ranges);
      VkDescriptorSet clock = scaled ? f.set(core::Op::UpdateLossScale, {{&g_scaler}, {&g_hist}}) : VK_NULL_HANDLE;
      for (long t = 1; t <= 3; ++t) {
        cpu::sgd_update(p.data(), buf.data(), grads.data(), N, 0.1f, 0.9f, 0.001f, t, f.pool);
        f.ctx->run_one_shot([&](VkCommandBuffer cmd) {
          f.kernels->sgd_update(cmd, set, N, 0.1f, 0.9f, 0.001f, t == 1);
          advance_clock(cmd, clock);
        });
      }
      const auto master = from_buffer<float>(*f.ctx, g_p, N);
      CHECK(test::nmse(master, p, "sgd params") <= 1e-7);
      CHECK(test::nmse(from_buffer<float>(*f.ctx, g_buf, N), buf, "sgd momentum") <= 1e-7);
      CHECK(f.read16(g_w16, N) == dt.bits(master));
    }
  }
}

TEST_CASE(
    "fp16 loss scaling on the device: a scripted sequence of overflows gives core::LossScaler's scale, tracker and "
    "skipped count step by step, and a skipped step leaves weights, optimizer state and step clock unchanged") {
  Fixture f;
  if (!f.use(core::Precision::FP16)) return;
  const size_t N = 1000;
  const core::LossScalerOptions options{1024.0f, 2.0f, 0.5f, 3};  // a short growth interval to see growths
  core::LossScaler reference(options);
  // 1 = this step's gradients hold an inf or NaN. Covers growth after 3 clean steps, a single and a double overflow.
  const std::vector<int> script = {0, 0, 1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 1, 0};
  const auto params0 = random_vector(N, 21);
  std::vector<float> grads(N);
  for (size_t i = 0; i < N; ++i) grads[i] = core::fp16_to_float(core::float_to_fp16(random_vector(N, 22)[i] * 50));
  auto g_p = to_buffer(*f.ctx, params0, "params (fp32 master)");
  auto g_m = to_buffer(*f.ctx, std::vector<float>(N), "m");
  auto g_v = to_buffer(*f.ctx, std::vector<float>(N), "v");
  auto g_g = to_buffer(*f.ctx, std::vector<uint16_t>(N), "grads (fp16)");
  auto g_w16 = to_buffer(*f.ctx, std::vector<uint16_t>(N), "weights16");
  auto g_scaler = to_buffer(*f.ctx, scaler_state(options.init_scale), "loss scaler");
  auto g_hist = to_buffer(*f.ctx, std::vector<gpu::ScaleHistoryEntry>(script.size()), "scale history");
  auto check_set = f.set(core::Op::CheckFiniteGrads, {{&g_scaler}, {&g_g}});
  auto adamw_set = f.set(core::Op::AdamWUpdate, {{&g_p}, {&g_m}, {&g_v}, {&g_g}, {&g_w16}, {&g_scaler}});
  auto scale_set = f.set(core::Op::UpdateLossScale, {{&g_scaler}, {&g_hist}});
  std::vector<float> p = params0, m(N, 0), v(N, 0);  // the CPU reference of the applied updates
  long applied = 0;
  for (size_t step = 0; step < script.size(); ++step) {
    CAPTURE(step);
    const float scale_used = reference.scale();
    std::vector<uint16_t> bits(N);
    for (size_t i = 0; i < N; ++i) bits[i] = core::float_to_fp16(grads[i]);
    if (script[step]) bits[(step * 37) % N] = step % 2 ? 0x7c00 : 0xfe01;  // +inf, or a NaN
    g_g.upload(*f.ctx, bits.data(), N * 2);
    const auto p_before = from_buffer<float>(*f.ctx, g_p, N);
    const auto m_before = from_buffer<float>(*f.ctx, g_m, N);
    const auto w_before = f.read16(g_w16, N);
    f.ctx->run_one_shot([&](VkCommandBuffer cmd) {
      f.kernels->check_finite_grads(cmd, check_set, N);
      vk::compute_barrier(cmd);
      f.kernels->adamw_update(cmd, adamw_set, N, 1e-2f, 0.9f, 0.999f, 1e-8f, 0.01f, 0, 0);
      vk::compute_barrier(cmd);
      f.kernels->update_loss_scale(cmd, scale_set, static_cast<uint32_t>(step), options.growth_factor,
                                   options.backoff_factor, options.growth_interval, 0.9f, 0.999f);
    });
    const bool applied_now = reference.update(script[step] != 0);
    const auto hist = from_buffer<gpu::ScaleHistoryEntry>(*f.ctx, g_hist, script.size());
    CHECK(hist[step].loss_scale == scale_used);
    CHECK(hist[step].found_inf == static_cast<uint32_t>(script[step]));
    const auto device = from_buffer<gpu::LossScalerDeviceState>(*f.ctx, g_scaler, 1)[0];
    const core::LossScalerState want = reference.export_state();
    CHECK(device.scaler.scale == want.scale);
    CHECK(device.scaler.growth_tracker == want.growth_tracker);
    CHECK(device.scaler.skipped == want.skipped);
    CHECK(device.scaler.found_inf == 0);  // consumed and cleared by update_loss_scale
    if (!applied_now) {
      CHECK(from_buffer<float>(*f.ctx, g_p, N) == p_before);
      CHECK(from_buffer<float>(*f.ctx, g_m, N) == m_before);
      CHECK(f.read16(g_w16, N) == w_before);
    } else {
      ++applied;
      std::vector<float> unscaled(N);
      for (size_t i = 0; i < N; ++i) unscaled[i] = core::fp16_to_float(bits[i]) * (1.0f / scale_used);
      cpu::adamw_update(p.data(), m.data(), v.data(), unscaled.data(), N, 1e-2f, 0.9f, 0.999f, 1e-8f, 0.01f, applied,
                        f.pool);
      const auto master = from_buffer<float>(*f.ctx, g_p, N);
      CHECK(master != p_before);
      CHECK(test::nmse(master, p, "adamw params after an applied step") <= 1e-7);
      CHECK(f.read16(g_w16, N) == [&] {
        std::vector<uint16_t> r(N);
        for (size_t i = 0; i < N; ++i) r[i] = core::float_to_fp16(master[i]);
        return r;
      }());
    }
    CHECK(device.optimizer_steps == static_cast<uint32_t>(applied));  // the clock counts applied updates only
  }
  CHECK(reference.skipped_steps() == 4);
}

TEST_CASE("check_finite_grads: finds one inf or NaN anywhere in a large buffer, and nothing in finite gradients") {
  Fixture f;
  if (!f.use(core::Precision::FP16)) return;
  const size_t N = 300000;  // more than one grid-stride pass: 65535 groups x 256 would cover it, 1172 groups do
  std::vector<uint16_t> bits(N);
  for (size_t i = 0; i < N; ++i) bits[i] = core::float_to_fp16(65504.0f * ((i % 17) / 16.0f) * (i % 2 ? 1 : -1));
  auto g_g = to_buffer(*f.ctx, bits, "grads (fp16)");
  auto g_scaler = to_buffer(*f.ctx, scaler_state(1.0f), "loss scaler");
  auto set = f.set(core::Op::CheckFiniteGrads, {{&g_scaler}, {&g_g}});
  auto found = [&] {
    g_scaler.upload(*f.ctx, scaler_state(1.0f).data(), gpu::kLossScalerBytes);
    f.ctx->run_one_shot([&](VkCommandBuffer cmd) { f.kernels->check_finite_grads(cmd, set, N); });
    return from_buffer<gpu::LossScalerDeviceState>(*f.ctx, g_scaler, 1)[0].scaler.found_inf;
  };
  CHECK(found() == 0);  // the largest finite fp16 values are finite
  for (size_t pos : {size_t{0}, size_t{12345}, N - 1}) {
    for (uint16_t bad : {uint16_t{0x7c00}, uint16_t{0xfc00}, uint16_t{0x7e00}, uint16_t{0xfd55}}) {
      CAPTURE(pos);
      CAPTURE(bad);
      std::vector<uint16_t> b = bits;
      b[pos] = bad;
      g_g.upload(*f.ctx, b.data(), N * 2);
      CHECK(found() == 1);
    }
  }
}
