// Whether a GPU training run fits a device's limits, from the sizes alone (see device_fit.hpp).
#include "gpu/device_fit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "core/input.hpp"
#include "core/kernel_table.hpp"
#include "core/model.hpp"
#include "core/step_plan.hpp"
#include "core/tensor_layout.hpp"

namespace gpu {

namespace {

// "4.32 GB", "188 MB", "512 bytes": decimal units, 3 significant digits (so that a size just past a limit does not
// read as the limit itself).
std::string size_text(double bytes) {
  if (bytes >= 1e9) return fmt::format("{:.3g} GB", bytes / 1e9);
  if (bytes >= 1e6) return fmt::format("{:.3g} MB", bytes / 1e6);
  if (bytes >= 1e3) return fmt::format("{:.3g} kB", bytes / 1e3);
  return fmt::format("{:.0f} bytes", bytes);
}

// "40.0 million", "2,400": a count of parameters.
std::string count_text(double n) {
  return n >= 1e6 ? fmt::format("{:.1f} million", n / 1e6) : fmt::format("{:.0f}", n);
}

bool per_sample(core::Role r) {
  using R = core::Role;
  return r == R::XBatch || r == R::YBatch || r == R::Losses || r == R::Correct || r == R::Act || r == R::Preact ||
         r == R::DAct;
}

bool parameter(core::Role r) {
  using R = core::Role;
  return r == R::Params || r == R::Weights16 || r == R::Grads || r == R::State1 || r == R::State2;
}

// "layer 1's activations (60000 x 18000 fp32)", "the fp32 master weights", ...: a tensor of the layout in words.
std::string tensor_words(const core::TensorDesc& t, const core::ModelShape& shape, long batch, core::Precision p) {
  using R = core::Role;
  const char* type = core::to_string(p);
  const std::string layer = t.layer >= 0 ? fmt::format("layer {}'s ", t.layer + 1) : std::string();
  const long width = t.layer >= 0 ? shape.fan_out(t.layer) : shape.inputs();
  switch (t.role) {
    case R::XBatch: return fmt::format("the batch input ({} x {} {})", batch, width, type);
    case R::Act: return fmt::format("{}activations ({} x {} {})", layer, batch, width, type);
    case R::Preact: return fmt::format("{}pre-activations ({} x {} {})", layer, batch, width, type);
    case R::DAct: return fmt::format("{}activation gradients ({} x {} {})", layer, batch, width, type);
    case R::Params: return "the fp32 master weights, which the optimizer binds whole";
    case R::Weights16: return fmt::format("the {} weights copy", type);
    case R::Grads: return fmt::format("the gradients ({})", type);
    case R::State1:
    case R::State2: return "the optimizer state (fp32)";
    case R::Order: return t.evaluation ? "the order of the test set" : "the sample order of an epoch";
    default: return t.name;
  }
}

// The largest single allocation the device makes (a buffer, and one allocation of memory), and the limit's name.
std::pair<double, const char*> most_buffer_of(const vk::DeviceLimits& l) {
  return {static_cast<double>(std::min(l.max_buffer_size, l.max_memory_allocation_size)),
          l.max_buffer_size <= l.max_memory_allocation_size ? "maxBufferSize" : "maxMemoryAllocationSize"};
}

std::string binding_range_problem(const core::TrainConfig& cfg, const core::RunPlan& run,
                                  const vk::DeviceInfo& device) {
  const vk::DeviceLimits& l = device.limits;
  const core::ModelShape& shape = run.shape;
  const std::string& name = device.name;
  const core::TensorLayout& layout = run.layout;
  const double B = cfg.batch, P = static_cast<double>(shape.param_count);
  // Every tensor a kernel binds whole, against maxStorageBufferRange, the largest first (it names what most needs
  // changing; of equal sizes a layer's activations, the term a teacher uses). The datasets' samples are bound in
  // chunks of rows (below).
  const double range = static_cast<double>(l.max_storage_buffer_range);
  std::vector<size_t> order(layout.tensors.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  const auto key = [&](size_t i) { return std::pair{layout.bytes(i), layout.tensors[i].role == core::Role::Act}; };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return key(a) > key(b); });
  for (size_t i : order) {
    const core::TensorDesc& t = layout.tensors[i];
    const double bytes = static_cast<double>(layout.bytes(i));
    if (t.role == core::Role::DataX || bytes <= range) continue;
    const std::string what = tensor_words(t, shape, cfg.batch, cfg.precision);
    const std::string limit = fmt::format("{} binds at most {} of a buffer (maxStorageBufferRange)", name,
                                          size_text(range));
    if (per_sample(t.role)) {
      // What makes a sample's tensor smaller (issue 34: "smaller --hidden sizes" for an input or a convolution): the
      // input only a smaller dataset row, a convolution's (or its pool's) fewer --conv channels, a dense layer's a
      // smaller --hidden size; labels, losses and per-sample counts nothing.
      const bool input = t.role == core::Role::XBatch || t.role == core::Role::YBatch ||
                         t.role == core::Role::Losses || t.role == core::Role::Correct;
      const bool conv = !input && t.layer >= 0 && shape.kind(t.layer) != core::LayerKind::Dense;
      const char* smaller = input ? "" : conv ? "fewer --conv channels" : "smaller --hidden sizes";
      const long most = static_cast<long>(range / (bytes / B));
      if (most >= 1)
        return fmt::format("--batch {} needs a {} buffer for {}; {}: use --batch <= {}{}{}", cfg.batch,
                           size_text(bytes), what, limit, most, input ? "" : ", or ", smaller);
      return input ? fmt::format("one sample needs {} for {}; {}: this device cannot take this dataset's samples; "
                                 "choose another --device",
                                 size_text(bytes / B), what, limit)
                   : fmt::format("one sample needs {} for {}; {}: use {}", size_text(bytes / B), what, limit, smaller);
    }
    if (parameter(t.role))
      return fmt::format("this model's {} parameters need a {} buffer for {}; {}: use smaller --hidden sizes{} (at "
                         "most about {} parameters)",
                         count_text(P), size_text(bytes), what, limit,
                         shape.is_cnn() ? " or fewer --conv channels" : "", count_text(range / (bytes / P)));
    return fmt::format("{} needs a {} buffer; {}: use --limit to train on fewer samples", what, size_text(bytes), limit);
  }

