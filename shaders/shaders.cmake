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
# The variants a kernel has besides its storage types are declared in its shader, in a line
#   // trainscope variants: texel [splitk]
# (the GEMM-shaped kernels: gpu/gemm_config.hpp), and its record (KernelDef::gemm, src/cpu/ops/<kernel>.cpp) says
# the same, which test_kernel_table checks both ways. No list of kernel names here:
#   texel   <kernel>_texel[_fp16|_bf16]: the texel path for software devices (shaders/common/gemm_texel.glsl and
#           texel_block.glsl, GEMM_TEXEL);
#   splitk  <kernel>_splitk[_texel][_fp16|_bf16]: split-K's GEMM pass writing fp32 partial products (SPLIT_K), on both
#           paths (gpu/gemm_config.hpp, choose_split_k); the reduce that sums them is a kernel of its own,
#           shaders/split_k_reduce.comp.
foreach(src ${kernel_sources})
  get_filename_component(kernel ${src} NAME_WE)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${src})  # a changed declaration reconfigures
  file(STRINGS ${src} declared REGEX "^// trainscope variants:")
  if(NOT declared)
    continue()
  endif()
  string(REGEX REPLACE "^// trainscope variants: *([a-z ]*).*$" "\\1" declared "${declared}")
  separate_arguments(declared)
  foreach(variant ${declared})
    if(NOT variant MATCHES "^(texel|splitk)$")
      message(FATAL_ERROR "shaders/${kernel}.comp: unknown variant '${variant}' (texel, splitk)")
    endif()
  endforeach()
  if("texel" IN_LIST declared)
    trainscope_shader(${kernel}_texel ${kernel} GEMM_TEXEL=1)
    trainscope_shader(${kernel}_texel_fp16 ${kernel} GEMM_TEXEL=1 DTYPE_FP16=1)
    trainscope_shader(${kernel}_texel_bf16 ${kernel} GEMM_TEXEL=1 DTYPE_BF16=1)
  endif()
  if("splitk" IN_LIST declared)
    foreach(suffix "" _fp16 _bf16)
      set(dtype "")
      if(suffix STREQUAL "_fp16")
        set(dtype DTYPE_FP16=1)
      elseif(suffix STREQUAL "_bf16")
        set(dtype DTYPE_BF16=1)
      endif()
      trainscope_shader(${kernel}_splitk${suffix} ${kernel} SPLIT_K=1 ${dtype})
      if("texel" IN_LIST declared)
        trainscope_shader(${kernel}_splitk_texel${suffix} ${kernel} SPLIT_K=1 GEMM_TEXEL=1 ${dtype})
      endif()
    endforeach()
  endif()
endforeach()

# The probes of `trainscope peaks` (gpu/peak_probe; bench takes its FMA peak from peak_fma_vec4): not training
# kernels, so no storage-type variants.
trainscope_shader(peak_copy peaks/peak_copy)
trainscope_shader(peak_fma peaks/peak_fma)
trainscope_shader(peak_fma_vec4 peaks/peak_fma VEC4=1)
trainscope_shader(peak_fma_fp16 peaks/peak_fma FP16=1)
trainscope_shader(peak_empty peaks/peak_empty)
