// The tile products of the CPU's tiled attention (cpu/attention_tile.hpp).
#include "cpu/attention_tile.hpp"

#include "cpu/exact_fma.hpp"
#include "cpu/gemm_micro.hpp"

namespace cpu {

TileKernel tile_kernel() {
  const GemmMicroKernel* uk = active_micro_kernel();
  return uk != nullptr ? TileKernel{uk, {uk->mr, uk->nr}} : TileKernel{nullptr, {}};
}

TileOperand pack_left(const TileKernel& tk, AlignedBuffer& buffer, MatrixView a, long rows, long kc) {
  if (tk.uk == nullptr) return {a, nullptr, rows, kc};
  float* dst = buffer.get(size_t(tk.pad.rows(rows) * kc));
  pack_a(dst, a, 0, rows, 0, kc, *tk.uk);
  return {a, dst, rows, kc};
}

TileOperand pack_right(const TileKernel& tk, AlignedBuffer& buffer, MatrixView b, long kc, long cols) {
  if (tk.uk == nullptr) return {b, nullptr, cols, kc};
  float* dst = buffer.get(size_t(tk.pad.cols(cols) * kc));
  pack_b(dst, b, 0, kc, 0, cols, *tk.uk);
  return {b, dst, cols, kc};
}

void tile_multiply(const TileKernel& tk, float* c, long ldc, const TileOperand& a, const TileOperand& b,
                   bool accumulate) {
  const long kc = a.kc;
  if (tk.uk == nullptr) {  // portable: the micro-kernel's chains as plain loops, from the operands in place
    const MatrixView& av = a.view;
    const MatrixView& bv = b.view;
    for (long i = 0; i < a.n; ++i)
      for (long j = 0; j < b.n; ++j) {
        float acc = accumulate ? c[i * ldc + j] : 0.0f;
        for (long k = 0; k < kc; ++k) acc = cpu::fma(av.p[i * av.rs + k * av.cs], bv.p[k * bv.rs + j * bv.cs], acc);
        c[i * ldc + j] = acc;
      }
    return;
  }
  const long mr = tk.uk->mr, nr = tk.uk->nr;
  for (long i = 0; i < a.n; i += mr)
    for (long j = 0; j < b.n; j += nr)
      tk.uk->run(kc, a.packed + (i / mr) * kc * mr, b.packed + (j / nr) * kc * nr, c + i * ldc + j, ldc, accumulate);
}

void tile_product(const TileKernel& tk, MatrixView a, MatrixView b, long rows, long kc, long cols, AlignedBuffer& left,
                  AlignedBuffer& right, std::vector<float>& out, long& ldc) {
  ldc = tk.pad.cols(cols);
  out.resize(size_t(tk.pad.rows(rows) * ldc));
  tile_multiply(tk, out.data(), ldc, pack_left(tk, left, a, rows, kc), pack_right(tk, right, b, kc, cols), false);
}

}  // namespace cpu
