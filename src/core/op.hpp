// core::Op: every training kernel, by its name. There is one value per file src/cpu/ops/<kernel>.cpp, in name order,
// from the kernel list cmake/kernels.cmake generates from those files: adding a kernel's file adds its value. The
// same name is its shader (shaders/<kernel>.comp), its kernel-table entry and its row in the timing tables.
#pragma once
#include <cstddef>
#include <cstdint>

namespace core {

enum class Op : uint8_t {
#define TRAINSCOPE_KERNEL(name) name,
#include "kernel_list.inc"
#undef TRAINSCOPE_KERNEL
};

// The number of kernels (of values of Op).
inline constexpr size_t kOpCount = 0
#define TRAINSCOPE_KERNEL(name) +1
#include "kernel_list.inc"
#undef TRAINSCOPE_KERNEL
    ;

}  // namespace core
