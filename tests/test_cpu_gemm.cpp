// The packed SIMD GEMM (cpu/gemm.hpp) on every SIMD path this CPU can run (portable, AVX2, AVX-512, NEON, forced with
// cpu::set_simd_level) and every micro-kernel of the tables: the three GEMM forms of training, odd shapes (M, N, K not
// multiples of the tile, 1x1, K = 1, several cache blocks), exact against the plain fp32 loop with the same chain of
// fmas, within fp32 tolerance of a double loop, and bit-identical across 1, 2 and 3 threads.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/batches.hpp"
#include "core/dataset.hpp"
#include "core/rng.hpp"
#include "cpu/gemm.hpp"
#include "cpu/gemm_micro.hpp"
#include "cpu/fast_math.hpp"
#include "cpu/kernel_calls.hpp"
#include "cpu/storage16.hpp"
#include "cpu/simd.hpp"
#include "cpu/thread_pool.hpp"
#include "cpu/trainer.hpp"
#include "cpu_test_util.hpp"
#include "cpu/exact_fma.hpp"

using core::Activation;

namespace {

using test::LevelGuard;
using test::random_floats;
using test::runnable_levels;

struct Shape {
  long B, C, OC;
};
// 1x1x1, K = 1 for each form (C = 1: forward and backward data; B = 1: backward weight), sizes that are no multiple
// of any tile (6, 8, 12, 14, 16, 24, 32, 48, 64), and shapes spanning several cache blocks (K > 256, M > 192).
const Shape kShapes[] = {{1, 1, 1},   {1, 7, 5},     {5, 1, 9},    {3, 4, 1},     {7, 17, 10},  {13, 33, 31},
                         {37, 65, 47}, {64, 70, 45}, {50, 300, 70}, {200, 40, 97}, {33, 129, 530}};

// The plain loops, each output one chain acc = fma(a, b, acc) over k ascending from 0: what the GEMM must equal.
void plain_forward(float* sums, const float* inp, const float* w, long B, long C, long OC) {
  for (long b = 0; b < B; ++b)
    for (long o = 0; o < OC; ++o) {
      float acc = 0;
      for (long c = 0; c < C; ++c) acc = cpu::fma(inp[b * C + c], w[o * C + c], acc);
      sums[b * OC + o] = acc;
    }
}
void plain_backward_data(float* dinp, const float* dout, const float* w, long B, long C, long OC) {
  for (long b = 0; b < B; ++b)
    for (long c = 0; c < C; ++c) {
      float acc = 0;
      for (long o = 0; o < OC; ++o) acc = cpu::fma(dout[b * OC + o], w[o * C + c], acc);
      dinp[b * C + c] = acc;
    }
}
void plain_backward_weight(float* dw, const float* dout, const float* inp, long B, long C, long OC) {
  for (long o = 0; o < OC; ++o)
    for (long c = 0; c < C; ++c) {
      float acc = 0;
      for (long b = 0; b < B; ++b) acc = cpu::fma(dout[b * OC + o], inp[b * C + c], acc);
      dw[o * C + c] = acc;
    }
}

// Counts elements that differ in their bits, printing the first few.
size_t bit_mismatches(const char* what, const std::vector<float>& got, const std::vector<float>& want) {
  REQUIRE(got.size() == want.size());
  size_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (std::memcmp(&got[i], &want[i], sizeof(float)) != 0 && ++bad <= 3)
      MESSAGE(what << "[" << i << "]: got " << got[i] << ", expected " << want[i]);
  return bad;
}

struct Outputs {
  std::vector<float> out, pre, dinp, dw;
};

Outputs run_forms(const Shape& s, const std::vector<float>& x, const std::vector<float>& w,
                  const std::vector<float>& bias, const std::vector<float>& d, Activation act, cpu::ThreadPool& pool) {
  Outputs o;
  o.out.assign(s.B * s.OC, -7.0f);  // overwritten everywhere: stale values must not leak through
  o.pre.assign(s.B * s.OC, -7.0f);
  o.dinp.assign(s.B * s.C, -7.0f);
  o.dw.assign(s.OC * s.C, -7.0f);
  // The kernel table's fp32 CPU twins, as cpu::Trainer calls them.
  cpu::Workspace16 unused;
  const cpu::KernelContext ctx{core::Precision::FP32, pool, unused};
  core::StepArgs step;
  step.activation = act;
  auto in = [](const std::vector<float>& v) { return const_cast<float*>(v.data()); };
  using core::Op;
  const std::vector<void*> forward{o.out.data(), o.pre.data(), in(x), in(w), in(bias)};
  cpu::run_kernel({.op = Op::matmul_forward, .activation = true, .B = s.B, .C = s.C, .OC = s.OC}, step, forward, ctx);
  const std::vector<void*> data{o.dinp.data(), in(d), in(w)};
  cpu::run_kernel({.op = Op::matmul_backward_data, .B = s.B, .C = s.C, .OC = s.OC}, step, data, ctx);
  const std::vector<void*> weight{o.dw.data(), in(d), in(x)};
  cpu::run_kernel({.op = Op::matmul_backward_weight, .B = s.B, .C = s.C, .OC = s.OC}, step, weight, ctx);
  return o;
}

}  // namespace

