// Swapchain creation for the dashboard window: format, present mode, image count, views, framebuffers.
#include "ui/swapchain.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace ui {

namespace {

bool is_bgra8(VkFormat f) { return f == VK_FORMAT_B8G8R8A8_UNORM || f == VK_FORMAT_B8G8R8A8_SRGB; }
bool is_rgba8(VkFormat f) { return f == VK_FORMAT_R8G8B8A8_UNORM || f == VK_FORMAT_R8G8B8A8_SRGB; }

VkPresentModeKHR choose_present_mode(VkPhysicalDevice physical, VkSurfaceKHR surface, bool vsync) {
  if (vsync) return VK_PRESENT_MODE_FIFO_KHR;  // always supported
  uint32_t count = 0;
  vkGetPhysicalDeviceSurfacePresentModesKHR(physical, surface, &count, nullptr);
  std::vector<VkPresentModeKHR> modes(count);
  vkGetPhysicalDeviceSurfacePresentModesKHR(physical, surface, &count, modes.data());
  for (VkPresentModeKHR want : {VK_PRESENT_MODE_MAILBOX_KHR, VK_PRESENT_MODE_IMMEDIATE_KHR})
    if (std::find(modes.begin(), modes.end(), want) != modes.end()) return want;
  return VK_PRESENT_MODE_FIFO_KHR;
}

}  // namespace

VkSurfaceFormatKHR choose_surface_format(VkPhysicalDevice physical, VkSurfaceKHR surface) {
  uint32_t count = 0;
  vk::check(vkGetPhysicalDeviceSurfaceFormatsKHR(physical, surface, &count, nullptr),
            "vkGetPhysicalDeviceSurfaceFormatsKHR");
  std::vector<VkSurfaceFormatKHR> formats(count);
  vk::check(vkGetPhysicalDeviceSurfaceFormatsKHR(physical, surface, &count, formats.data()),
            "vkGetPhysicalDeviceSurfaceFormatsKHR");
  if (formats.empty()) throw core::Error(core::ErrorKind::Vulkan, "Vulkan: the window's surface offers no format");
  for (VkFormat want : {VK_FORMAT_B8G8R8A8_UNORM, VK_FORMAT_R8G8B8A8_UNORM})
    for (const auto& f : formats)
      if (f.format == want && f.colorSpace == VK_COLOR_SPACE_SRGB_NONLINEAR_KHR) return f;
  return formats[0];
}

Swapchain::Swapchain(const vk::GraphicsContext& gpu, VkSurfaceKHR surface, VkSurfaceFormatKHR format, VkRenderPass pass,
                     VkExtent2D extent, bool vsync, VkSwapchainKHR old) {
  VkDevice dev = gpu.device();
  VkSurfaceCapabilitiesKHR caps;
  vk::check(vkGetPhysicalDeviceSurfaceCapabilitiesKHR(gpu.physical_device(), surface, &caps),
            "vkGetPhysicalDeviceSurfaceCapabilitiesKHR");
  if (caps.currentExtent.width != UINT32_MAX) {
    extent_ = caps.currentExtent;
  } else {
    extent_.width = std::clamp(extent.width, caps.minImageExtent.width, caps.maxImageExtent.width);
    extent_.height = std::clamp(extent.height, caps.minImageExtent.height, caps.maxImageExtent.height);
  }
  present_mode_ = choose_present_mode(gpu.physical_device(), surface, vsync);
  // One image more than the minimum, so acquiring the next image rarely waits on the presentation engine.
  uint32_t count = caps.minImageCount + 1;
  if (caps.maxImageCount != 0) count = std::min(count, caps.maxImageCount);
  const bool transfer_src = caps.supportedUsageFlags & VK_IMAGE_USAGE_TRANSFER_SRC_BIT;
  readable_ = transfer_src && (is_bgra8(format.format) || is_rgba8(format.format));
  bgra_ = is_bgra8(format.format);

  VkSwapchainCreateInfoKHR info{VK_STRUCTURE_TYPE_SWAPCHAIN_CREATE_INFO_KHR};
  info.surface = surface;
  info.minImageCount = count;
  info.imageFormat = format.format;
  info.imageColorSpace = format.colorSpace;
  info.imageExtent = extent_;
  info.imageArrayLayers = 1;
  info.imageUsage = VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | (readable_ ? VK_IMAGE_USAGE_TRANSFER_SRC_BIT : 0);
  info.imageSharingMode = VK_SHARING_MODE_EXCLUSIVE;  // one queue draws and presents
  info.preTransform = caps.currentTransform;
  info.compositeAlpha = VK_COMPOSITE_ALPHA_OPAQUE_BIT_KHR;
  for (auto alpha : {VK_COMPOSITE_ALPHA_OPAQUE_BIT_KHR, VK_COMPOSITE_ALPHA_INHERIT_BIT_KHR,
                     VK_COMPOSITE_ALPHA_PRE_MULTIPLIED_BIT_KHR, VK_COMPOSITE_ALPHA_POST_MULTIPLIED_BIT_KHR}) {
    if (caps.supportedCompositeAlpha & alpha) {
      info.compositeAlpha = alpha;
      break;
    }
  }
  info.presentMode = present_mode_;
  info.clipped = VK_TRUE;
  info.oldSwapchain = old;
  VkSwapchainKHR swapchain = VK_NULL_HANDLE;
  vk::check(vkCreateSwapchainKHR(dev, &info, nullptr, &swapchain), "vkCreateSwapchainKHR");
  swapchain_ =
      vk::Handle<VkSwapchainKHR>(swapchain, [dev](VkSwapchainKHR s) { vkDestroySwapchainKHR(dev, s, nullptr); });

  uint32_t n = 0;
  vk::check(vkGetSwapchainImagesKHR(dev, swapchain, &n, nullptr), "vkGetSwapchainImagesKHR");
  images_.resize(n);
  vk::check(vkGetSwapchainImagesKHR(dev, swapchain, &n, images_.data()), "vkGetSwapchainImagesKHR");
  for (VkImage image : images_) {
    views_.push_back(vk::create_color_view(dev, image, format.format));
    VkImageView view = views_.back().get();
    VkFramebufferCreateInfo fi{VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO};
    fi.renderPass = pass;
    fi.attachmentCount = 1;
    fi.pAttachments = &view;
    fi.width = extent_.width;
    fi.height = extent_.height;
    fi.layers = 1;
    VkFramebuffer framebuffer = VK_NULL_HANDLE;
    vk::check(vkCreateFramebuffer(dev, &fi, nullptr, &framebuffer), "vkCreateFramebuffer (window)");
    framebuffers_.emplace_back(framebuffer, [dev](VkFramebuffer f) { vkDestroyFramebuffer(dev, f, nullptr); });
    VkSemaphoreCreateInfo si{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
    VkSemaphore semaphore = VK_NULL_HANDLE;
    vk::check(vkCreateSemaphore(dev, &si, nullptr, &semaphore), "vkCreateSemaphore");
    render_done_.emplace_back(semaphore, [dev](VkSemaphore s) { vkDestroySemaphore(dev, s, nullptr); });
  }
}

}  // namespace ui
