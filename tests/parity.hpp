// The kernel parity test's machinery (tests/test_kernel_parity.cpp holds one test case per kernel, named as the
// kernel, so that ctest names a failing kernel): a kernel's cases, and check_parity(), which runs them on the GPU and
// the tuned CPU twin against the plain reference in double (see parity.cpp for what is compared and how closely).
// Odd shapes on purpose: batch 1, 7, 33; feature counts below, between and above the 16/32/64 GEMM tiles; and one
// shape large enough that the CPU twins split every loop over their threads.
#pragma once
#include <cmath>
#include <functional>
#include <iterator>
#include <string>
#include <tuple>
#include <vector>

#include "core/half.hpp"
#include "core/kernel_table.hpp"
#include "core/rng.hpp"

namespace test {

struct KernelCase {
  std::string label;       // shown on failure: the shape and settings
  core::PlanEntry entry;   // the kernel and its shape
  core::StepArgs step;     // the settings its push constants are made from
  std::vector<size_t> elements;  // per binding of the kernel (absent ones included): elements of its buffer
  // Overrides of the default fill (uniform in [-1, 1]) of named bindings, given the binding's values (already sized:
  // elements x fields) and a generator; called before the values are rounded to the binding's type.
  std::function<void(const std::string& binding, std::vector<double>& values, core::Pcg32& rng, core::Precision)> fill;
  int alias_of_first = -1;  // >= 0: binding 0 shares the buffer of that binding (an in-place kernel)
  // Where the GPU runs the case: in every precision and every configuration gpu::variants_to_test lists; in fp32 only
  // (a shape whose 16-bit loads and stores other cases already run); or in fp32 on the device's default
  // configuration only, for a case that varies neither what a tiling nor what a storage type changes (a GEMM's
  // epilogue mode: the same code after every tiling, on fp32 values). The CPU twin runs every case in every precision.
  enum class Gpu { EveryVariant, Fp32, DefaultFp32 } gpu = Gpu::EveryVariant;
};

// TRAINSCOPE_PARITY_VARIANTS=default: the GPU runs each GEMM on the device's default configuration only (the ctest
// entries under a device profile; tests/CMakeLists.txt).
bool default_variants_only();

inline std::string shape_label(long B, long C, long OC) {
  return "B=" + std::to_string(B) + " C=" + std::to_string(C) + " OC=" + std::to_string(OC);
}

inline double uniform(core::Pcg32& rng, double lo, double hi) { return rng.uniform(float(lo), float(hi)); }

// The GEMM shapes (B, C, OC). The GPU runs every one in fp32 on every configuration; in 16-bit, where only the loads
// and stores differ (and lavapipe compiles its texel path anew for each shape, seconds per shape and format), the two
// marked `sixteen_bit`: one with 4-wide loads in all three GEMM forms (C and OC multiples of 4, odd B, long enough
// for split-K's three slices) and one with scalar loads.
struct GemmShape {
  long B, C, OC;
  bool sixteen_bit = false;
};
inline const std::vector<GemmShape>& gemm_shapes() {
  static const std::vector<GemmShape> shapes = {{1, 5, 3},       {7, 17, 10, true}, {33, 70, 65},      {33, 130, 10},
                                                {64, 64, 64},    {260, 120, 270},   {33, 68, 12, true}};
  return shapes;
}

// The fp16 loss scaler's state before an optimizer step t (a fresh clock advanced t - 1 times), as the table's
// LossScaler element (its members in order).
inline void scaler_before_step(std::vector<double>& v, float scale, long t, bool found_inf, float beta1, float beta2) {
  v = {scale, 0, 0, found_inf ? 1.0 : 0.0, double(t - 1),
       static_cast<float>(std::pow(double(beta1), double(t - 1))),
       static_cast<float>(std::pow(double(beta2), double(t - 1))), 0};
}

// Extreme inputs, where a driver's tanh or exp without a guard gives NaN or inf (issue 20): |x| up to 100, and in
// every precision a few values near the fp16 limit (65504) and near where tanh saturates for the GELU (|u| = 9.1 at
// |x| = 5.4, and the naive (e^2u - 1) / (e^2u + 1) overflows from |u| = 44, |x| = 9.3). `limit` caps the values near
// the fp16 limit (a tensor that is multiplied by the loss scale must stay finite in fp16).
inline void fill_extreme(std::vector<double>& v, core::Pcg32& rng, double limit = 65504) {
  const double edges[] = {100, -100, limit, -limit, 0.92 * limit, -0.92 * limit, 9.3, -9.3, 5.42, -5.42, 0};
  for (size_t i = 0; i < v.size(); ++i) v[i] = i < std::size(edges) ? edges[i] : uniform(rng, -100, 100);
}

// Runs every case of kernel `op` (each case's entry.op is set to it) in every precision the kernel exists in: the tuned
// CPU twin on 1 and 3 threads and every GPU variant (gpu::variants_to_test) against the reference, with the table's
// tolerance per precision; prints the worst figures. The GPU part is skipped, with the reason, on a machine without a
// Vulkan device or without the precision's 16-bit storage.
void check_parity(core::Op op, std::vector<KernelCase> cases);

}  // namespace test
