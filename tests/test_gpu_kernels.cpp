// Every GPU kernel against its CPU twin (cpu/kernels.hpp) on odd shapes that are not multiples of a GEMM tile,
// normalized MSE <= 1e-7 (fp32), with the Vulkan validation layer on: any error message fails the test.
#include <doctest/doctest.h>

#include <array>
#include <cmath>

#include "cpu/kernels.hpp"
#include "cpu/thread_pool.hpp"
#include "gpu/kernels.hpp"
#include "gpu_test_util.hpp"

using test::from_buffer;
using test::nmse;
using test::random_vector;
using test::to_buffer;

namespace {

constexpr double kMaxNmse = 1e-7;

struct Shape {
  long B, C, OC;
};
// Batch 1, 7, 33; feature counts below, between and above the 16/32/64 tile sizes; 10 classes.
const std::array<Shape, 5> kShapes = {Shape{1, 5, 3}, Shape{7, 17, 10}, Shape{33, 70, 65}, Shape{33, 130, 10},
                                      Shape{64, 64, 64}};

struct Fixture {
  std::unique_ptr<vk::Context> ctx = test::make_context();
  std::unique_ptr<gpu::Kernels> kernels = ctx ? std::make_unique<gpu::Kernels>(*ctx) : nullptr;
  // Switches to another GEMM tiling (a new set of pipelines; earlier descriptor sets stay valid).
  void use_tiles(const gpu::GemmTiles& t) { kernels = std::make_unique<gpu::Kernels>(*ctx, t); }
  cpu::ThreadPool pool{2};
  vk::DescriptorPool descriptors = ctx ? vk::DescriptorPool(*ctx, 256, 5) : vk::DescriptorPool();

  VkDescriptorSet set(core::Op op, std::vector<vk::BufferRange> ranges) {
    return descriptors.allocate(*ctx, kernels->pipeline(op), ranges);
  }
  ~Fixture() {
    if (ctx) test::check_no_validation_messages(ctx->validation_log());
  }
};

}  // namespace

TEST_CASE("gpu matmul_forward matches the CPU on odd shapes, with and without activation, for every tiling") {
  Fixture f;
  if (!f.ctx) return;
  for (const auto& tiles : gpu::gemm_tile_candidates()) {
    if (tiles.shared_bytes() > f.ctx->limits().maxComputeSharedMemorySize) continue;
    f.use_tiles(tiles);
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
        auto inp = random_vector(s.B * s.C, 1);
        auto w = random_vector(s.OC * s.C, 2);
        auto b = random_vector(s.OC, 3);
        std::vector<float> out(s.B * s.OC), pre(s.B * s.OC);
        cpu::matmul_forward(out.data(), pre.data(), inp.data(), w.data(), b.data(), s.B, s.C, s.OC, apply_act, act,
                            f.pool);
        auto g_out = to_buffer(*f.ctx, std::vector<float>(out.size()), "out");
        auto g_pre = to_buffer(*f.ctx, std::vector<float>(pre.size()), "preact");
        auto g_inp = to_buffer(*f.ctx, inp, "inp");
        auto g_w = to_buffer(*f.ctx, w, "weight");
        auto g_b = to_buffer(*f.ctx, b, "bias");
        auto set = f.set(core::Op::MatmulForward, {{&g_out}, {&g_pre}, {&g_inp}, {&g_w}, {&g_b}});
        f.ctx->run_one_shot(
            [&](VkCommandBuffer cmd) { f.kernels->matmul_forward(cmd, set, s.B, s.C, s.OC, apply_act, act); });
        CHECK(nmse(from_buffer<float>(*f.ctx, g_out, out.size()), out, "out") <= kMaxNmse);
        if (apply_act) CHECK(nmse(from_buffer<float>(*f.ctx, g_pre, pre.size()), pre, "preact") <= kMaxNmse);
      }
    }
  }
}

