// The kernel parity test's machinery (parity.hpp), in the manner of ggml's test-backend-ops: a kernel x every
// precision x every GPU variant (each GEMM tiling the device fits, and matmul_backward_weight split-K on both paths: K
// cut into gpu::kTestSplitK slices, not a multiple of them) x the odd shapes of its case in
// tests/test_kernel_parity.cpp; the GPU shader and the tuned CPU twin each against the kernel's plain reference in
// double (its src/cpu/ops/ file), with the table's tolerance per precision (core::tolerance), the validation layer on
// and not one message allowed. Inputs are made on the host and rounded to each binding's type first, so what remains
// is each kernel's own error:
//   fp32: NMSE <= 1e-7 per output, and per element |got - ref| <= 1e-5 + 1.3e-6 |ref| (+ 1.3e-6 x max|ref| for sums:
//     an output of a sum that cancels to near zero carries the rounding of its large terms, which rtol |ref| cannot
//     cover).
//   16-bit storage: per element |got - ref| <= atol + rtol |ref| (+ 1e-3 x max|ref| for sums, likewise); and at least
//     99% of an output's values over all cases equal to the nearest 16-bit value of the reference, so that a device
//     that truncates instead of rounding fails (its outputs would match about half the time). That count skips values
//     below 1e-3 x max|ref| (their fp32 values carry cancellation; the tolerance still covers them). Outputs marked
//     exact (a copy) must all be the nearest value, case by case.
//   fp32 outputs of 16-bit kernels (losses, master weights, optimizer state): the fp32 measure; integers, the loss
//   scaler and its history: equal (the scaler's beta powers within 1e-6, a product rounded in another order).
// Besides: the 16-bit weights copy equals the rounding of the new masters bit for bit (GPU and CPU); the CPU twins give
// the same bits on 1 and 3 threads. That the compiled shaders declare the table's bindings and push constants is
// tests/test_kernel_table.cpp.
#include "parity.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "core/half.hpp"
#include "core/kernel_table.hpp"
#include "cpu/kernel_calls.hpp"
#include "cpu/storage16.hpp"
#include "cpu/thread_pool.hpp"
#include "gpu/kernels.hpp"
#include "gpu_test_util.hpp"
#include "parity_values.hpp"

namespace test {
namespace {

using core::Elem;
using core::Precision;

const Precision kPrecisions[] = {Precision::FP32, Precision::FP16, Precision::BF16};

// doctest 2.4.9 prints a `const char*` in a message as a pointer: names go through std::string.
std::string name_of(Precision p) { return core::to_string(p); }

// The inputs of one case: every binding of the kernel (empty where absent in `p`).
std::vector<Values> make_inputs(const core::KernelDef& def, const KernelCase& c, Precision p, uint64_t seed) {
  core::Pcg32 rng(seed);
  std::vector<Values> in(def.bindings.size());
  for (size_t i = 0; i < def.bindings.size(); ++i) {
    const core::BindingDef& b = def.bindings[i];
    if (!core::present(b.when, p)) continue;
    Values& v = in[i];
    v.resize(c.elements.at(i) * fields(b.elem));
    for (auto& x : v) {
      if (b.elem == Elem::Storage || b.elem == Elem::F32) x = uniform(rng, -1, 1);
      else if (b.elem == Elem::I32 || b.elem == Elem::U32) x = rng.next_u32() % 10;
      else x = 0;
    }
    if (b.elem == Elem::LossScaler) scaler_before_step(v, 1.0f, 1, false, 0.9f, 0.999f);
    if (c.fill) c.fill(b.name, v, rng, p);
    for (auto& x : v) x = representable(x, b.elem, p);
  }
  // The 16-bit weights copy starts as the rounding of the masters, as in training (so a skipped step leaves both).
  for (size_t i = 0; i < def.bindings.size(); ++i)
    if (def.bindings[i].role == core::Role::Weights16 && !in[i].empty())
      for (size_t j = 0; j < def.bindings.size(); ++j)
        if (def.bindings[j].role == core::Role::Params)
          for (size_t k = 0; k < in[i].size(); ++k) in[i][k] = representable(in[j][k], Elem::Storage, p);
  if (c.alias_of_first >= 0) in[0] = in[static_cast<size_t>(c.alias_of_first)];
  return in;
}

// The reference on a copy of the inputs. With an alias, binding 0 and its alias are one buffer: both end as the output.
std::vector<Values> reference_run(const KernelCase& c, const std::vector<Values>& in, Precision p) {
  std::vector<Values> out = in;
  cpu::run_reference(c.entry, c.step, out, p);
  if (c.alias_of_first >= 0) out[static_cast<size_t>(c.alias_of_first)] = out[0];
  return out;
}

std::vector<Values> cpu_run(const core::KernelDef& def, const KernelCase& c, const std::vector<Values>& in,
                            Precision p, cpu::ThreadPool& pool) {
  std::vector<std::vector<std::byte>> mem(in.size());
  std::vector<void*> ptrs;
  for (size_t i = 0; i < in.size(); ++i) {
    if (!core::present(def.bindings[i].when, p)) continue;
    mem[i] = encode(in[i], def.bindings[i].elem, p);
    ptrs.push_back(mem[i].data());
  }
  if (c.alias_of_first >= 0) ptrs[0] = ptrs[static_cast<size_t>(c.alias_of_first)];
  cpu::Workspace16 ws;
  cpu::run_kernel(c.entry, c.step, ptrs, {p, pool, ws});
  std::vector<Values> out(in.size());  // empty for the bindings absent in p
  for (size_t i = 0; i < ptrs.size(); ++i)
    out[i] = decode(static_cast<const std::byte*>(ptrs[i]), in[i].size(), def.bindings[i].elem, p);
  return out;
}

struct Gpu {
  explicit Gpu(core::Op kernel) : op(kernel) {}
  core::Op op;
  std::unique_ptr<vk::Context> ctx = make_context("the GPU kernels");
  std::map<std::pair<int, std::string>, std::unique_ptr<gpu::Kernels>> kernels;

