// Shared Vulkan set-up: instance, messenger, device choice, memory types, command pools, one-shot submits.
#include "vk/setup.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "core/error.hpp"
#include "vk/context.hpp"

namespace vk {

namespace {

const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";


// The fault injection of fail_allocation_after: -1 = off, else how many allocations still succeed.
std::atomic<long> g_allocations_before_failure{-1};
std::atomic<long> g_allocations_made{0};

// Whether this allocation is the injected failure (and then disarms the injection).
bool injected_allocation_failure() {
  long left = g_allocations_before_failure.load(std::memory_order_relaxed);
  while (left >= 0) {
    if (g_allocations_before_failure.compare_exchange_weak(left, left - 1, std::memory_order_relaxed))
      return left == 0;
  }
  return false;
}

// The injected faults of real GPUs: -1 = off, else how many submissions / waits still succeed.
std::atomic<long> g_submits_before_loss{-1};
std::atomic<long> g_waits_before_timeout{-1};
std::atomic<bool> g_validation_message{false};

// A countdown's turn: whether this call is the injected failure (and then disarms it).
bool countdown(std::atomic<long>& left_counter) {
  long left = left_counter.load(std::memory_order_relaxed);
  while (left >= 0) {
    if (left_counter.compare_exchange_weak(left, left - 1, std::memory_order_relaxed)) return left == 0;
  }
  return false;
}

// TRAINSCOPE_INJECT_FAULT, read once.
void arm_faults_from_environment() {
  static std::once_flag once;
  std::call_once(once, [] {
    const char* env = std::getenv("TRAINSCOPE_INJECT_FAULT");
    if (!env || !*env) return;
    const std::string v = env;
    const size_t at = v.find('@');
    const std::string kind = v.substr(0, at);
    char* end = nullptr;
    errno = 0;
    const long k = at == std::string::npos ? -1 : std::strtol(v.c_str() + at + 1, &end, 10);
    // (an overflowing count was taken as LONG_MAX in silence)
    const bool counted = at != std::string::npos && end && end != v.c_str() + at + 1 && *end == 0 && k >= 0 &&
                         errno != ERANGE;
    if (kind == "validation-message" && at == std::string::npos) g_validation_message = true;
    else if (kind == "device-lost" && counted) g_submits_before_loss = k;
    else if (kind == "fence-timeout" && counted) g_waits_before_timeout = k;
    else
      throw core::Error(core::ErrorKind::InvalidArgument,
                        fmt::format("TRAINSCOPE_INJECT_FAULT={}: not a fault (device-lost@STEP, fence-timeout@STEP or "
                                    "validation-message; for tests)", v));
  });
}

std::atomic<int> g_validation_errors{0};
std::atomic<int> g_validation_warnings{0};
std::mutex g_validation_mutex;
std::vector<std::string> g_validation_messages;  // the process's first messages
std::vector<ValidationMessage> g_validation_distinct;  // each kind once, with its count

VKAPI_ATTR VkBool32 VKAPI_CALL on_validation_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                     VkDebugUtilsMessageTypeFlagsEXT,
                                                     const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
  auto* log = static_cast<ValidationLog*>(user);
  const bool error = severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  (error ? log->errors : log->warnings)++;
  (error ? g_validation_errors : g_validation_warnings)++;
  const std::string text = fmt::format("[{}] {}", error ? "error" : "warning", data->pMessage);
  {
    std::lock_guard lock(log->mutex);
    if (log->first_messages.size() < 8) log->first_messages.push_back(text);
  }
  std::lock_guard lock(g_validation_mutex);
  if (g_validation_messages.size() < 16) g_validation_messages.push_back(text);
  // The same message kind (severity and ID) repeats with other handles in its text: counted, its first text kept.
  const std::string id = data->pMessageIdName ? data->pMessageIdName : fmt::format("id {}", data->messageIdNumber);
  auto same = std::find_if(g_validation_distinct.begin(), g_validation_distinct.end(),
                           [&](const ValidationMessage& m) { return m.error == error && m.id == id; });
  if (same != g_validation_distinct.end())
    ++same->count;
  else if (g_validation_distinct.size() < ValidationTotals::kMaxDistinct)
    g_validation_distinct.push_back({error, id, data->pMessage ? data->pMessage : "", 1});
  return VK_FALSE;
}

}  // namespace

