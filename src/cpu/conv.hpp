// The CPU convolutions as GEMMs over im2col panels (Chellapilla et al., "High Performance Convolutional Neural
// Networks for Document Processing", 2006): the convolution kernels (src/cpu/ops/conv2d_*.cpp) gather the input
// patches of a block of output pixels into a panel in the calling thread's cache and multiply it with the packed
// micro-kernels of cpu/gemm.hpp (or the portable GEMM where no SIMD kernel runs). Activations are NHWC (B, H, W, C),
// weights (OC, KS, KS, C), as shaders/common/kernel_params.h lays them out.
//   forward          out (B*OH*OW, OC)   = col(inp) (B*OH*OW, KS*KS*C) · weight (OC, KS*KS*C)ᵀ
//   backward data    dinp (B*H*W, C)     = col'(dout) (B*H*W, KS*KS*OC) · weight' (KS*KS*OC, C)   (the flipped kernel)
//   backward weight  dweight (OC, KS*KS*C) = dout (B*OH*OW, OC)ᵀ · col(inp) (B*OH*OW, KS*KS*C)
// The blocks of pixel rows are fixed by the shape (never by the thread count), so results are bit-identical on any
// number of threads.
#pragma once
#include <functional>

#include "kernel_params.h"

namespace cpu {

class ThreadPool;

struct ConvShape {
  long B, H, W, C, OC, OH, OW, KS, pad;
  long K() const { return KS * KS * C; }  // the forward GEMM's depth: one patch
};
ConvShape conv_shape(const core::Conv2dForwardParams& p);
ConvShape conv_shape(const core::Conv2dBackwardParams& p);

// Called on each finished block of output rows [m0, m1) (all OC columns) by the thread that computed it.
using ConvEpilogue = std::function<void(long m0, long m1)>;

// sums (B*OH*OW, OC) = the convolution of inp with weight, without bias; epilogue per finished block (may be null).
void conv_forward_gemm(float* sums, const float* inp, const float* weight, const ConvShape& s, ThreadPool& pool,
                       const ConvEpilogue& epilogue);
// dinp (B*H*W, C) from dout (B*OH*OW, OC) and weight (stride 1: a convolution of dout with the flipped kernel).
void conv_backward_data_gemm(float* dinp, const float* dout, const float* weight, const ConvShape& s, ThreadPool& pool);
// dweight (OC, KS*KS*C) from dout and inp: per fixed block of pixel rows a partial product, summed in block order.
void conv_backward_weight_gemm(float* dweight, const float* dout, const float* inp, const ConvShape& s,
                               ThreadPool& pool);

}  // namespace cpu
