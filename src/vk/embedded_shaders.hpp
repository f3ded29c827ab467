// The SPIR-V of every kernel, compiled by glslc at build time and embedded in the binary (cmake/shaders.cmake).
#pragma once
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace vk {

struct EmbeddedShader {
  std::string_view name;           // kernel name, e.g. "matmul_forward"
  std::span<const uint32_t> spirv; // SPIR-V words
};

const std::vector<EmbeddedShader>& embedded_shaders();

}  // namespace vk