std::string size_text(VkDeviceSize bytes) {
  if (bytes < (1 << 20)) return fmt::format("{} bytes", bytes);
  const double mib = static_cast<double>(bytes) / (1 << 20);
  return mib < 1024 ? fmt::format("{:.1f} MiB", mib) : fmt::format("{:.1f} GiB", mib / 1024);
}

ValidationTotals validation_totals() {
  std::lock_guard lock(g_validation_mutex);
  return {g_validation_errors.load(), g_validation_warnings.load(), g_validation_messages, g_validation_distinct};
}

std::string describe_validation(const ValidationTotals& t) {
  auto plural = [](long n, const char* word) {
    return n == 0 ? fmt::format("no {}s", word) : fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
  };
  std::string text = fmt::format("Vulkan validation: {}, {}", plural(t.errors, "error"), plural(t.warnings, "warning"));
  if (!t.distinct.empty()) text += fmt::format(" ({})", plural(static_cast<long>(t.distinct.size()), "distinct message"));
  text += "\n";
  long listed = 0;
  for (const auto& m : t.distinct) {
    text += fmt::format("  [{}] {}x {}: {}\n", m.error ? "error" : "warning", m.count, m.id, m.text);
    listed += m.count;
  }
  if (listed < t.errors + t.warnings)
    text += fmt::format("  ... and {} more of further kinds (only the first {} kinds are kept)\n",
                        t.errors + t.warnings - listed, ValidationTotals::kMaxDistinct);
  return text;
}

bool validation_failed(const ValidationTotals& t, std::string* why) {
  if (t.errors == 0 && t.warnings == 0) return false;
  if (why)
    *why = fmt::format("the Vulkan validation layer reported {} error{} and {} warning{} (listed above); a run under "
                       "--validation fails on any message",
                       t.errors, t.errors == 1 ? "" : "s", t.warnings, t.warnings == 1 ? "" : "s");
  return true;
}

bool has_layer(const char* name) {
  uint32_t count = 0;
  vkEnumerateInstanceLayerProperties(&count, nullptr);
  std::vector<VkLayerProperties> layers(count);
  vkEnumerateInstanceLayerProperties(&count, layers.data());
  for (const auto& l : layers)
    if (std::strcmp(l.layerName, name) == 0) return true;
  return false;
}

bool has_layer_extension(const char* layer, const char* name) {
  uint32_t count = 0;
  vkEnumerateInstanceExtensionProperties(layer, &count, nullptr);
  std::vector<VkExtensionProperties> exts(count);
  vkEnumerateInstanceExtensionProperties(layer, &count, exts.data());
  for (const auto& e : exts)
    if (std::strcmp(e.extensionName, name) == 0) return true;
  return false;
}

bool has_instance_extension(const char* name) { return has_layer_extension(nullptr, name); }

bool has_device_extension(VkPhysicalDevice physical, const char* name) {
  uint32_t count = 0;
  vkEnumerateDeviceExtensionProperties(physical, nullptr, &count, nullptr);
  std::vector<VkExtensionProperties> exts(count);
  vkEnumerateDeviceExtensionProperties(physical, nullptr, &count, exts.data());
  for (const auto& e : exts)
    if (std::strcmp(e.extensionName, name) == 0) return true;
  return false;
}

