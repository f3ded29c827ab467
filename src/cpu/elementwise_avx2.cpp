// The AVX2 elementwise loops (elementwise_loops.hpp): fast_math.hpp's loops compiled with -mavx2 -mfma -mno-avx512f and
// -ffp-contract=off (src/CMakeLists.txt), so that cpu::fma is the instruction and nothing else is fused: the same
// bits as every other level. Called only on CPUs with AVX2 and FMA (simd.hpp).
#include "cpu/elementwise_loops.hpp"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__)
#include "cpu/fast_math.hpp"

namespace cpu {
namespace {

#include "cpu/elementwise_level.inc"

constexpr ElementwiseLoops kLoops = level_loops("AVX2");

}  // namespace

const ElementwiseLoops* avx2_elementwise_loops() { return &kLoops; }

}  // namespace cpu
#else
namespace cpu {
const ElementwiseLoops* avx2_elementwise_loops() { return nullptr; }
}  // namespace cpu
#endif
