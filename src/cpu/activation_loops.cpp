// The portable activation loops (this build's own flags) and the run-time choice among the levels
// (activation_loops.hpp).
#include "cpu/activation_loops.hpp"

#include "cpu/fast_math.hpp"
#include "cpu/simd.hpp"

namespace cpu {
namespace {

#include "cpu/activation_level.inc"

constexpr ActivationLoops kPortable = level_loops("portable");

}  // namespace

const ActivationLoops& portable_activation_loops() { return kPortable; }

const ActivationLoops& activation_loops() {
  switch (active_simd_level()) {
    case SimdLevel::AVX512:
      if (const ActivationLoops* loops = avx512_activation_loops()) return *loops;
      [[fallthrough]];
    case SimdLevel::AVX2:
      if (const ActivationLoops* loops = avx2_activation_loops()) return *loops;
      break;
    case SimdLevel::NEON:  // every AArch64 build has the FMA instruction: its own flags are the level's
    case SimdLevel::Portable:
      break;
  }
  return kPortable;
}

}  // namespace cpu
