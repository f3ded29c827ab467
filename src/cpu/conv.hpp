// The CPU convolutions as GEMMs, on NHWC activations (B, H, W, C) and weights (OC, KS, KS, C), as
// shaders/common/kernel_params.h lays them out:
//   forward          out (B*OH*OW, OC)   = patches(inp) (B*OH*OW, KS*KS*C) · weight (OC, KS*KS*C)ᵀ
//   backward data    dinp (B*H*W, C)     = patches'(dout) (B*H*W, KS*KS*OC) · weight' (KS*KS*OC, C)   (flipped kernel)
//   backward weight  dweight (OC, KS*KS*C) = dout (B*OH*OW, OC)ᵀ · patches(inp) (B*OH*OW, KS*KS*C)
// At the SIMD levels (conv.cpp) the forward and backward-data products are indirect convolutions (Dukhan, "The
// Indirect Convolution Algorithm", 2019): the micro-kernel (gemm_micro.hpp, run_indirect) reads each row of the patch
// matrix through one pointer per tap into the image, so no im2col panel is ever written, and the weights are packed
// once per call. Backward weight packs the patches of each slice of pixels straight into the micro-kernel's panel
// layout and sums one partial product per fixed block of pixels. At the portable level (conv_im2col.hpp) im2col
// panels feed the portable GEMM. Each output of forward and backward data is one fma chain over the patch in order;
// every block is fixed by the shape (never by the thread count), so results are bit-identical on any number of
// threads.
#pragma once
#include <functional>
#include <vector>

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

// weight' ((ky, kx, oc), c) = weight (oc, ky, kx, c), (KS*KS*OC, C): the weight's rows in the order of the columns of
// backward data's patches (small: OC x KS² x C values).
std::vector<float> flipped_weight(const float* weight, const ConvShape& s);

}  // namespace cpu