std::vector<std::string> device_extensions_to_enable(const std::vector<std::string>& requested,
                                                     const std::function<bool(const char*)>& available,
                                                     const std::string& device_name) {
  std::vector<std::string> out;
  for (const auto& e : requested) {
    if (!available(e.c_str()))
      throw Error(Failure::MissingExtension, fmt::format("Vulkan: device {} lacks the extension {}", device_name, e));
    out.push_back(e);
  }
  // A device that exposes VK_KHR_portability_subset (MoltenVK on macOS) must have it enabled
  // (VUID-VkDeviceCreateInfo-pProperties-04451); it is not in the core headers, hence the name as a string.
  if (available(kPortabilitySubset) && std::find(out.begin(), out.end(), kPortabilitySubset) == out.end())
    out.emplace_back(kPortabilitySubset);
  return out;
}

// The Vulkan loader unloads the drivers (ICDs) when the last instance is destroyed and loads them again for the next
// one (and around each query made before an instance exists). NVIDIA's Linux driver does not survive many such cycles
// in one process: on an H200 (driver 580.159) the 29th context that test_kernel_parity made, one after another, got
// VK_ERROR_INCOMPATIBLE_DRIVER, and every later one too. One instance without layers or devices, made before the
// first real one and kept for the whole process, keeps the drivers loaded; it is never destroyed (on purpose: the
// process's exit frees it). Where none can be made (no driver yet), the next call tries again.
static void keep_drivers_loaded() {
  static std::mutex mutex;
  static VkInstance pinned = VK_NULL_HANDLE;
  const std::lock_guard<std::mutex> lock(mutex);
  if (pinned != VK_NULL_HANDLE) return;
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "trainscope (keeps the Vulkan drivers loaded)";
  app.apiVersion = VK_API_VERSION_1_2;
  VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  info.pApplicationInfo = &app;
  // MoltenVK (macOS) is enumerated only with portability enumeration, as in create_instance below.
  const char* portability = VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME;
  if (has_instance_extension(portability)) {
    info.enabledExtensionCount = 1;
    info.ppEnabledExtensionNames = &portability;
    info.flags |= VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR;
  }
  if (vkCreateInstance(&info, nullptr, &pinned) != VK_SUCCESS) pinned = VK_NULL_HANDLE;
}