  const gpu::Kernels& get(Precision p, const gpu::GemmConfig& g) {
    auto& k = kernels[{int(p), g.name()}];
    if (!k) k = std::make_unique<gpu::Kernels>(*ctx, g, p, VK_NULL_HANDLE, op);  // this kernel's pipelines only
    return *k;
  }

  std::vector<Values> run(const gpu::Kernels& k, const core::KernelDef& def, const KernelCase& c,
                          const std::vector<Values>& in) {
    const Precision p = k.precision();
    const core::PlanEntry e = k.with_split_k(c.entry);  // a split-K configuration cuts matmul_backward_weight's K
    std::vector<std::unique_ptr<vk::Buffer>> buffers(in.size());
    std::vector<const vk::Buffer*> bound(in.size(), nullptr);  // the buffer binding i sees (an alias shares one)
    for (size_t i = 0; i < in.size(); ++i) {
      if (!core::present(def.bindings[i].when, p)) continue;
      const std::vector<std::byte> bytes = encode(in[i], def.bindings[i].elem, p);
      buffers[i] = std::make_unique<vk::Buffer>(*ctx, bytes.size(), vk::MemoryKind::DeviceLocal, def.bindings[i].name);
      buffers[i]->upload(*ctx, bytes.data(), bytes.size());
      bound[i] = buffers[i].get();
    }
    if (c.alias_of_first >= 0) bound[0] = bound[static_cast<size_t>(c.alias_of_first)];
    std::vector<vk::BufferRange> ranges;
    for (const vk::Buffer* b : bound)
      if (b) ranges.push_back({b});
    std::unique_ptr<vk::Buffer> partials;  // split-K's, filled with NaN: a slice the reduce reads unwritten shows
    if (gpu::split_k_partials_bytes(e) > 0) {  // e runs split (split_k_reduce's own entry does not)
      partials = std::make_unique<vk::Buffer>(*ctx, gpu::split_k_partials_bytes(e), vk::MemoryKind::DeviceLocal,
                                              "split_k_partials");
      const std::vector<float> nan(partials->size() / sizeof(float), std::nanf(""));
      partials->upload(*ctx, nan.data(), partials->size());
    }
    vk::DescriptorPool pool(*ctx, 2, static_cast<uint32_t>(ranges.size()));
    const gpu::EntrySets sets = k.allocate_sets(pool, e, ranges, {partials.get()});
    const core::KernelArgs args = def.args(e, c.step);
    ctx->run_one_shot([&](VkCommandBuffer cmd) { k.dispatch(cmd, e, sets, args); });
    std::vector<Values> out(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
      if (!bound[i]) continue;
      std::vector<std::byte> bytes(bound[i]->size());
      bound[i]->download(*ctx, bytes.data(), bytes.size());
      out[i] = decode(bytes.data(), in[i].size(), def.bindings[i].elem, p);
    }
    return out;
  }

