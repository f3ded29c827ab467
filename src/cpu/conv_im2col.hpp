// The CPU convolutions over im2col panels (conv_im2col.cpp), which conv.hpp's functions run at the portable SIMD
// level: the same arguments, shapes and results (each output one fma chain in patch order, bit-identical on any
// number of threads).
#pragma once
#include "cpu/conv.hpp"

namespace cpu {

void conv_forward_im2col(float* sums, const float* inp, const float* weight, const ConvShape& s, ThreadPool& pool,
                         const ConvEpilogue& epilogue);
void conv_backward_data_im2col(float* dinp, const float* dout, const float* weight, const ConvShape& s,
                               ThreadPool& pool);
void conv_backward_weight_im2col(float* dweight, const float* dout, const float* inp, const ConvShape& s,
                                 ThreadPool& pool);

}  // namespace cpu
