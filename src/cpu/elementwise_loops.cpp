// The portable elementwise loops (this build's own flags) and the run-time choice among the levels
// (elementwise_loops.hpp).
#include "cpu/elementwise_loops.hpp"

#include "cpu/fast_math.hpp"
#include "cpu/simd.hpp"

namespace cpu {
namespace {

#include "cpu/elementwise_level.inc"

constexpr ElementwiseLoops kPortable = level_loops("portable");

}  // namespace

const ElementwiseLoops& portable_elementwise_loops() { return kPortable; }

const ElementwiseLoops& elementwise_loops() {
  switch (active_simd_level()) {
    case SimdLevel::AVX512:
      if (const ElementwiseLoops* loops = avx512_elementwise_loops()) return *loops;
      [[fallthrough]];
    case SimdLevel::AVX2:
      if (const ElementwiseLoops* loops = avx2_elementwise_loops()) return *loops;
      break;
    case SimdLevel::NEON:  // every AArch64 build has the FMA instruction: its own flags are the level's
    case SimdLevel::Portable:
      break;
  }
  return kPortable;
}

}  // namespace cpu
