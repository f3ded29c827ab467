// The kernel table, assembled from the kernel files src/cpu/ops/<kernel>.cpp through the generated kernel list
// (cmake/kernels.cmake): core::kernel_table() for everyone, cpu::kernel() for the CPU code of the same entries. Each
// entry gets its Op and name from the list, so an entry cannot be filed under another kernel's name. The invariants
// the backends rely on are checked once, on first use.
#include <string>
#include <vector>

#include "core/error.hpp"
#include "cpu/ops/op.hpp"

namespace cpu {
namespace {

struct Listed {
  const Kernel* kernel;
  const char* name;
};

// In core::Op order: the same list, in the same order, as the enum.
const Listed kListed[] = {
#define TRAINSCOPE_KERNEL(name) {&ops::name, #name},
#include "kernel_list.inc"
#undef TRAINSCOPE_KERNEL
};
static_assert(std::size(kListed) == core::kOpCount);

void check(const core::KernelDef& d, const Kernel& k) {
  auto fail = [&](const std::string& what) {
    throw core::Error(core::ErrorKind::Internal, std::string("kernel table: ") + d.name + " " + what);
  };
  for (size_t b = 1; b < d.bindings.size(); ++b)
    if (d.bindings[b].when < d.bindings[b - 1].when) fail("has an optional binding before a binding it always has");
  if (d.params_bytes == 0 || d.params_bytes > 128) fail("has a params struct of 0 or more than 128 bytes");
  if (!d.grid_size || !d.args || !d.flops || !d.bytes_read || !d.bytes_written) fail("lacks a formula");
  if (!k.reference) fail("has no reference");
  if ((!d.fp16_only && !k.tuned) || (!k.tuned && !k.tuned16)) fail("has no CPU twin for one of its precisions");
  if (!k.tuned16)  // its 16-bit variant widens: every 16-bit binding needs its element count
    for (const core::BindingDef& b : d.bindings)
      if (b.elem == core::Elem::Storage && !b.elements) fail(std::string("binding ") + b.name + " has no element count");
}

struct Table {
  std::vector<core::KernelDef> defs;
  Table() {
    for (size_t i = 0; i < std::size(kListed); ++i) {
      core::KernelDef d = kListed[i].kernel->def;
      d.op = static_cast<core::Op>(i);
      d.name = kListed[i].name;
      check(d, *kListed[i].kernel);
      defs.push_back(std::move(d));
    }
  }
};

const Table& table() {
  static const Table t;
  return t;
}

}  // namespace

const Kernel& kernel(core::Op op) {
  const size_t i = static_cast<size_t>(op);
  if (i >= std::size(kListed)) throw core::Error(core::ErrorKind::Internal, "cpu::kernel: no such kernel");
  table();  // checked before first use
  return *kListed[i].kernel;
}

}  // namespace cpu

namespace core {

std::span<const KernelDef> kernel_table() { return cpu::table().defs; }

const KernelDef& kernel_def(Op op) { return cpu::table().defs.at(static_cast<size_t>(op)); }

}  // namespace core