TEST_CASE("the GEMM forms equal the plain fp32 fma loops bit for bit on every SIMD path and thread count") {
  LevelGuard guard;
  for (const auto level : runnable_levels()) {
    REQUIRE(cpu::set_simd_level(level) == level);
    const std::string path = cpu::to_string(level);
    MESSAGE("SIMD path: " << path << ", GEMM kernel " << cpu::gemm_kernel_name());
    for (const auto& s : kShapes) {
      CAPTURE(path);
      CAPTURE(s.B);
      CAPTURE(s.C);
      CAPTURE(s.OC);
      const auto x = random_floats(s.B * s.C, 11), w = random_floats(s.OC * s.C, 12);
      const auto bias = random_floats(s.OC, 13), d = random_floats(s.B * s.OC, 14);
      const Activation act = core::kActivations[s.C % 3];
      std::vector<float> pre(s.B * s.OC), out(s.B * s.OC), dinp(s.B * s.C), dw(s.OC * s.C);
      plain_forward(pre.data(), x.data(), w.data(), s.B, s.C, s.OC);
      for (long b = 0; b < s.B; ++b)
        for (long o = 0; o < s.OC; ++o) {
          float& p = pre[b * s.OC + o];
          p += bias[o];
          cpu::activate(&p, &out[b * s.OC + o], 1, act);  // the fused epilogue's math, one element at a time
        }
      plain_backward_data(dinp.data(), d.data(), w.data(), s.B, s.C, s.OC);
      plain_backward_weight(dw.data(), d.data(), x.data(), s.B, s.C, s.OC);
      for (int threads : {1, 2, 3}) {
        CAPTURE(threads);
        cpu::ThreadPool pool(threads);
        const Outputs got = run_forms(s, x, w, bias, d, act, pool);
        CHECK(bit_mismatches("preact", got.pre, pre) == 0);
        CHECK(bit_mismatches("out", got.out, out) == 0);
        CHECK(bit_mismatches("dinp", got.dinp, dinp) == 0);
        CHECK(bit_mismatches("dweight", got.dw, dw) == 0);
      }
    }
  }
}

