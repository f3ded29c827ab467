# The kernels: one .comp per kernel, compiled three times from the same source (shaders/common/dtype.glsl):
#   <kernel>       fp32 storage
#   <kernel>_fp16  fp16 storage (DTYPE_FP16), fp32 arithmetic
#   <kernel>_bf16  bf16 storage (DTYPE_BF16), fp32 arithmetic
# Kernels without tensor buffers (loss_reduce: fp32 losses) give the same code in every variant; they are compiled
# anyway so that every kernel has every variant.
file(GLOB kernel_sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.comp)
foreach(src ${kernel_sources})
  get_filename_component(kernel ${src} NAME_WE)
  trainscope_shader(${kernel} ${kernel})
  trainscope_shader(${kernel}_fp16 ${kernel} DTYPE_FP16=1)
  trainscope_shader(${kernel}_bf16 ${kernel} DTYPE_BF16=1)
endforeach()
# The GEMM kernels' and the convolutions' texel variant for software devices (shaders/common/gemm_texel.glsl and
# texel_block.glsl, gpu/gemm_config.hpp): <kernel>_texel, <kernel>_texel_fp16, <kernel>_texel_bf16
foreach(kernel matmul_forward matmul_backward_data matmul_backward_weight conv2d_forward conv2d_backward_data
               conv2d_backward_weight)
  trainscope_shader(${kernel}_texel ${kernel} GEMM_TEXEL=1)
  trainscope_shader(${kernel}_texel_fp16 ${kernel} GEMM_TEXEL=1 DTYPE_FP16=1)
  trainscope_shader(${kernel}_texel_bf16 ${kernel} GEMM_TEXEL=1 DTYPE_BF16=1)
endforeach()

# Split-K for matmul_backward_weight and conv2d_backward_weight (gpu/gemm_config.hpp, choose_split_k and
# choose_conv_split_k): the GEMM pass writing fp32 partial products, on both paths, and the reduce that sums them into
# dweight; every storage precision.
foreach(suffix "" _fp16 _bf16)
  if(suffix STREQUAL "_fp16")
    set(dtype DTYPE_FP16=1)
  elseif(suffix STREQUAL "_bf16")
    set(dtype DTYPE_BF16=1)
  else()
    set(dtype "")
  endif()
  trainscope_shader(matmul_backward_weight_splitk${suffix} matmul_backward_weight SPLIT_K=1 ${dtype})
  trainscope_shader(matmul_backward_weight_splitk_texel${suffix} matmul_backward_weight SPLIT_K=1 GEMM_TEXEL=1 ${dtype})
  trainscope_shader(conv2d_backward_weight_splitk${suffix} conv2d_backward_weight SPLIT_K=1 ${dtype})
  trainscope_shader(conv2d_backward_weight_splitk_texel${suffix} conv2d_backward_weight SPLIT_K=1 GEMM_TEXEL=1 ${dtype})
  trainscope_shader(split_k_reduce${suffix} splitk/split_k_reduce ${dtype})
endforeach()

# The probes of `trainscope peaks` (gpu/peak_probe; bench takes its FMA peak from peak_fma_vec4): not training
# kernels, so no storage-type variants.
trainscope_shader(peak_copy peaks/peak_copy)
trainscope_shader(peak_fma peaks/peak_fma)
trainscope_shader(peak_fma_vec4 peaks/peak_fma VEC4=1)
trainscope_shader(peak_fma_fp16 peaks/peak_fma FP16=1)
trainscope_shader(peak_empty peaks/peak_empty)
