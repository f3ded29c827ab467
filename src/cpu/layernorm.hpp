// LayerNorm on the CPU in fp32 (issue 35's transformer; torch.nn.LayerNorm, Ba et al. 2016): each row of C features
// normalized to mean 0 and variance 1 (the biased variance, plus eps: 1e-5 in torch and here), then scaled by g and shifted by b. Rows are
// split over the pool; the parameter gradients are summed over fixed blocks of rows, then the blocks in order, so
// that results are bit-identical on any number of threads. The double reference: cpu::layer_norm_reference.
#pragma once
#include "cpu/thread_pool.hpp"

namespace cpu {

// out (rows, C) = (x - mean) rstd g + b with rstd = 1 / sqrt(var + eps); mean and rstd (rows) kept for the backward.
void layer_norm_forward(long rows, int C, float eps, const float* x, const float* g, const float* b, float* out,
                        float* mean, float* rstd, ThreadPool& pool);
// dx (rows, C) from dout and the forward's mean and rstd: with xhat = (x - mean) rstd and dxhat = dout g,
// dx = rstd (dxhat - mean(dxhat) - xhat mean(dxhat xhat)), each row on its own; overwritten, or added to what dx
// holds (`accumulate`: a transformer's residual stream, which carries the gradient of the branch around it).
void layer_norm_backward_data(long rows, int C, const float* x, const float* g, const float* mean, const float* rstd,
                              const float* dout, float* dx, bool accumulate, ThreadPool& pool);
// dg (C) = the sum over rows of dout xhat, db (C) = the sum of dout, both overwritten.
void layer_norm_backward_params(long rows, int C, const float* x, const float* mean, const float* rstd,
                                const float* dout, float* dg, float* db, ThreadPool& pool);

}  // namespace cpu