  ~Gpu() {
    kernels.clear();
    if (ctx) check_no_validation_messages(ctx->validation_log());
  }
};

// The worst figures per kernel, precision and backend, printed at the end.
struct Summary {
  double nmse = 0, ratio = 0, rounded = 1;
  int outputs = 0;
};
std::map<std::string, Summary>& summaries() {
  static std::map<std::string, Summary> s;
  return s;
}

// The rounding count of one output of one kernel on one backend variant, over all cases (as in a training step, a
// single case of a few outputs would make one near-midpoint value a whole percent): checked at the end.
struct RoundingCount {
  size_t counted = 0, nearest = 0;
  std::string summary;  // the key of its Summary
};
std::map<std::string, RoundingCount>& rounding_counts() {
  static std::map<std::string, RoundingCount> r;
  return r;
}

// got against the reference for every output of the kernel; `who` names the backend and variant in messages.
void compare(const core::KernelDef& def, const KernelCase& c, Precision p, const std::vector<Values>& got,
             const std::vector<Values>& ref, const std::string& who) {
  const core::Tolerance tol = core::tolerance(p), tol32 = core::tolerance(Precision::FP32);
  const std::string summary = std::string(def.name) + " " + core::to_string(p) + " " + who.substr(0, who.find(" ["));
  Summary& sum = summaries()[summary];
  for (size_t i = 0; i < def.bindings.size(); ++i) {
    const core::BindingDef& b = def.bindings[i];
    if (!b.writes() || ref[i].empty()) continue;
    INFO(who << " " << name_of(p) << " " << std::string(def.name) << " [" << c.label << "] output "
         << std::string(b.name));
    const Values& g = got[i];
    const Values& r = ref[i];
    REQUIRE(g.size() == r.size());
    ++sum.outputs;
    size_t bad = 0;
    auto report = [&](size_t k, double tolerance) {
      if (++bad <= 5) MESSAGE(std::string(b.name) << "[" << k << "]: got " << g[k] << ", reference " << r[k]
                                                  << ", tolerance " << tolerance);
    };
    const bool sixteen = b.elem == Elem::Storage && p != Precision::FP32;
    if ((b.elem == Elem::Storage || b.elem == Elem::F32) && !sixteen) {
      if (b.exact) {
        for (size_t k = 0; k < r.size(); ++k)
          if (g[k] != static_cast<float>(r[k])) report(k, 0);
      } else {
        double num = 0, den = 0, max_ref = 0;
        for (double x : r) max_ref = std::max(max_ref, std::fabs(x));
        const double atol = tol32.atol + (b.sum ? tol32.rtol * max_ref : 0.0);  // a sum near zero: see the top
        for (size_t k = 0; k < r.size(); ++k) {
          num += (g[k] - r[k]) * (g[k] - r[k]);
          den += r[k] * r[k];
          const double allowed = atol + tol32.rtol * std::fabs(r[k]);
          sum.ratio = std::max(sum.ratio, std::fabs(g[k] - r[k]) / allowed);
          if (std::fabs(g[k] - r[k]) > allowed) report(k, allowed);
        }
        const double nmse = den > 0 ? num / den : num;
        sum.nmse = std::max(sum.nmse, nmse);
        CHECK_MESSAGE(nmse <= tol32.nmse, "NMSE " << nmse);
      }
    } else if (sixteen) {
      double max_ref = 0;
      for (double x : r) max_ref = std::max(max_ref, std::fabs(x));
      const double atol = tol.atol + (b.sum ? 1e-3 * max_ref : 0.0);
      size_t counted = 0, nearest = 0;
      for (size_t k = 0; k < r.size(); ++k) {
        const double allowed = atol + tol.rtol * std::fabs(r[k]);
        const double err = std::fabs(g[k] - r[k]);
        sum.ratio = std::max(sum.ratio, allowed > 0 ? err / allowed : (err > 0 ? INFINITY : 0.0));
        if (err > allowed) report(k, allowed);
        if (b.exact || std::fabs(r[k]) >= 1e-3 * max_ref) {
          ++counted;
          nearest += g[k] == representable(r[k], Elem::Storage, p);  // as values: -0 == +0 (ReLU of a negative)
        }
      }
      if (b.exact)  // a copy: every value
        CHECK_MESSAGE(nearest == counted,
                      nearest << " of " << counted << " outputs are the nearest 16-bit value of the reference");
      RoundingCount& count = rounding_counts()[who + " " + name_of(p) + " " + def.name + " " + b.name];
      count.counted += counted;
      count.nearest += nearest;
      count.summary = summary;
    } else {
      for (size_t k = 0; k < r.size(); ++k) {
        const bool beta_pow = b.elem == Elem::LossScaler && (k % 8 == 5 || k % 8 == 6);
        const bool ok = beta_pow ? std::fabs(g[k] - r[k]) <= 1e-6 * std::fabs(r[k]) : g[k] == r[k];
        if (!ok) report(k, beta_pow ? 1e-6 * std::fabs(r[k]) : 0);
      }
    }
    CHECK_MESSAGE(bad == 0, bad << " of " << r.size() << " values outside the tolerance");
  }
  // The 16-bit weights copy is the rounding of the backend's own new masters, bit for bit.
  for (size_t i = 0; i < def.bindings.size(); ++i)
    if (def.bindings[i].role == core::Role::Weights16 && !got[i].empty())
      for (size_t j = 0; j < def.bindings.size(); ++j)
        if (def.bindings[j].role == core::Role::Params) {
          size_t differ = 0;
          for (size_t k = 0; k < got[i].size(); ++k) differ += got[i][k] != representable(got[j][k], Elem::Storage, p);
          CHECK_MESSAGE(differ == 0, who << " " << std::string(def.name) << " [" << c.label << "]: " << differ
                                         << " of the 16-bit weights are not the rounding of the new masters");
        }
}

// Same bits (as values: the decoded outputs are exact images of the bits, NaNs aside).
bool same(const std::vector<Values>& a, const std::vector<Values>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].size() != b[i].size()) return false;
    // An empty output has no data pointer: memcmp's arguments must not be null even for 0 bytes (UBSan).
    if (!a[i].empty() && std::memcmp(a[i].data(), b[i].data(), a[i].size() * sizeof(double)) != 0) return false;
  }
  return true;
}

