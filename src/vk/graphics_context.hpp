// vk::GraphicsContext: the Vulkan device the dashboard draws with, the graphics configuration of vk::Device: one
// graphics queue (that can present, when a window asks), optional instance extensions (the window system's surface
// extensions) and VK_KHR_swapchain. It is a second VkDevice next to the trainer's vk::Context, so the UI never shares
// a queue or a fence with the training step. Also vk::HostReadBuffer and vk::ColorTarget, the two memory objects the
// dashboard needs.
#pragma once
#include <vulkan/vulkan.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "vk/device.hpp"
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

class GraphicsContext : public Device {
 public:
  // Throws vk::Error when there is no driver or device, the device has no graphics queue (that can present), an
  // extension or the validation layer is missing, or the index is out of range (ErrorKind::InvalidArgument).
  explicit GraphicsContext(const GraphicsOptions& options);
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
