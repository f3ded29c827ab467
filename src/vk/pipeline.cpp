// Compute pipelines from embedded SPIR-V, descriptor sets, timestamp queries, dispatch recording.
#include "vk/pipeline.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.hpp"
#include "vk/embedded_shaders.hpp"
#include "vk/setup.hpp"

namespace vk {

// Bytes of one texel of the formats the kernels' texel views use.
static VkDeviceSize texel_bytes(VkFormat format) {
  switch (format) {
    case VK_FORMAT_R32G32B32A32_SFLOAT: return 16;
    case VK_FORMAT_R16G16B16A16_SFLOAT:
    case VK_FORMAT_R16G16B16A16_UINT: return 8;
    case VK_FORMAT_R32_SFLOAT: return 4;
    case VK_FORMAT_R16_SFLOAT:
    case VK_FORMAT_R16_UINT: return 2;
    default: throw core::Error(core::ErrorKind::Internal, fmt::format("texel view of unexpected format {}", int(format)));
  }
}

static std::span<const uint32_t> find_spirv(const std::string& kernel) {
  for (const auto& s : embedded_shaders())
    if (s.name == kernel) return s.spirv;
  throw core::Error(core::ErrorKind::Internal, "no embedded shader named " + kernel);
}

namespace {

[[noreturn]] void past_limit(const Context& ctx, const std::string& what, const std::string& limit) {
  // A kernel's workgroup, shared memory, push constants and bindings do not grow with --batch or --hidden: the
  // Limit hint's advice ("a smaller --batch ...") would not help (issue 34).
  throw Error(Failure::Limit,
              fmt::format("Vulkan: {} is more than {} allows ({})", what, display_name(ctx.info()), limit))
      .with_hint("no setting changes a kernel's shape: choose another --device");
}

// The workgroup, push constants and bindings of a pipeline against the device's limits.
void check_pipeline(const Context& ctx, const std::string& kernel, const Workgroup& w, uint32_t push_bytes,
                    uint32_t storage_bindings, uint32_t texel_bindings) {
  const DeviceLimits& l = ctx.limits();
  const uint64_t invocations = uint64_t(w.size[0]) * w.size[1] * w.size[2];
  if (invocations > l.max_workgroup_invocations)
    past_limit(ctx, fmt::format("{}'s workgroup of {} invocations", kernel, invocations),
               fmt::format("maxComputeWorkGroupInvocations {}", l.max_workgroup_invocations));
  for (int i = 0; i < 3; ++i)
    if (w.size[i] > l.max_workgroup_size[i])
      past_limit(ctx, fmt::format("{}'s workgroup size {} along {}", kernel, w.size[i], "xyz"[i]),
                 fmt::format("maxComputeWorkGroupSize[{}] {}", i, l.max_workgroup_size[i]));
  if (w.shared_bytes > l.max_shared_memory)
    past_limit(ctx, fmt::format("{}'s {} bytes of shared memory", kernel, w.shared_bytes),
               fmt::format("maxComputeSharedMemorySize {}", l.max_shared_memory));
  if (push_bytes > l.max_push_constants_size)
    past_limit(ctx, fmt::format("{}'s {} bytes of push constants", kernel, push_bytes),
               fmt::format("maxPushConstantsSize {}", l.max_push_constants_size));
  if (storage_bindings > l.max_per_stage_storage_buffers)
    past_limit(ctx, fmt::format("{}'s {} storage buffers", kernel, storage_bindings),
               fmt::format("maxPerStageDescriptorStorageBuffers {}", l.max_per_stage_storage_buffers));
  if (texel_bindings > l.max_per_stage_sampled_images)
    past_limit(ctx, fmt::format("{}'s {} texel buffers", kernel, texel_bindings),
               fmt::format("maxPerStageDescriptorSampledImages {}", l.max_per_stage_sampled_images));
}

}  // namespace

ComputePipeline::ComputePipeline(Context& ctx, const std::string& kernel, uint32_t bindings,
                                 uint32_t push_constant_bytes, Workgroup workgroup, std::span<const uint32_t> spec,
                                 std::span<const BindingKind> kinds, VkPipelineCache cache)
    : kernel_(kernel),
      workgroup_(workgroup),
      limits_(ctx.limits()),
      bindings_(bindings),
      kinds_(kinds.begin(), kinds.end()),
      push_bytes_(push_constant_bytes) {
  if (!kinds_.empty() && kinds_.size() != bindings)
    throw core::Error(core::ErrorKind::Internal,
                      fmt::format("{}: {} binding kinds for {} bindings", kernel, kinds_.size(), bindings));
  uint32_t texel = 0;
  for (uint32_t i = 0; i < bindings; ++i) texel += binding_kind(i).type == VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER;
  check_pipeline(ctx, kernel, workgroup, push_constant_bytes, bindings - texel, texel);
  VkDevice dev = ctx.device();
  auto spirv = find_spirv(kernel);
  VkShaderModuleCreateInfo mi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  mi.codeSize = spirv.size_bytes();
  mi.pCode = spirv.data();
  VkShaderModule module = VK_NULL_HANDLE;
  check(vkCreateShaderModule(dev, &mi, nullptr, &module), "vkCreateShaderModule");
  module_ = Handle<VkShaderModule>(module, [dev](VkShaderModule m) { vkDestroyShaderModule(dev, m, nullptr); });

  std::vector<VkDescriptorSetLayoutBinding> layout_bindings(bindings);
  for (uint32_t i = 0; i < bindings; ++i)
    layout_bindings[i] = {i, binding_kind(i).type, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
  VkDescriptorSetLayoutCreateInfo li{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  li.bindingCount = bindings;
  li.pBindings = layout_bindings.data();
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  check(vkCreateDescriptorSetLayout(dev, &li, nullptr, &set_layout), "vkCreateDescriptorSetLayout");
  set_layout_ = Handle<VkDescriptorSetLayout>(
      set_layout, [dev](VkDescriptorSetLayout l) { vkDestroyDescriptorSetLayout(dev, l, nullptr); });

  VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, push_constant_bytes};
  VkPipelineLayoutCreateInfo pli{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  pli.setLayoutCount = 1;
  pli.pSetLayouts = &set_layout;
  pli.pushConstantRangeCount = push_constant_bytes ? 1 : 0;
  pli.pPushConstantRanges = &push;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  check(vkCreatePipelineLayout(dev, &pli, nullptr, &layout), "vkCreatePipelineLayout");
  layout_ = Handle<VkPipelineLayout>(layout, [dev](VkPipelineLayout l) { vkDestroyPipelineLayout(dev, l, nullptr); });

  std::vector<VkSpecializationMapEntry> entries(spec.size());
  for (uint32_t i = 0; i < spec.size(); ++i) entries[i] = {i, i * 4u, 4};
  VkSpecializationInfo si{static_cast<uint32_t>(entries.size()), entries.data(), spec.size_bytes(), spec.data()};
  VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  ci.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
  ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  ci.stage.module = module;
  ci.stage.pName = "main";
  ci.stage.pSpecializationInfo = spec.empty() ? nullptr : &si;
  ci.layout = layout;
  VkPipeline pipeline = VK_NULL_HANDLE;
  check(vkCreateComputePipelines(dev, cache, 1, &ci, nullptr, &pipeline),
        ("vkCreateComputePipelines (" + kernel + ")").c_str());
  pipeline_ = Handle<VkPipeline>(pipeline, [dev](VkPipeline p) { vkDestroyPipeline(dev, p, nullptr); });
}

DescriptorPool::DescriptorPool(Context& ctx, uint32_t max_sets, uint32_t max_bindings) {
  VkDevice dev = ctx.device();
  const VkDescriptorPoolSize sizes[] = {{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, max_sets * max_bindings},
                                       {VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER, max_sets * max_bindings}};
  VkDescriptorPoolCreateInfo pi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  pi.maxSets = max_sets;
  pi.poolSizeCount = 2;
  pi.pPoolSizes = sizes;
  VkDescriptorPool pool = VK_NULL_HANDLE;
  check(vkCreateDescriptorPool(dev, &pi, nullptr, &pool), "vkCreateDescriptorPool");
  pool_ = Handle<VkDescriptorPool>(pool, [dev](VkDescriptorPool p) { vkDestroyDescriptorPool(dev, p, nullptr); });
}

VkDescriptorSet DescriptorPool::allocate(Context& ctx, const ComputePipeline& pipeline,
                                         std::span<const BufferRange> ranges) {
  if (ranges.size() != pipeline.bindings())
    throw core::Error(core::ErrorKind::Internal,
                      fmt::format("{}: {} buffers bound, the kernel has {} bindings", pipeline.kernel(),
                                  ranges.size(), pipeline.bindings()));
  VkDescriptorSetLayout layout = pipeline.set_layout();
  VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  ai.descriptorPool = pool_.get();
  ai.descriptorSetCount = 1;
  ai.pSetLayouts = &layout;
  VkDescriptorSet set = VK_NULL_HANDLE;
  check(vkAllocateDescriptorSets(ctx.device(), &ai, &set), "vkAllocateDescriptorSets");
  std::vector<VkDescriptorBufferInfo> infos(ranges.size());
  std::vector<VkBufferView> views(ranges.size(), VK_NULL_HANDLE);
  std::vector<VkWriteDescriptorSet> writes(ranges.size());
  VkDevice dev = ctx.device();
  const DeviceLimits& limits = ctx.limits();
  for (size_t i = 0; i < ranges.size(); ++i) {
    const auto& r = ranges[i];
    const BindingKind kind = pipeline.binding_kind(static_cast<uint32_t>(i));
    const VkDeviceSize bound = r.range ? r.range : r.buffer->size() - r.offset;
    const bool texel_binding = kind.type == VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER;
    const uint64_t align =
        texel_binding ? limits.min_texel_buffer_offset_alignment : limits.min_storage_buffer_offset_alignment;
    const std::string what = fmt::format("{}'s binding {} ({})", pipeline.kernel(), i, r.buffer->name());
    if (align > 1 && r.offset % align != 0)
      past_limit(ctx, fmt::format("{} at offset {}", what, r.offset),
                 fmt::format("an offset a multiple of {}, min{}BufferOffsetAlignment", align,
                             texel_binding ? "Texel" : "Storage"));
    if (!texel_binding && bound > limits.max_storage_buffer_range)
      past_limit(ctx, fmt::format("{} of {}", what, size_text(bound)),
                 fmt::format("maxStorageBufferRange {}", size_text(limits.max_storage_buffer_range)));
    writes[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    writes[i].dstSet = set;
    writes[i].dstBinding = static_cast<uint32_t>(i);
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = kind.type;
    if (kind.type == VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER) {
      const VkDeviceSize texel = texel_bytes(kind.texel_format);
      const VkDeviceSize bytes = r.range ? r.range : r.buffer->size() - r.offset;
      VkBufferViewCreateInfo vi{VK_STRUCTURE_TYPE_BUFFER_VIEW_CREATE_INFO};
      vi.buffer = r.buffer->handle();
      vi.format = kind.texel_format;
      vi.offset = r.offset;
      vi.range = std::max<VkDeviceSize>(bytes / texel, 1) * texel;
      if (vi.range / texel > limits.max_texel_buffer_elements)
        past_limit(ctx, fmt::format("{} of {} texels", what, vi.range / texel),
                   fmt::format("maxTexelBufferElements {}", limits.max_texel_buffer_elements));
      check(vkCreateBufferView(dev, &vi, nullptr, &views[i]), "vkCreateBufferView");
      views_.emplace_back(views[i], [dev](VkBufferView v) { vkDestroyBufferView(dev, v, nullptr); });
      writes[i].pTexelBufferView = &views[i];
    } else {
      infos[i] = {r.buffer->handle(), r.offset, r.range ? r.range : VK_WHOLE_SIZE};
      writes[i].pBufferInfo = &infos[i];
    }
  }
  vkUpdateDescriptorSets(ctx.device(), static_cast<uint32_t>(writes.size()), writes.data(), 0, nullptr);
  return set;
}

TimestampQueries::TimestampQueries(Context& ctx, uint32_t count) : count_(count) {
  VkDevice dev = ctx.device();
  VkQueryPoolCreateInfo qi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
  qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
  qi.queryCount = count;
  VkQueryPool pool = VK_NULL_HANDLE;
  check(vkCreateQueryPool(dev, &qi, nullptr, &pool), "vkCreateQueryPool");
  pool_ = Handle<VkQueryPool>(pool, [dev](VkQueryPool p) { vkDestroyQueryPool(dev, p, nullptr); });
}

void TimestampQueries::reset(VkCommandBuffer cmd) { vkCmdResetQueryPool(cmd, pool_.get(), 0, count_); }

void TimestampQueries::write(VkCommandBuffer cmd, uint32_t index, VkPipelineStageFlagBits stage) {
  vkCmdWriteTimestamp(cmd, stage, pool_.get(), index);
}

std::vector<double> TimestampQueries::read_ns(Context& ctx, uint32_t count, double* first_ns) const {
  std::vector<uint64_t> ticks(count);
  check(vkGetQueryPoolResults(ctx.device(), pool_.get(), 0, count, count * sizeof(uint64_t), ticks.data(),
                              sizeof(uint64_t), VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
        "vkGetQueryPoolResults");
  const uint32_t bits = ctx.timestamp_valid_bits();
  const uint64_t mask = bits >= 64 ? ~0ull : ((1ull << bits) - 1);
  const double period = ctx.info().timestamp_period_ns;
  for (auto& t : ticks) t = ctx.masked_ticks(t);
  std::vector<double> ns(count);
  // Differences modulo 2^bits: an interval that spans the counter's wrap-around is still its length.
  for (uint32_t i = 0; i < count; ++i) ns[i] = static_cast<double>((ticks[i] - ticks[0]) & mask) * period;
  if (first_ns) *first_ns = count > 0 ? static_cast<double>(ctx.clock_ticks(ticks[0])) * period : 0;
  return ns;
}

void record_dispatch(VkCommandBuffer cmd, const ComputePipeline& pipeline, VkDescriptorSet set, const void* push,
                     uint32_t groups_x, uint32_t groups_y, uint32_t groups_z) {
  const uint32_t groups[3] = {groups_x, groups_y, groups_z};
  for (int i = 0; i < 3; ++i)
    if (groups[i] > pipeline.limits().max_workgroup_count[i])
      throw Error(Failure::Limit, fmt::format("Vulkan: a dispatch of {} with {} workgroups along {} is more than the "
                                              "device allows (maxComputeWorkGroupCount[{}] {})",
                                              pipeline.kernel(), groups[i], "xyz"[i], i,
                                              pipeline.limits().max_workgroup_count[i]));
  vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.pipeline());
  vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.layout(), 0, 1, &set, 0, nullptr);
  if (pipeline.push_constant_bytes())
    vkCmdPushConstants(cmd, pipeline.layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0, pipeline.push_constant_bytes(), push);
  vkCmdDispatch(cmd, groups_x, groups_y, groups_z);
}

void compute_barrier(VkCommandBuffer cmd) {
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT;
  mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
  vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &mb, 0,
                       nullptr, 0, nullptr);
}

}  // namespace vk
