// What consecutive GPU trainers share (gpu::DeviceCache): one device, kernels compiled once per precision, the dataset
// uploaded once per content, and trainers made from shared parts that train exactly like trainers made alone. And the
// pipeline cache on disk (vk::PipelineCache): its file name and header check, save and reload, and a corrupt,
// truncated, foreign or unreadable file ignored and replaced. And the Vulkan driver kept loaded between contexts.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "core/batches.hpp"
#include "file_test_util.hpp"
#include "gpu/device_cache.hpp"
#include "gpu/kernels.hpp"
#include "gpu/trainer.hpp"
#include "gpu/warm_up.hpp"
#include "gpu_test_util.hpp"
#include "vk/pipeline_cache.hpp"

namespace {

namespace fs = std::filesystem;

fs::path scratch(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("trainscope_test_device_cache_" + std::to_string(platform::process_id())) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// The spiral as run::load_data makes it, with its content named.
core::DataSplit spiral(const core::TrainConfig& cfg) {
  core::DataSplit d =
      core::make_spiral(cfg.spiral_classes, cfg.spiral_points, cfg.spiral_points / 4, cfg.spiral_noise, cfg.seed);
  d.content_id = core::next_content_id();
  return d;
}

core::TrainConfig small_config() {
  core::TrainConfig cfg;
  cfg.dataset = "spiral";
  cfg.spiral_points = 300;
  cfg.hidden = {16, 8};
  cfg.batch = 32;
  cfg.readback_interval = 8;
  return cfg;
}

// The first `steps` losses of `trainer` from the start of epoch 0.
std::vector<float> losses(core::Trainer& trainer, const core::DataSplit& data, uint64_t seed, int steps) {
  const std::vector<uint32_t> order = core::epoch_order(data.train.count, seed, 0);
  trainer.begin_epoch(order);
  for (int s = 0; s < steps; ++s) trainer.step(static_cast<size_t>(s) * static_cast<size_t>(trainer.plan().batch));
  std::vector<float> out;
  for (const auto& r : trainer.flush()) out.push_back(r.loss);
  return out;
}

VkPhysicalDeviceProperties fake_device(uint32_t vendor, uint32_t device) {
  VkPhysicalDeviceProperties p{};
  p.vendorID = vendor;
  p.deviceID = device;
  p.driverVersion = 0x1234;
  for (uint32_t i = 0; i < VK_UUID_SIZE; ++i) p.pipelineCacheUUID[i] = static_cast<uint8_t>(i + 1);
  return p;
}

std::vector<unsigned char> header_of(const VkPhysicalDeviceProperties& p) {
  std::vector<unsigned char> h;
  auto u32 = [&](uint32_t v) {
    for (int i = 0; i < 4; ++i) h.push_back(static_cast<unsigned char>(v >> (8 * i)));
  };
  u32(32);
  u32(VK_PIPELINE_CACHE_HEADER_VERSION_ONE);
  u32(p.vendorID);
  u32(p.deviceID);
  h.insert(h.end(), p.pipelineCacheUUID, p.pipelineCacheUUID + VK_UUID_SIZE);
  return h;
}

}  // namespace

TEST_CASE("pipeline cache file names and headers identify the device and the driver") {
  const VkPhysicalDeviceProperties a = fake_device(0x10de, 0x2330), b = fake_device(0x1002, 0x73bf);
  CHECK(vk::pipeline_cache_file_name(a) == "pipelines-10de-2330-1234-0102030405060708090a0b0c0d0e0f10.bin");
  CHECK(vk::pipeline_cache_file_name(a) != vk::pipeline_cache_file_name(b));
  std::vector<unsigned char> h = header_of(a);
  CHECK(vk::pipeline_cache_header_matches(h, a));
  CHECK_FALSE(vk::pipeline_cache_header_matches(h, b));  // another GPU
  h.push_back(0x42);                                     // a body after the header is fine
  CHECK(vk::pipeline_cache_header_matches(h, a));
  std::vector<unsigned char> bad = header_of(a);
  bad[4] = 2;  // header version 2
  CHECK_FALSE(vk::pipeline_cache_header_matches(bad, a));
  bad = header_of(a);
  bad[20] ^= 0xff;  // another driver build (UUID)
  CHECK_FALSE(vk::pipeline_cache_header_matches(bad, a));
  bad = header_of(a);
  bad.resize(31);  // truncated
  CHECK_FALSE(vk::pipeline_cache_header_matches(bad, a));
  CHECK_FALSE(vk::pipeline_cache_header_matches({}, a));
}

TEST_CASE("the pipeline cache is saved, reloaded, and a bad file is ignored and replaced") {
  if (!test::vulkan_device_or_skip("the pipeline cache")) return;
  const test::ValidationWatch validation;
  const fs::path dir = scratch("pipelines");
  const vk::ContextOptions options{-1, true};
  fs::path file;
  {
    gpu::SharedDevice device(options, dir);
    CHECK(device.pipeline_cache_note.empty());
    CHECK(device.pipeline_cache.loaded_bytes() == 0);
    file = device.pipeline_cache_path;
    CHECK(file.parent_path() == dir);
    gpu::Kernels kernels(device.context, std::nullopt, core::Precision::FP32, device.pipeline_cache.handle());
    CHECK(device.save_pipeline_cache().empty());
    REQUIRE(fs::is_regular_file(file));
    CHECK(fs::file_size(file) >= 32);  // at least the header (lavapipe keeps no more than that)
    const auto written = fs::last_write_time(file);
    CHECK(device.save_pipeline_cache().empty());  // unchanged: nothing to write
    CHECK(fs::last_write_time(file) == written);
  }
  {
    gpu::SharedDevice again(options, dir);
    CHECK(again.pipeline_cache_note.empty());
    CHECK(again.pipeline_cache.loaded_bytes() == fs::file_size(file));
  }
  for (const std::string& bad : {std::string("not a pipeline cache at all, just text"), std::string(10, '\0')}) {
    std::ofstream(file, std::ios::binary | std::ios::trunc) << bad;
    gpu::SharedDevice device(options, dir);
    CHECK(device.pipeline_cache_note.find("ignored") != std::string::npos);
    CHECK(device.pipeline_cache.loaded_bytes() == 0);
    gpu::Kernels kernels(device.context, std::nullopt, core::Precision::FP32, device.pipeline_cache.handle());
    CHECK(device.save_pipeline_cache().empty());  // and the bad file is replaced by a good one
    gpu::SharedDevice reloaded(options, dir);
    CHECK(reloaded.pipeline_cache_note.empty());
    CHECK(reloaded.pipeline_cache.loaded_bytes() > 0);
  }
  fs::remove(file);
  fs::create_directory(file);  // a directory where the file should be: ignored, and saving says why it failed
  {
    gpu::SharedDevice device(options, dir);
    CHECK(device.pipeline_cache_note.find("ignored") != std::string::npos);
    gpu::Kernels kernels(device.context, std::nullopt, core::Precision::FP32, device.pipeline_cache.handle());
    CHECK_FALSE(device.save_pipeline_cache().empty());
  }
  // A symlink planted as the cache file (issue 25): neither read nor written through; the file it points to stays.
  fs::remove(file);
  const fs::path notes = dir / "notes.txt";
  { std::ofstream(notes) << "a teacher's notes"; }
  if (test::make_symlink(notes, file)) {
    {
      gpu::SharedDevice device(options, dir);
      CHECK(device.pipeline_cache_note.find("symlink") != std::string::npos);
      CHECK(device.pipeline_cache_note.rfind("pipeline cache " + file.string() + ": ", 0) == 0);
      CHECK(device.pipeline_cache_note.find("pipeline cache pipeline cache") == std::string::npos);
      // No kernels compiled: the cache's header alone is something to save (and compiling them again costs seconds).
      CHECK(device.save_pipeline_cache().find("it is a symlink") != std::string::npos);
    }
    std::ifstream in(notes);
    CHECK(std::string(std::istreambuf_iterator<char>(in), {}) == "a teacher's notes");
    CHECK(fs::is_symlink(file));
  }
  {
    gpu::SharedDevice memory_only(options, {});  // no folder: nothing on disk, no error
    CHECK(memory_only.pipeline_cache_path.empty());
    CHECK(memory_only.save_pipeline_cache().empty());
  }
  fs::remove_all(dir.parent_path());
}

TEST_CASE("trainers made from one DeviceCache share the device, the kernels and the dataset, and train the same") {
  if (!test::vulkan_device_or_skip("the device cache")) return;
  core::TrainConfig cfg = small_config();
  const core::DataSplit data = spiral(cfg);
  REQUIRE(data.content_id != 0);
  const auto init = core::init_parameters(core::model_shape(cfg, data), cfg.seed);
  const fs::path dir = scratch("shared");
  gpu::DeviceCache cache(dir);

  auto alone = gpu::make_trainer(cfg, data, init);  // no cache: everything its own
  const std::vector<float> expected = losses(*alone, data, cfg.seed, 6);
  alone.reset();

  auto first = gpu::make_trainer(cfg, data, init, &cache);
  CHECK(cache.counts().devices == 1);
  CHECK(cache.counts().kernel_sets == 1);
  CHECK(cache.counts().datasets == 1);
  CHECK(losses(*first, data, cfg.seed, 6) == expected);  // shared parts, the same arithmetic
  const core::TrainerState state = first->export_state();

  // A rebuild for another batch size: nothing is made again; the state carries over.
  core::TrainConfig bigger = cfg;
  bigger.batch = 64;
  auto second = gpu::make_trainer(bigger, data, state.params, &cache);
  second->import_state(state);
  CHECK(cache.counts().devices == 1);
  CHECK(cache.counts().kernel_sets == 1);
  CHECK(cache.counts().datasets == 1);
  CHECK(second->parameters() == first->parameters());
  CHECK(second->memory_usage().dataset == first->memory_usage().dataset);  // it holds the shared copy too
  CHECK(gpu::allocated_buffer_bytes(*second) == second->memory_usage().total());
  first.reset();  // the old trainer goes; the shared parts stay with the new one
  CHECK(losses(*second, data, cfg.seed, 2).size() == 2);

  // Another precision compiles its kernels once; other data (a new content id) is uploaded once.
  core::TrainConfig half = bigger;
  half.precision = core::Precision::BF16;
  auto third = gpu::make_trainer(half, data, init, &cache);
  CHECK(cache.counts().kernel_sets == 2);
  CHECK(cache.counts().datasets == 1);
  core::TrainConfig other = cfg;
  other.spiral_points = 200;
  const core::DataSplit other_data = spiral(other);
  second.reset();
  third.reset();
  auto fourth =
      gpu::make_trainer(other, other_data, core::init_parameters(core::model_shape(other, other_data), 1), &cache);
  CHECK(cache.counts().datasets == 2);
  CHECK(cache.counts().devices == 1);
  CHECK(losses(*fourth, other_data, other.seed, 2).size() == 2);
  // The kernels went through the pipeline cache, which was saved in the cache's folder.
  CHECK_FALSE(fs::is_empty(dir));
  fourth.reset();
  fs::remove_all(dir.parent_path());
}

TEST_CASE("the background compile's list holds every convolution variant, to be compiled after the other kernels") {
  if (!test::vulkan_device_or_skip("the background compile's list")) return;
  vk::Context ctx(vk::ContextOptions{-1, false});
  const gpu::Kernels kernels(ctx);
  const std::vector<const vk::ComputePipeline*> all = gpu::every_pipeline(kernels);
  // run::BackgroundCompile takes the list from its back: the first kernel of an MLP's step comes after every
  // convolution, so that a dashboard showing an MLP compiles its own kernels first.
  const auto gather = std::find(all.begin(), all.end(), &kernels.pipeline(core::Op::gather_batch));
  REQUIRE(gather != all.end());
  const gpu::GemmPath path = kernels.gemm_config().path;
  for (core::Op op : {core::Op::conv2d_forward, core::Op::conv2d_backward_data, core::Op::conv2d_backward_weight})
    for (bool vec4 : {false, true}) {
      if (vec4 && path != gpu::GemmPath::Texel) continue;
      CAPTURE(core::kernel_name(op));
      CAPTURE(vec4);
      const auto at =
          std::find(all.begin(), all.end(), &kernels.gemm_pipeline(op, gpu::GemmVariant{path, vec4, false}));
      CHECK(at < gather);
    }
}

namespace {

// The shared libraries mapped into this process (Linux's /proc/self/maps); empty where there is no such file.
std::set<std::string> mapped_libraries() {
  std::set<std::string> libs;
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    const size_t slash = line.find('/');
    if (slash != std::string::npos && line.find(".so", slash) != std::string::npos) libs.insert(line.substr(slash));
  }
  return libs;
}

}  // namespace

// The Vulkan loader unloads the driver when the last instance goes and loads it again for the next; NVIDIA's driver
// runs out of static TLS after 28 such reloads in one process (seen on an H200: every later context failed with
// VK_ERROR_INCOMPATIBLE_DRIVER). vk::create_instance keeps one instance for the whole process, so that after a context
// is destroyed nothing but validation layers is unloaded. Where /proc/self/maps is missing (Windows), nothing to see.
TEST_CASE("the Vulkan driver stays loaded after the last context is destroyed") {
  std::set<std::string> during;
  {
    const std::unique_ptr<vk::Context> ctx = test::make_context("the driver's lifetime");
    if (!ctx) return;
    during = mapped_libraries();
  }
  if (during.empty()) return;  // no /proc/self/maps
  const std::set<std::string> after = mapped_libraries();
  for (const std::string& lib : during) {
    if (lib.find("VkLayer") != std::string::npos) continue;  // layers belong to an instance and go with it
    INFO("unloaded when the context was destroyed: " << lib);
    CHECK(after.count(lib) == 1);
  }
}