  return "";
}

std::string dataset_problem(const core::RunPlan& run, const vk::DeviceInfo& device) {
  const vk::DeviceLimits& l = device.limits;
  const core::ModelShape& shape = run.shape;
  const std::string& name = device.name;
  const auto [most_buffer, most_name] = most_buffer_of(l);
  // The datasets' samples: one buffer each (fp32), bound in chunks of rows, so only their size as one buffer and one
  // allocation is limited.
  const double row = shape.inputs() * 4.0;
  for (const auto& [set, count] : {std::pair{"training", run.sizes.train}, std::pair{"test", run.sizes.test}}) {
    const double bytes = static_cast<double>(count) * row;
    if (bytes > most_buffer && most_buffer < row)  // "use --limit <= 0" was the advice (issue 34)
      return fmt::format("one sample of the {} set ({} fp32 values, {}) is more than {} allocates at once ({} {}): "
                         "this device cannot hold this dataset; choose another --device",
                         set, shape.inputs(), size_text(row), name, most_name, size_text(most_buffer));
    if (bytes > most_buffer)
      return fmt::format("the {} set needs a {} buffer ({} samples x {} fp32 values); {} allocates at most {} at once "
                         "({}): use --limit <= {}",
                         set, size_text(bytes), count, shape.inputs(), name, size_text(most_buffer), most_name,
                         static_cast<long>(most_buffer / row));
  }

  return "";
}

std::string staging_problem(const core::TrainConfig& cfg, const core::RunPlan& run, const vk::DeviceInfo& device) {
  const vk::DeviceLimits& l = device.limits;
  const core::ModelShape& shape = run.shape;
  const std::string& name = device.name;
  const auto [most_buffer, most_name] = most_buffer_of(l);
  // --input host (pinned): the staging ring of --readback batches, one buffer the host writes (issue 34: refused
  // mid-run, advising --batch or --hidden). Its size is --readback x the batch's upload.
  if (cfg.input.host() && !cfg.input.pageable) {
    const double batch_bytes = static_cast<double>(core::batch_upload_bytes(cfg.batch, shape.inputs(), cfg.precision));
    const double ring = batch_bytes * cfg.readback_interval;
    if (ring > most_buffer) {
      const long most = static_cast<long>(most_buffer / batch_bytes);
      return most >= 1
                 ? fmt::format("--input host stages --readback {} batches at once, a {} buffer ({} x {} for "
                               "--batch {}); {} allocates at most {} at once ({}): use --readback <= {}, or --pageable "
                               "(one batch at a time)",
                               cfg.readback_interval, size_text(ring), cfg.readback_interval, size_text(batch_bytes),
                               cfg.batch, name, size_text(most_buffer), most_name, most)
                 : fmt::format("--input host stages batches of {} (--batch {}); {} allocates at most {} at once ({}): "
                               "use a smaller --batch",
                               size_text(batch_bytes), cfg.batch, name, size_text(most_buffer), most_name);
    }
  }

  return "";
}

std::string kernel_limits_problem(const core::TrainConfig& cfg, const core::RunPlan& run,
                                  const vk::DeviceInfo& device) {
  const vk::DeviceLimits& l = device.limits;
  const core::StepPlan& plan = run.plan;
  const char* type = core::to_string(cfg.precision);
  const std::string& name = device.name;
  // Storage buffers per kernel of this run's step (the spec guarantees only 4 per shader stage; a kernel here binds
  // up to 6).
  uint32_t most_bindings = 0;
  std::string widest_kernel;
  for (const core::PlanEntry& e : plan.entries) {
    const core::KernelDef& def = core::kernel_def(e.op);
    if (def.exists_in(cfg.precision) && def.binding_count(cfg.precision) > most_bindings) {
      most_bindings = def.binding_count(cfg.precision);
      widest_kernel = def.name;
    }
  }
  if (most_bindings > l.max_per_stage_storage_buffers)
    return fmt::format("{} binds {} storage buffers in {}; {} allows {} per shader stage "
                       "(maxPerStageDescriptorStorageBuffers): no setting changes that; choose another --device",
                       widest_kernel, most_bindings, type, name, l.max_per_stage_storage_buffers);

  // Push constants per kernel (Vulkan guarantees 128 bytes; no setting changes a kernel's).
  uint32_t most_push = 0;
  std::string push_kernel;
  for (const core::PlanEntry& e : plan.entries) {
    const core::KernelDef& def = core::kernel_def(e.op);
    if (def.exists_in(cfg.precision) && def.params_bytes > most_push)
      most_push = def.params_bytes, push_kernel = def.name;
  }
  if (most_push > l.max_push_constants_size)
    return fmt::format("{} takes {} bytes of push constants; {} allows {} (maxPushConstantsSize): no setting changes "
                       "that; choose another --device",
                       push_kernel, most_push, name, l.max_push_constants_size);

  return "";
}

std::string heap_problem(const core::RunPlan& run, const vk::DeviceInfo& device) {
  const vk::DeviceLimits& l = device.limits;
  const std::string& name = device.name;
  // Everything together against the device's memory.
  const core::MemoryUsage m = run.layout.usage(true);
  const double total = static_cast<double>(m.total());
  const double parameters = static_cast<double>(m.weights + m.master_weights + m.gradients + m.optimizer_state);
  if (l.device_local_heap > 0 && total > static_cast<double>(l.device_local_heap))
    return fmt::format("this run needs {} of GPU memory (activations {}, parameters with their gradients and optimizer "
                       "state {}, the datasets {}); the largest memory heap of {} holds {}: use a smaller --batch or "
                       "smaller --hidden sizes",
                       size_text(total), size_text(static_cast<double>(m.activations)), size_text(parameters),
                       size_text(static_cast<double>(m.dataset)), name,
                       size_text(static_cast<double>(l.device_local_heap)));
  return "";
}

}  // namespace

std::string device_fit_problem(const core::TrainConfig& cfg, const core::DataSplit& data,
                               const vk::DeviceInfo& device) {
  return device_fit_problem(cfg, core::run_plan(cfg, data), device);
}

std::string device_fit_problem(const core::TrainConfig& cfg, const core::RunPlan& run, const vk::DeviceInfo& device) {
  // The layout the GPU trainer allocates (core::RunPlan), without split-K's partials (chosen per device later; at
  // most a few MB: choose_split_k keeps them near 2 x the workgroups the device runs at once). The first problem
  // found is the one said.
  for (const std::string& problem : {binding_range_problem(cfg, run, device), dataset_problem(run, device),
                                     staging_problem(cfg, run, device), kernel_limits_problem(cfg, run, device),
                                     heap_problem(run, device)})
    if (!problem.empty()) return problem;
  return "";
}

}  // namespace gpu