Handle<VkInstance> create_instance(bool validation, const std::vector<std::string>& extra, const char* app_name) {
  keep_drivers_loaded();
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = app_name;
  app.apiVersion = VK_API_VERSION_1_2;
  std::vector<const char*> layers, extensions;
  for (const auto& e : extra) {
    if (!has_instance_extension(e.c_str()))
      throw Error(Failure::MissingExtension,
                        fmt::format("Vulkan: the instance extension {} is missing (is the Vulkan driver for this "
                                    "display installed?)", e));
    extensions.push_back(e.c_str());
  }
  VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  // Synchronization validation besides the layer's default checks: it reports the hazards a missing barrier leaves
  // (read-after-write, write-after-read, write-after-write between dispatches, copies and host reads), which the
  // default checks cannot see and lavapipe, running dispatches in order, never shows.
  const VkValidationFeatureEnableEXT enables[] = {VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
  VkValidationFeaturesEXT features{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
  features.enabledValidationFeatureCount = 1;
  features.pEnabledValidationFeatures = enables;
  if (validation) {
    // A layer the Vulkan loader enables from VK_INSTANCE_LAYERS below a translation layer is active without being
    // listed to the program: wine's winevulkan hands a Windows program the host's Vulkan, whose loader takes the
    // validation layer from that variable (its features then from VK_LAYER_ENABLES), while the Windows side lists no
    // layers, and wine hides VK_* variables from the Windows side. TRAINSCOPE_VALIDATION_INJECTED=1 says so
    // (scripts/test-windows sets both); the messages still reach the messenger below, through VK_EXT_debug_utils, and
    // test_gpu_validation fails if none arrive.
    const char* env_layers = std::getenv("VK_INSTANCE_LAYERS");
    const char* env_injected = std::getenv("TRAINSCOPE_VALIDATION_INJECTED");
    const bool injected = (env_layers && std::strstr(env_layers, kValidationLayer) != nullptr) ||
                          (env_injected && std::strcmp(env_injected, "1") == 0);
    const bool listed = has_layer(kValidationLayer);
    if (!listed && !(injected && has_instance_extension(VK_EXT_DEBUG_UTILS_EXTENSION_NAME)))
      throw Error(Failure::MissingLayer,
                        "Vulkan: the validation layer VK_LAYER_KHRONOS_validation is not installed "
                        "(install vulkan-validationlayers)");
    if (listed) layers.push_back(kValidationLayer);
    extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    if (listed && has_layer_extension(kValidationLayer, VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME)) {
      extensions.push_back(VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME);
      info.pNext = &features;
    }
  }
  if (has_instance_extension(VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME)) {
    extensions.push_back(VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME);
    info.flags |= VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR;
  }
  info.pApplicationInfo = &app;
  info.enabledLayerCount = static_cast<uint32_t>(layers.size());
  info.ppEnabledLayerNames = layers.data();
  info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();
  VkInstance instance = VK_NULL_HANDLE;
  VkResult r = vkCreateInstance(&info, nullptr, &instance);
  if (r == VK_ERROR_INCOMPATIBLE_DRIVER || r == VK_ERROR_INITIALIZATION_FAILED)
    throw Error(Failure::NoDevice,
                fmt::format("Vulkan: no Vulkan driver found ({}): install mesa-vulkan-drivers (lavapipe, a "
                            "software Vulkan device) or your GPU's Vulkan driver",
                            result_name(r)),
                r);
  check(r, "vkCreateInstance");
  return Handle<VkInstance>(instance, [](VkInstance i) { vkDestroyInstance(i, nullptr); });
}

Handle<VkDebugUtilsMessengerEXT> create_validation_messenger(VkInstance instance, ValidationLog& log) {
  auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
      vkGetInstanceProcAddr(instance, "vkCreateDebugUtilsMessengerEXT"));
  auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
      vkGetInstanceProcAddr(instance, "vkDestroyDebugUtilsMessengerEXT"));
  if (!create || !destroy) return {};
  VkDebugUtilsMessengerCreateInfoEXT mi{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  mi.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  mi.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                   VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  mi.pfnUserCallback = on_validation_message;
  mi.pUserData = &log;
  VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
  check(create(instance, &mi, nullptr, &messenger), "vkCreateDebugUtilsMessengerEXT");
  return Handle<VkDebugUtilsMessengerEXT>(messenger,
                                          [instance, destroy](VkDebugUtilsMessengerEXT m) { destroy(instance, m, nullptr); });
}

PickedDevice pick_physical_device(VkInstance instance, int index) {
  uint32_t count = 0;
  vkEnumeratePhysicalDevices(instance, &count, nullptr);
  std::vector<VkPhysicalDevice> physicals(count);
  vkEnumeratePhysicalDevices(instance, &count, physicals.data());
  if (count == 0)
    throw Error(Failure::NoDevice,
                "Vulkan: no Vulkan device found: install mesa-vulkan-drivers (lavapipe) or your GPU's driver");
  std::vector<DeviceInfo> infos;
  for (uint32_t i = 0; i < count; ++i) infos.push_back(describe_device(physicals[i], static_cast<int>(i)));
  const int chosen = index < 0 ? pick_best_device(infos) : index;
  if (chosen >= static_cast<int>(count))
    throw Error(Failure::DeviceIndex,
                fmt::format("Vulkan device index {} is out of range: this machine has {} Vulkan device(s), 0..{}",
                            chosen, count, count - 1));
  return {physicals[static_cast<size_t>(chosen)], infos[static_cast<size_t>(chosen)]};
}

uint32_t find_memory_type(const VkPhysicalDeviceMemoryProperties& memory, uint32_t type_bits,
                          VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred,
                          const std::string& device_name) {
  for (int pass = 0; pass < 2; ++pass) {
    VkMemoryPropertyFlags want = pass == 0 ? (required | preferred) : required;
    for (uint32_t i = 0; i < memory.memoryTypeCount; ++i)
      if ((type_bits & (1u << i)) && (memory.memoryTypes[i].propertyFlags & want) == want) return i;
  }
  throw Error(Failure::Unsupported, "Vulkan: no suitable memory type for a buffer on " + device_name);
}

Handle<VkBuffer> create_buffer(VkDevice device, VkDeviceSize bytes, VkBufferUsageFlags usage, const std::string& what) {
  VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bi.size = bytes;
  bi.usage = usage;
  bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkBuffer buffer = VK_NULL_HANDLE;
  const VkResult r = vkCreateBuffer(device, &bi, nullptr, &buffer);
  if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY)
    throw Error(Failure::OutOfMemory,
                fmt::format("Vulkan: out of {} memory creating a buffer of {} for {}",
                            r == VK_ERROR_OUT_OF_DEVICE_MEMORY ? "GPU" : "host", size_text(bytes), what),
                r, bytes);
  check(r, ("vkCreateBuffer (" + what + ")").c_str());
  return Handle<VkBuffer>(buffer, [device](VkBuffer b) { vkDestroyBuffer(device, b, nullptr); });
}

