// The kernel table against what the shaders were compiled to: every SPIR-V variant declares exactly the table's
// bindings for its precision and the push-constant block of shaders/common/kernel_params.h with its members at 4-byte
// steps (the GLSL side of the layout whose C++ side the header's static_asserts check). Also: which precisions a device
// runs, and that the validation messenger the GPU tests rely on does count errors.
#include <doctest/doctest.h>

#include <map>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "core/kernel_table.hpp"
#include "gpu/kernels.hpp"
#include "gpu_test_util.hpp"
#include "vk/embedded_shaders.hpp"

using core::Precision;

namespace {

// The SPIR-V module's descriptor bindings and push-constant block: the GLSL side of the kernel table.
struct Reflection {
  std::set<uint32_t> bindings;
  uint32_t block_members = 0;         // of the push-constant block: the params struct alone
  std::vector<uint32_t> push_offsets;  // of the params struct's members
  uint32_t push_members = 0;
};

Reflection reflect(std::span<const uint32_t> words) {
  // SPIR-V 1.x, "Physical Layout" and "Instructions": header of 5 words, then (word count << 16 | opcode) each.
  constexpr uint32_t kOpTypeStruct = 30, kOpTypePointer = 32, kOpVariable = 59, kOpDecorate = 71,
                     kOpMemberDecorate = 72, kBinding = 33, kOffset = 35, kPushConstant = 9;
  std::map<uint32_t, std::vector<uint32_t>> structs;      // id -> member type ids
  std::map<uint32_t, uint32_t> pointee;                    // pointer id -> type id
  std::map<uint32_t, std::map<uint32_t, uint32_t>> offset;  // struct id -> member -> offset
  std::map<uint32_t, uint32_t> binding;                    // variable id -> binding
  uint32_t push_pointer = 0;
  for (size_t i = 5; i < words.size();) {
    const uint32_t count = words[i] >> 16, op = words[i] & 0xffff;
    const uint32_t* w = &words[i];
    if (op == kOpTypeStruct) structs[w[1]] = std::vector<uint32_t>(w + 2, w + count);
    if (op == kOpTypePointer) pointee[w[1]] = w[3];
    if (op == kOpVariable && w[3] == kPushConstant) push_pointer = w[1];
    if (op == kOpDecorate && w[2] == kBinding) binding[w[1]] = w[3];
    if (op == kOpMemberDecorate && w[3] == kOffset) offset[w[1]][w[2]] = w[4];
    i += std::max<uint32_t>(count, 1);
  }
  Reflection r;
  for (const auto& [id, b] : binding) r.bindings.insert(b);
  if (push_pointer) {
    // The block holds one member, the params struct, at offset 0.
    const uint32_t block = pointee.at(push_pointer);
    r.block_members = static_cast<uint32_t>(structs.at(block).size());
    const uint32_t params = structs.at(block).at(0);
    r.push_members = static_cast<uint32_t>(structs.at(params).size());
    for (uint32_t m = 0; m < r.push_members; ++m) r.push_offsets.push_back(offset[params][m]);
  }
  return r;
}

const vk::EmbeddedShader* find_shader(const std::string& name) {
  for (const auto& s : vk::embedded_shaders())
    if (s.name == name) return &s;
  return nullptr;
}

// The variants a kernel's record implies besides its storage types: "" always; "_texel" for a GEMM-shaped kernel
// (KernelDef::gemm_shaped); "_splitk" and "_splitk_texel" for one that may split K (KernelDef::gemm.split_k).
std::vector<std::string> variants_of(const core::KernelDef& def) {
  std::vector<std::string> out{""};
  if (def.gemm_shaped()) out.push_back("_texel");
  if (def.gemm.split_k != core::SplitK::None) out.insert(out.end(), {"_splitk", "_splitk_texel"});
  return out;
}

}  // namespace

TEST_CASE("every compiled shader variant declares the table's bindings and the shared push-constant layout") {
  int gemm_variants = 0;
  for (const core::KernelDef& def : core::kernel_table())
    for (Precision p : {Precision::FP32, Precision::FP16, Precision::BF16})
      for (const std::string& path : variants_of(def)) {  // every variant binds as the kernel (split: partials at 0)
        gemm_variants += !path.empty();
        const std::string name = def.name + path + (p == Precision::FP32 ? "" : std::string("_") + core::to_string(p));
        CAPTURE(name);
        const vk::EmbeddedShader* shader = find_shader(name);
        REQUIRE(shader != nullptr);
        if (!def.exists_in(p)) continue;  // compiled for every precision, used only in its own
        const Reflection r = reflect(shader->spirv);
        std::set<uint32_t> want;
        for (uint32_t b = 0; b < def.binding_count(p); ++b) want.insert(b);
        CHECK(r.bindings == want);
        CHECK(r.block_members == 1);
        REQUIRE(r.push_members * 4 == def.params_bytes);
        for (uint32_t m = 0; m < r.push_members; ++m) CHECK(r.push_offsets[m] == 4 * m);
      }
  // Six GEMM-shaped kernels with a texel variant, two of them with split-K's two, in three precisions.
  CHECK(gemm_variants == (6 + 2 * 2) * 3);
}

TEST_CASE("no shader variant that its kernel's record does not imply: shaders.cmake and KernelDef::gemm agree") {
  std::set<std::string> implied;
  for (const core::KernelDef& def : core::kernel_table())
    for (const std::string& path : variants_of(def))
      for (const char* suffix : {"", "_fp16", "_bf16"}) implied.insert(def.name + path + suffix);
  for (const auto& s : vk::embedded_shaders()) {
    const std::string name(s.name);
    if (name.rfind("peak_", 0) == 0) continue;  // trainscope peaks' probes: not kernels of the table
    CAPTURE(name);
    CHECK(implied.count(name) == 1);
  }
}

TEST_CASE("precision_supported: fp32 always, 16-bit storage variants only with storageBuffer16BitAccess") {
  vk::DeviceInfo d;
  d.name = "test device";
  std::string why;
  CHECK(gpu::precision_supported(d, Precision::FP32, &why));
  CHECK_FALSE(gpu::precision_supported(d, Precision::FP16, &why));
  CHECK(why.find("storageBuffer16BitAccess") != std::string::npos);
  CHECK_FALSE(gpu::precision_supported(d, Precision::BF16, nullptr));
  d.storage_16bit = true;
  CHECK(gpu::precision_supported(d, Precision::FP16, nullptr));
  CHECK(gpu::precision_supported(d, Precision::BF16, nullptr));
  CHECK(core::parse_precision("bf16") == Precision::BF16);
  CHECK(core::parse_precision("fp16") == Precision::FP16);
  CHECK(core::parse_precision("fp32") == Precision::FP32);
  CHECK_FALSE(core::parse_precision("FP8").has_value());
}

TEST_CASE("the validation messenger counts errors (so that the parity test can fail on them)") {
  auto ctx = test::make_context("the validation messenger");
  if (!ctx) return;
  const int before = ctx->validation_log().errors.load();
  // A buffer of size 0 violates VUID-VkBufferCreateInfo-size-00912: the layer must report it.
  VkBufferCreateInfo bi{};
  bi.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
  bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkBuffer buffer = VK_NULL_HANDLE;
  if (vkCreateBuffer(ctx->device(), &bi, nullptr, &buffer) == VK_SUCCESS && buffer != VK_NULL_HANDLE)
    vkDestroyBuffer(ctx->device(), buffer, nullptr);
  CHECK(ctx->validation_log().errors.load() > before);
}