TEST_CASE("every micro-kernel of every table, with small cache blocks, is exact and close to a double loop") {
  // Small blocks force several slices of k (accumulation through C), several row and column blocks and edge tiles;
  // the next two force the packed path and the in-place path (operands read in place wherever B's rows are
  // contiguous, with edge tiles in both dimensions: M = 29, N = 70 are no multiple of any tile), the fifth packs
  // slices of more rows of k than one block of the packing's row loop (gemm.cpp, pack_rows), and the last reads in
  // place with tasks of one row tile (as for a C larger than the L2), and the last packs B on first use where its
  // rows are contiguous (as for a B larger than pack_all_max_bytes).
  constexpr long kAlways = 1L << 30;  // above every size here (bytes, tiles, k); 32-bit long on Windows
  const cpu::GemmBlocking blockings[] = {{7, 13, 40},
                                         {1, 1, 1},
                                         {256, 192, 1024, 0, 0, 0},
                                         {256, 192, 1024, kAlways, kAlways, kAlways},
                                         {41, 16, 64},
                                         {256, 192, 1024, kAlways, kAlways, kAlways, 0},
                                         {256, 192, 1024, 0, 0, 0, 1 << 20, 0}};
  std::vector<const cpu::GemmMicroKernel*> kernels;
  int count = 0;
  if (cpu::simd_level_available(cpu::SimdLevel::AVX512))
    for (const auto* k = cpu::avx512_micro_kernels(count); count-- > 0; ++k) kernels.push_back(k);
  if (cpu::simd_level_available(cpu::SimdLevel::AVX2))
    for (const auto* k = cpu::avx2_micro_kernels(count); count-- > 0; ++k) kernels.push_back(k);
  if (cpu::simd_level_available(cpu::SimdLevel::NEON))
    for (const auto* k = cpu::neon_micro_kernels(count); count-- > 0; ++k) kernels.push_back(k);
  if (kernels.empty()) MESSAGE("no SIMD micro-kernel runs on this CPU: only the portable path is tested");
  const long M = 29, N = 70, K = 41;
  const auto a = random_floats(M * K, 21), b = random_floats(K * N, 22);
  std::vector<float> plain(M * N);
  std::vector<double> exact(M * N);
  for (long i = 0; i < M; ++i)
    for (long j = 0; j < N; ++j) {
      float acc = 0;
      double sum = 0;
      for (long k = 0; k < K; ++k) {
        acc = cpu::fma(a[i * K + k], b[k * N + j], acc);
        sum += static_cast<double>(a[i * K + k]) * b[k * N + j];
      }
      plain[i * N + j] = acc;
      exact[i * N + j] = sum;
    }
  for (const auto* kernel : kernels) {
    const std::string name = kernel->name;
    CAPTURE(name);
    for (const auto& blocking : blockings) {
      CAPTURE(blocking.kc);
      CAPTURE(blocking.in_place_max_bytes);
      for (int threads : {1, 3}) {
        cpu::ThreadPool pool(threads);
        std::vector<float> c(M * N, -7.0f);
        cpu::gemm(c.data(), N, {a.data(), K, 1}, {b.data(), N, 1}, M, N, K, pool, nullptr, kernel, &blocking);
        CHECK(bit_mismatches("c", c, plain) == 0);
        size_t far = 0;
        for (size_t i = 0; i < c.size(); ++i) far += std::fabs(c[i] - exact[i]) > 1e-5 + 1.3e-6 * std::fabs(exact[i]) * K;
        CHECK(far == 0);
        // The transposed views of the same matrices (what the forward and backward-weight forms read).
        std::vector<float> at(K * M), bt(N * K), ct(M * N, -7.0f);
        for (long i = 0; i < M; ++i)
          for (long k = 0; k < K; ++k) at[k * M + i] = a[i * K + k];
        for (long k = 0; k < K; ++k)
          for (long j = 0; j < N; ++j) bt[j * K + k] = b[k * N + j];
        cpu::gemm(ct.data(), N, {at.data(), 1, M}, {bt.data(), 1, K}, M, N, K, pool, nullptr, kernel, &blocking);
        CHECK(bit_mismatches("c from transposed views", ct, plain) == 0);
        // A transposed, B not (the backward-weight form: in place where allowed), and the other way round.
        std::fill(ct.begin(), ct.end(), -7.0f);
        cpu::gemm(ct.data(), N, {at.data(), 1, M}, {b.data(), N, 1}, M, N, K, pool, nullptr, kernel, &blocking);
        CHECK(bit_mismatches("c from A transposed", ct, plain) == 0);
        std::fill(ct.begin(), ct.end(), -7.0f);
        cpu::gemm(ct.data(), N, {a.data(), K, 1}, {bt.data(), 1, K}, M, N, K, pool, nullptr, kernel, &blocking);
        CHECK(bit_mismatches("c from B transposed", ct, plain) == 0);
      }
    }
  }
}