Handle<VkDeviceMemory> allocate_memory(VkDevice device, VkDeviceSize size, uint32_t type_index, const std::string& what,
                                       const std::string& device_name) {
  VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  ai.allocationSize = size;
  ai.memoryTypeIndex = type_index;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  const VkResult r = injected_allocation_failure() ? VK_ERROR_OUT_OF_DEVICE_MEMORY
                                                   : vkAllocateMemory(device, &ai, nullptr, &memory);
  if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY)
    throw Error(Failure::OutOfMemory,
                fmt::format("Vulkan: out of {} memory allocating {} for {} on {}",
                            r == VK_ERROR_OUT_OF_DEVICE_MEMORY ? "GPU" : "host", size_text(size), what, device_name),
                r, size);
  check(r, ("vkAllocateMemory (" + what + ")").c_str());
  g_allocations_made.fetch_add(1, std::memory_order_relaxed);
  return Handle<VkDeviceMemory>(memory, [device](VkDeviceMemory m) { vkFreeMemory(device, m, nullptr); });
}

void fail_allocation_after(long k) { g_allocations_before_failure.store(k < 0 ? -1 : k, std::memory_order_relaxed); }

void check_fault_environment() { arm_faults_from_environment(); }

void inject_device_lost_after(long k) {
  arm_faults_from_environment();  // first, so that the environment never overrides a test's own setting
  g_submits_before_loss.store(k < 0 ? -1 : k, std::memory_order_relaxed);
}

void inject_fence_timeout_after(long k) {
  arm_faults_from_environment();
  g_waits_before_timeout.store(k < 0 ? -1 : k, std::memory_order_relaxed);
}

bool injected_device_lost() {
  arm_faults_from_environment();
  return countdown(g_submits_before_loss);
}

bool injected_fence_timeout() {
  arm_faults_from_environment();
  return countdown(g_waits_before_timeout);
}

bool injected_validation_message() {
  arm_faults_from_environment();
  return g_validation_message.exchange(false);
}

long allocations_made() { return g_allocations_made.load(std::memory_order_relaxed); }

Handle<VkCommandPool> create_command_pool(VkDevice device, uint32_t queue_family) {
  VkCommandPoolCreateInfo pi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pi.queueFamilyIndex = queue_family;
  VkCommandPool pool = VK_NULL_HANDLE;
  check(vkCreateCommandPool(device, &pi, nullptr, &pool), "vkCreateCommandPool");
  return Handle<VkCommandPool>(pool, [device](VkCommandPool p) { vkDestroyCommandPool(device, p, nullptr); });
}

}  // namespace vk