// TRAINSCOPE_PARITY_VARIANTS=default (the ctest entries that run this test under a device profile): each GEMM runs
// only the configuration the device picks by default (the profile's own path, tiles and split-K rule) instead of
// every tiling it fits, which the plain run covers.
std::vector<gpu::GemmConfig> variants(const core::KernelDef& def, const vk::Device& device, Precision p) {
  if (default_variants_only()) return {gpu::choose_gemm_config(device, p)};
  return gpu::variants_to_test(def, device, p);
}

}  // namespace

bool default_variants_only() {
  const char* env = std::getenv("TRAINSCOPE_PARITY_VARIANTS");
  return env && std::string(env) == "default";
}

void check_parity(core::Op op, std::vector<KernelCase> cases) {
  const core::KernelDef& def = core::kernel_def(op);
  REQUIRE_MESSAGE(!cases.empty(), std::string(def.name) << " has no cases");
  for (KernelCase& c : cases) c.entry.op = op;
  summaries().clear();
  rounding_counts().clear();
  Gpu gpu(op);
  const bool have_gpu = gpu.ctx != nullptr;
  std::map<std::string, int> paths_run;  // GEMM dispatches by path ("tiled", "texel split-K", ...)
  cpu::ThreadPool pool1(1), pool3(3);
  uint64_t seed = 1;
  for (Precision p : kPrecisions) {
    if (!def.exists_in(p)) continue;
    std::string why;
    const bool gpu_runs = have_gpu && gpu::precision_supported(gpu.ctx->info(), p, &why);
    if (have_gpu && !gpu_runs) skip(std::string(def.name) + " on the GPU in " + core::to_string(p), why);
    for (const KernelCase& c : cases) {
      const std::vector<Values> in = make_inputs(def, c, p, seed++);
      const std::vector<Values> ref = reference_run(c, in, p);

      const std::vector<Values> cpu1 = cpu_run(def, c, in, p, pool1);
      compare(def, c, p, cpu1, ref, "cpu");
      const bool same_threads = same(cpu1, cpu_run(def, c, in, p, pool3));
      CHECK_MESSAGE(same_threads, std::string(def.name) << " [" << c.label << "] " << name_of(p)
                                                        << ": the CPU twin gives other bits on 3 threads than on 1");
      if (!gpu_runs) continue;
      if (c.gpu != KernelCase::Gpu::EveryVariant && p != Precision::FP32) continue;
      const gpu::GemmConfig chosen = gpu::choose_gemm_config(*gpu.ctx, p);
      for (const gpu::GemmConfig& g : variants(def, *gpu.ctx, p)) {
        if (c.gpu == KernelCase::Gpu::DefaultFp32 && !(g == chosen)) continue;
        const gpu::Kernels& k = gpu.get(p, g);
        std::string who = "gpu";
        if (def.grid == core::Grid::Gemm) {  // "gpu texel/vec4 [texel 8x64, 8x8 per invocation]"
          const core::PlanEntry e = k.with_split_k(c.entry);
          const gpu::GemmVariant v = k.gemm_variant(e);
          ++paths_run[std::string(gpu::to_string(v.path)) + (v.split ? " split-K" : "")];
          who += std::string(" ") + gpu::to_string(v.path) + (v.vec4 ? "/vec4" : "/scalar") +
                 (v.split ? "/split-K" : "") + " [" + g.name() + "]";
        }
        if (def.grid == core::Grid::Conv) {  // "gpu conv texel/vec4 [texel 64x8, 8x8 per invocation]"
          const gpu::GemmVariant v = k.gemm_variant(k.with_split_k(c.entry));
          ++paths_run[std::string("conv ") + gpu::to_string(v.path) + (v.split ? " split-K" : "")];
          who += std::string(" conv ") + gpu::to_string(v.path) + (v.vec4 ? "/vec4" : "/scalar") +
                 (v.split ? "/split-K" : "") + " [" +
                 gpu::GemmConfig{v.path, k.tiles(def.op, v), v.vec4}.name() + "]";
        }
        compare(def, c, p, gpu.run(k, def, c, in), ref, who);
      }
    }
  }
  // A device that takes a GPU's code paths (the desktop-discrete profile on lavapipe, or a real GPU) runs its GEMMs on
  // the tiled path by default, and matmul_backward_weight split-K where the rule says (the odd shapes' batch of 260).
  if (def.grid == core::Grid::Gemm && have_gpu && !gpu.ctx->info().software_paths && default_variants_only()) {
    CHECK_MESSAGE(paths_run["texel"] + paths_run["texel split-K"] == 0,
                  "a device with a GPU's code paths ran the texel GEMM by default");
    CHECK(paths_run["tiled"] > 0);
    if (op == core::Op::matmul_backward_weight) CHECK(paths_run["tiled split-K"] > 0);
  }
  // And its conv2d_backward_weight split-K where choose_split_k says (the odd shapes' few output tiles).
  if (op == core::Op::conv2d_backward_weight && have_gpu && !gpu.ctx->info().software_paths && default_variants_only())
    CHECK(paths_run["conv tiled split-K"] > 0);
  for (const auto& [path, n] : paths_run) MESSAGE("GEMM dispatches on the " << path << " path: " << n);
  for (const auto& [what, n] : rounding_counts()) {
    const double share = n.counted ? double(n.nearest) / double(n.counted) : 1.0;
    CHECK_MESSAGE(share >= core::tolerance(Precision::FP16).rounded_share,
                  what << ": " << n.nearest << " of " << n.counted
                       << " outputs are the nearest 16-bit value of the reference");
    Summary& sum = summaries()[n.summary];
    sum.rounded = std::min(sum.rounded, share);
  }
  for (const auto& [what, s] : summaries())
    MESSAGE(what << ": " << s.outputs << " outputs compared; worst NMSE " << s.nmse << ", worst |got-ref|/tolerance "
                 << s.ratio
                 << (what.find("fp32") == std::string::npos
                         ? ", least share of nearest 16-bit values " + std::to_string(s.rounded)
                         : std::string()));
}

}  // namespace test