TEST_CASE("K = 0 gives zeros, and the epilogue sees every output exactly once") {
  LevelGuard guard;
  for (const auto level : runnable_levels()) {
    cpu::set_simd_level(level);
    if (cpu::active_micro_kernel() == nullptr) continue;
    cpu::ThreadPool pool(2);
    const long M = 23, N = 77;
    std::vector<float> c(M * N, 5.0f);
    std::vector<int> seen(M * N, 0);
    const cpu::GemmEpilogue count = [&](long m0, long m1, long n0, long n1) {
      for (long i = m0; i < m1; ++i)
        for (long j = n0; j < n1; ++j) seen[i * N + j]++;  // disjoint rectangles: no two threads share an element
    };
    const float dummy = 1.0f;
    cpu::gemm(c.data(), N, {&dummy, 0, 1}, {&dummy, 1, 0}, M, N, 0, pool, &count);
    size_t nonzero = 0, wrong = 0;
    for (float v : c) nonzero += v != 0.0f;
    for (int s : seen) wrong += s != 1;
    CHECK(nonzero == 0);
    CHECK(wrong == 0);
    const auto a = random_floats(M * 300, 3), b = random_floats(300 * N, 4);
    std::fill(seen.begin(), seen.end(), 0);
    cpu::gemm(c.data(), N, {a.data(), 300, 1}, {b.data(), N, 1}, M, N, 300, pool, &count);
    wrong = 0;
    for (int s : seen) wrong += s != 1;
    CHECK(wrong == 0);
    // Wider than the epilogue's groups of column panels (gemm.cpp, kEpilogueCols), with a partial last panel.
    const long wide = 601, k = 40;
    const auto aw = random_floats(M * k, 5), bw = random_floats(k * wide, 6);
    std::vector<float> cw(M * wide);
    std::vector<int> seen_wide(M * wide, 0);
    const cpu::GemmEpilogue count_wide = [&](long m0, long m1, long n0, long n1) {
      for (long i = m0; i < m1; ++i)
        for (long j = n0; j < n1; ++j) seen_wide[i * wide + j]++;
    };
    cpu::gemm(cw.data(), wide, {aw.data(), k, 1}, {bw.data(), wide, 1}, M, wide, k, pool, &count_wide);
    wrong = 0;
    for (int s : seen_wide) wrong += s != 1;
    CHECK(wrong == 0);
    // Read in place (K = 20) with tasks of one row tile, as for a C larger than the L2 (forced here).
    cpu::GemmBlocking one_tile;
    one_tile.in_place_tile_rows_bytes = 0;
    std::fill(seen_wide.begin(), seen_wide.end(), 0);
    cpu::gemm(cw.data(), wide, {aw.data(), k, 1}, {bw.data(), wide, 1}, M, wide, 20, pool, &count_wide, nullptr,
              &one_tile);
    wrong = 0;
    for (int s : seen_wide) wrong += s != 1;
    CHECK(wrong == 0);
  }
}

