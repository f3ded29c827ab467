// vk::GraphicsContext: the Vulkan instance and logical device the dashboard draws with: one graphics queue (that can
// present, when a window asks), optional instance extensions (the window system's surface extensions) and
// VK_KHR_swapchain, the validation layer with its own messenger, a command pool. It is a second VkDevice next to the
// trainer's vk::Context (which has no graphics queue or swapchain), so the UI never shares a queue or a fence with
// the training step. Also vk::HostReadBuffer and vk::ColorTarget, the two memory objects the dashboard needs.
#pragma once
#include <vulkan/vulkan.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "vk/context.hpp"
#include "vk/devices.hpp"
#include "vk/handle.hpp"

namespace vk {

struct GraphicsOptions {
  int device_index = -1;                         // -1: pick_best_device, as for the trainer
  bool validation = false;                       // VK_LAYER_KHRONOS_validation; error if it is not installed
  std::vector<std::string> instance_extensions;  // e.g. what glfwGetRequiredInstanceExtensions() lists
  bool swapchain = false;                        // enable VK_KHR_swapchain on the device
  // When set, the queue family must also pass this test (a window's present support); empty: headless.
  std::function<bool(VkInstance, VkPhysicalDevice, uint32_t family)> can_present;
};

class GraphicsContext {
 public:
  // Throws core::Error(Vulkan) when there is no loader/device, the device has no graphics queue (that can present),
  // an extension or the validation layer is missing; core::Error(InvalidArgument) for an out-of-range device index.
  explicit GraphicsContext(const GraphicsOptions& options);
  ~GraphicsContext();
  GraphicsContext(const GraphicsContext&) = delete;
  GraphicsContext& operator=(const GraphicsContext&) = delete;

  VkInstance instance() const { return instance_.get(); }
  VkPhysicalDevice physical_device() const { return physical_; }
  VkDevice device() const { return device_.get(); }
  VkQueue queue() const { return queue_; }
  uint32_t queue_family() const { return queue_family_; }
  VkCommandPool command_pool() const { return command_pool_.get(); }
  const DeviceInfo& info() const { return info_; }
  const ValidationLog& validation_log() const { return *validation_log_; }

  // A memory type index with all `required` flags (preferably also `preferred`); throws core::Error(Vulkan).
  uint32_t memory_type(uint32_t type_bits, VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred) const;

  // Records with `record`, submits and waits for this context's queue only (set-up: font upload).
  void run_one_shot(const std::function<void(VkCommandBuffer)>& record);

 private:
  std::unique_ptr<ValidationLog> validation_log_;
  Handle<VkInstance> instance_;
  Handle<VkDebugUtilsMessengerEXT> messenger_;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  DeviceInfo info_;
  VkPhysicalDeviceMemoryProperties memory_{};
  uint32_t queue_family_ = 0;
  Handle<VkDevice> device_;
  VkQueue queue_ = VK_NULL_HANDLE;
  Handle<VkCommandPool> command_pool_;
};

// A mapped host-visible, host-coherent buffer the GPU copies an image into (screenshot read-back).
class HostReadBuffer {
 public:
  HostReadBuffer() = default;
  HostReadBuffer(const GraphicsContext& gpu, VkDeviceSize bytes);
  VkBuffer handle() const { return buffer_.get(); }
  VkDeviceSize size() const { return size_; }
  const void* mapped() const { return mapped_; }

 private:
  Handle<VkDeviceMemory> memory_;  // declared first: freed after the buffer bound to it is destroyed
  Handle<VkBuffer> buffer_;
  VkDeviceSize size_ = 0;
  void* mapped_ = nullptr;
};

// A device-local 2D colour image with its view, usable as a colour attachment and a copy source (offscreen frames).
class ColorTarget {
 public:
  ColorTarget() = default;
  ColorTarget(const GraphicsContext& gpu, uint32_t width, uint32_t height, VkFormat format);
  VkImage image() const { return image_.get(); }
  VkImageView view() const { return view_.get(); }

 private:
  Handle<VkDeviceMemory> memory_;  // destroyed last: view, then image, then its memory
  Handle<VkImage> image_;
  Handle<VkImageView> view_;
};

// A view of one colour image (mip 0, layer 0): swapchain images and offscreen targets alike.
Handle<VkImageView> create_color_view(VkDevice device, VkImage image, VkFormat format);

}  // namespace vk
