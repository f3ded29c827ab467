// cpu::kernel(): the CPU code of each kernel of the table (the twin and the reference of src/cpu/ops/<kernel>.cpp,
// compiled into trainscope_cpu), found through the generated kernel list (cmake/kernels.cmake) in core::Op order. The
// table's entries are core's (core/kernel_table.cpp); what the CPU relies on besides is checked here, once, on first
// use: every kernel has a reference and a CPU twin for each of its precisions, and a kernel without 16-bit code of its
// own gives the element count of each 16-bit binding (the CPU widens and narrows it, cpu/kernel_calls.hpp).
#include <string>

#include "core/error.hpp"
#include "cpu/ops/op.hpp"

namespace cpu {
namespace {

// In core::Op order: the same list, in the same order, as the enum.
const Kernel* const kListed[] = {
#define TRAINSCOPE_KERNEL(name) &ops::name,
#include "kernel_list.inc"
#undef TRAINSCOPE_KERNEL
};
static_assert(std::size(kListed) == core::kOpCount);

void check(const core::KernelDef& d, const Kernel& k) {
  auto fail = [&](const std::string& what) {
    throw core::Error(core::ErrorKind::Internal, std::string("kernel table: ") + d.name + " " + what);
  };
  if (!k.reference) fail("has no reference");
  if ((!d.fp16_only && !k.tuned) || (!k.tuned && !k.tuned16)) fail("has no CPU twin for one of its precisions");
  if (!k.tuned16)  // its 16-bit variant widens: every 16-bit binding needs its element count
    for (const core::BindingDef& b : d.bindings)
      if (b.elem == core::Elem::Storage && !b.elements) fail(std::string("binding ") + b.name + " has no element count");
}

bool check_all() {
  for (size_t i = 0; i < std::size(kListed); ++i) check(core::kernel_def(static_cast<core::Op>(i)), *kListed[i]);
  return true;
}

}  // namespace

const Kernel& kernel(core::Op op) {
  static const bool checked = check_all();  // before first use
  (void)checked;
  const size_t i = static_cast<size_t>(op);
  if (i >= std::size(kListed)) throw core::Error(core::ErrorKind::Internal, "cpu::kernel: no such kernel");
  return *kListed[i];
}

}  // namespace cpu