TEST_CASE("gpu matmul_backward_data and matmul_backward_weight and bias_backward match the CPU, every tiling") {
  Fixture f;
  if (!f.ctx) return;
  for (const auto& tiles : gpu::gemm_tile_candidates()) {
    if (tiles.shared_bytes() > f.ctx->limits().maxComputeSharedMemorySize) continue;
    f.use_tiles(tiles);
    CAPTURE(tiles.tile_m);
    CAPTURE(tiles.thread_m);
    for (const auto& s : kShapes) {
      CAPTURE(s.B);
      CAPTURE(s.C);
      CAPTURE(s.OC);
      auto dout = random_vector(s.B * s.OC, 4);
      auto w = random_vector(s.OC * s.C, 5);
      auto inp = random_vector(s.B * s.C, 6);
      std::vector<float> dinp(s.B * s.C), dw(s.OC * s.C), db(s.OC);
      cpu::matmul_backward_data(dinp.data(), dout.data(), w.data(), s.B, s.C, s.OC, f.pool);
      cpu::matmul_backward_weight(dw.data(), dout.data(), inp.data(), s.B, s.C, s.OC, f.pool);
      cpu::bias_backward(db.data(), dout.data(), s.B, s.OC, f.pool);
      auto g_dinp = to_buffer(*f.ctx, std::vector<float>(dinp.size()), "dinp");
      auto g_dw = to_buffer(*f.ctx, std::vector<float>(dw.size()), "dweight");
      auto g_db = to_buffer(*f.ctx, std::vector<float>(db.size()), "dbias");
      auto g_dout = to_buffer(*f.ctx, dout, "dout");
      auto g_w = to_buffer(*f.ctx, w, "weight");
      auto g_inp = to_buffer(*f.ctx, inp, "inp");
      auto set_d = f.set(core::Op::MatmulBackwardData, {{&g_dinp}, {&g_dout}, {&g_w}});
      auto set_w = f.set(core::Op::MatmulBackwardWeight, {{&g_dw}, {&g_dout}, {&g_inp}});
      auto set_b = f.set(core::Op::BiasBackward, {{&g_db}, {&g_dout}});
      f.ctx->run_one_shot([&](VkCommandBuffer cmd) {
        f.kernels->matmul_backward_data(cmd, set_d, s.B, s.C, s.OC);
        f.kernels->matmul_backward_weight(cmd, set_w, s.B, s.C, s.OC);
        f.kernels->bias_backward(cmd, set_b, s.B, s.OC);
      });
      CHECK(nmse(from_buffer<float>(*f.ctx, g_dinp, dinp.size()), dinp, "dinp") <= kMaxNmse);
      CHECK(nmse(from_buffer<float>(*f.ctx, g_dw, dw.size()), dw, "dweight") <= kMaxNmse);
      CHECK(nmse(from_buffer<float>(*f.ctx, g_db, db.size()), db, "dbias") <= kMaxNmse);
    }
  }
}

TEST_CASE("gpu softmax_xent_forward_backward, loss_reduce and act_backward match the CPU") {
  Fixture f;
  if (!f.ctx) return;
  for (long B : {1L, 7L, 33L}) {
    for (long K : {3L, 10L}) {
      CAPTURE(B);
      CAPTURE(K);
      auto logits = random_vector(B * K, 8, -4, 4);
      std::vector<int32_t> labels(B);
      for (long b = 0; b < B; ++b) labels[b] = static_cast<int32_t>((b * 7 + 3) % K);
      std::vector<float> losses(B), dlogits(B * K);
      std::vector<int32_t> correct(B);
      cpu::softmax_xent_forward_backward(losses.data(), dlogits.data(), correct.data(), logits.data(), labels.data(), B,
                                         K, 1.0f / B, f.pool);
      const float mean = cpu::loss_reduce(losses.data(), B);
      auto g_losses = to_buffer(*f.ctx, std::vector<float>(B), "losses");
      auto g_dlogits = to_buffer(*f.ctx, std::vector<float>(B * K), "dlogits");
      auto g_correct = to_buffer(*f.ctx, std::vector<int32_t>(B), "correct");
      auto g_logits = to_buffer(*f.ctx, logits, "logits");
      auto g_labels = to_buffer(*f.ctx, labels, "labels");
      auto g_hist = to_buffer(*f.ctx, std::vector<float>(4), "loss_history");
      auto set = f.set(core::Op::SoftmaxXentForwardBackward,
                       {{&g_losses}, {&g_dlogits}, {&g_correct}, {&g_logits}, {&g_labels}});
      auto set_r = f.set(core::Op::LossReduce, {{&g_hist}, {&g_losses}});
      f.ctx->run_one_shot([&](VkCommandBuffer cmd) {
        f.kernels->softmax_xent_forward_backward(cmd, set, B, K, 1.0f / B, true, 0);
        vk::compute_barrier(cmd);  // RAW: loss_reduce reads the losses
        f.kernels->loss_reduce(cmd, set_r, B, 2);
      });
      CHECK(nmse(from_buffer<float>(*f.ctx, g_losses, B), losses, "losses") <= kMaxNmse);
      CHECK(nmse(from_buffer<float>(*f.ctx, g_dlogits, B * K), dlogits, "dlogits") <= kMaxNmse);
      CHECK(from_buffer<int32_t>(*f.ctx, g_correct, B) == correct);
      CHECK(from_buffer<float>(*f.ctx, g_hist, 4)[2] == doctest::Approx(mean).epsilon(1e-6));
    }
  }
  for (auto act : {core::Activation::ReLU, core::Activation::GELU}) {
    const size_t N = 1000;
    auto dout = random_vector(N, 9);
    auto pre = random_vector(N, 10, -3, 3);
    std::vector<float> dpre(N);
    cpu::act_backward(dpre.data(), dout.data(), pre.data(), N, act, f.pool);
    auto g_d = to_buffer(*f.ctx, dout, "dout (in place)");
    auto g_pre = to_buffer(*f.ctx, pre, "preact");
    auto set = f.set(core::Op::ActBackward, {{&g_d}, {&g_d}, {&g_pre}});
    f.ctx->run_one_shot([&](VkCommandBuffer cmd) { f.kernels->act_backward(cmd, set, N, act); });
    CHECK(nmse(from_buffer<float>(*f.ctx, g_d, N), dpre, core::to_string(act)) <= kMaxNmse);
  }
}