TEST_CASE("the SIMD level can be forced down, never above the CPU's, and the CPU device name says what runs") {
  LevelGuard guard;
  CHECK(cpu::set_simd_level(cpu::SimdLevel::Portable) == cpu::SimdLevel::Portable);
  CHECK(cpu::active_micro_kernel() == nullptr);
  CHECK(cpu::gemm_kernel_name() == "portable 5x16");
  CHECK(cpu::cpu_description(2).find("portable 5x16") != std::string::npos);
  const auto top = cpu::set_simd_level(cpu::SimdLevel::AVX512);
  CHECK(top == cpu::cpu_simd_level());
  if (top == cpu::SimdLevel::AVX512) {
    CHECK(cpu::gemm_kernel_name().rfind("AVX-512 ", 0) == 0);
  } else if (top == cpu::SimdLevel::AVX2) {
    CHECK(cpu::gemm_kernel_name().rfind("AVX2 ", 0) == 0);
  } else if (top == cpu::SimdLevel::NEON) {
    CHECK(cpu::gemm_kernel_name().rfind("NEON ", 0) == 0);
  }
  // A level of the other architecture is never taken: the CPU's own level runs instead.
  const auto other = cpu::cpu_simd_level() == cpu::SimdLevel::NEON ? cpu::SimdLevel::AVX2 : cpu::SimdLevel::NEON;
  CHECK_FALSE(cpu::simd_level_available(other));
  CHECK(cpu::set_simd_level(other) == cpu::cpu_simd_level());
  CHECK(cpu::set_simd_level(top) == top);
  CHECK(cpu::cpu_description(3).find(cpu::gemm_kernel_name()) != std::string::npos);
  CHECK(cpu::cpu_description(3).find("3 threads") != std::string::npos);
  // The name lists the default tile first, then every tile gemm() may choose by shape, and no spare.
  if (const cpu::GemmMicroKernel* table = cpu::active_micro_kernel()) {
    int count = 0;
    (top == cpu::SimdLevel::AVX512 ? cpu::avx512_micro_kernels(count)
     : top == cpu::SimdLevel::NEON ? cpu::neon_micro_kernels(count)
                                   : cpu::avx2_micro_kernels(count));
    const std::string name = cpu::gemm_kernel_name();
    CHECK(name.rfind(table[0].name, 0) == 0);
    for (int i = 1; i < count; ++i) {
      const std::string full = table[i].name;
      std::string tile = full.substr(full.rfind(' ') + 1);
      tile.insert(tile.begin(), '/');
      CAPTURE(table[i].name);
      CHECK((name.find(tile) != std::string::npos) == (table[i].role != cpu::GemmKernelRole::Spare));
    }
  }
}

TEST_CASE("training steps give bit-identical weights on every SIMD path and thread count (random dataset)") {
  LevelGuard guard;
  const core::DataSplit data = core::make_random(70, 10, 37 * 4, 20, 5);
  REQUIRE(data.train.count == 148);
  REQUIRE(data.train.features == 70);
  size_t outside = 0;
  for (float v : data.train.x) outside += !(v >= 0.0f && v < 1.0f);
  CHECK(outside == 0);
  core::TrainConfig cfg;
  cfg.hidden = {40, 24};
  cfg.activation = Activation::GELU;
  cfg.batch = 37;
  core::ModelShape shape({70, 40, 24, 10});
  std::vector<float> reference;
  for (const auto level : runnable_levels()) {
    cpu::set_simd_level(level);
    for (int threads : {1, 2, 3}) {
      CAPTURE(threads);
      const std::string path = cpu::to_string(level);
      CAPTURE(path);
      cfg.threads = threads;
      auto trainer = cpu::make_trainer(cfg, data, core::init_parameters(shape, 3));
      trainer->begin_epoch(core::epoch_order(data.train.count, 3, 0));
      for (int s = 0; s < 4; ++s) trainer->step(static_cast<size_t>(s) * 37);
      const std::vector<float> params = trainer->parameters();
      if (reference.empty()) reference = params;
      CHECK(bit_mismatches("params", params, reference) == 0);
      CHECK(params != core::init_parameters(shape, 3));  // the steps did change them
    }
  }
}