TEST_CASE("gpu gather_batch, adamw_update and sgd_update match the CPU") {
  Fixture f;
  if (!f.ctx) return;
  {
    const long N = 50, C = 13, B = 7;
    auto x = random_vector(N * C, 11);
    std::vector<int32_t> y(N);
    std::vector<uint32_t> order(N);
    for (long i = 0; i < N; ++i) {
      y[i] = static_cast<int32_t>(i % 10);
      order[i] = static_cast<uint32_t>((i * 17 + 5) % N);
    }
    std::vector<float> xb(B * C);
    std::vector<int32_t> yb(B);
    cpu::gather_batch(xb.data(), yb.data(), x.data(), y.data(), order.data() + 20, B, C, f.pool);
    auto g_xb = to_buffer(*f.ctx, std::vector<float>(B * C), "x_batch");
    auto g_yb = to_buffer(*f.ctx, std::vector<int32_t>(B), "y_batch");
    auto g_x = to_buffer(*f.ctx, x, "x");
    auto g_y = to_buffer(*f.ctx, y, "y");
    auto g_o = to_buffer(*f.ctx, order, "order");
    auto set = f.set(core::Op::GatherBatch, {{&g_xb}, {&g_yb}, {&g_x}, {&g_y}, {&g_o}});
    f.ctx->run_one_shot([&](VkCommandBuffer cmd) { f.kernels->gather_batch(cmd, set, B, C, 20); });
    CHECK(from_buffer<float>(*f.ctx, g_xb, B * C) == xb);
    CHECK(from_buffer<int32_t>(*f.ctx, g_yb, B) == yb);
  }
  const size_t N = 777;
  auto params = random_vector(N, 12);
  auto grads = random_vector(N, 13, -0.1f, 0.1f);
  {
    std::vector<float> p = params, m(N, 0), v(N, 0);
    auto g_p = to_buffer(*f.ctx, p, "params");
    auto g_m = to_buffer(*f.ctx, m, "m");
    auto g_v = to_buffer(*f.ctx, v, "v");
    auto g_g = to_buffer(*f.ctx, grads, "grads");
    auto set = f.set(core::Op::AdamWUpdate, {{&g_p}, {&g_m}, {&g_v}, {&g_g}});
    for (long t = 1; t <= 3; ++t) {
      cpu::adamw_update(p.data(), m.data(), v.data(), grads.data(), N, 1e-2f, 0.9f, 0.999f, 1e-8f, 0.01f, t, f.pool);
      const float bc1 = static_cast<float>(1 - std::pow(0.9, double(t)));
      const float bc2 = static_cast<float>(1 - std::pow(0.999, double(t)));
      f.ctx->run_one_shot([&](VkCommandBuffer cmd) {
        f.kernels->adamw_update(cmd, set, N, 1e-2f, 0.9f, 0.999f, 1e-8f, 0.01f, bc1, bc2);
      });
    }
    CHECK(nmse(from_buffer<float>(*f.ctx, g_p, N), p, "adamw params") <= kMaxNmse);
    CHECK(nmse(from_buffer<float>(*f.ctx, g_m, N), m, "adamw m") <= kMaxNmse);
    CHECK(nmse(from_buffer<float>(*f.ctx, g_v, N), v, "adamw v") <= kMaxNmse);
  }
  {
    std::vector<float> p = params, buf(N, 0);
    auto g_p = to_buffer(*f.ctx, p, "params");
    auto g_buf = to_buffer(*f.ctx, buf, "momentum");
    auto g_g = to_buffer(*f.ctx, grads, "grads");
    auto set = f.set(core::Op::SgdUpdate, {{&g_p}, {&g_buf}, {&g_g}});
    for (long t = 1; t <= 3; ++t) {
      cpu::sgd_update(p.data(), buf.data(), grads.data(), N, 0.1f, 0.9f, 0.001f, t, f.pool);
      f.ctx->run_one_shot([&](VkCommandBuffer cmd) { f.kernels->sgd_update(cmd, set, N, 0.1f, 0.9f, 0.001f, t == 1); });
    }
    CHECK(nmse(from_buffer<float>(*f.ctx, g_p, N), p, "sgd params") <= kMaxNmse);
    CHECK(nmse(from_buffer<float>(*f.ctx, g_buf, N), buf, "sgd momentum") <= kMaxNmse);
  }
}

TEST_CASE("the validation messenger counts errors (so that the GPU tests can fail on them)") {
  auto ctx = test::make_context();
  if (!ctx) return;
  const int before = ctx->validation_log().errors.load();
  // A buffer of size 0 violates VUID-VkBufferCreateInfo-size-00912: the layer must report it.
  VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                        nullptr,
                        0,
                        0,
                        VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
                        VK_SHARING_MODE_EXCLUSIVE,
                        0,
                        nullptr};
  VkBuffer buffer = VK_NULL_HANDLE;
  if (vkCreateBuffer(ctx->device(), &bi, nullptr, &buffer) == VK_SUCCESS && buffer != VK_NULL_HANDLE)
    vkDestroyBuffer(ctx->device(), buffer, nullptr);
  CHECK(ctx->validation_log().errors.load() > before);
}
