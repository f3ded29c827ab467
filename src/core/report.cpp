// Building report.json from the BackendRuns and writing it atomically (core/files).
#include "core/report.hpp"

#include <charconv>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "core/files.hpp"
#include "core/roofline.hpp"
#include "core/settings_schema.hpp"

namespace core {
namespace {

// A float as the double with the same shortest decimal form, so that 0.001f is written 0.001 and not
// 0.0010000000474974513.
double as_double(float value) {
  char text[32];
  auto [end, ec] = std::to_chars(text, text + sizeof text, value);
  if (ec != std::errc()) return value;
  *end = '\0';
  return std::strtod(text, nullptr);
}

}  // namespace

nlohmann::json config_json(const TrainConfig& c) {
  // Every setting of the schema under its key (core/settings_schema.hpp), then what no option sets.
  nlohmann::json j = nlohmann::json::object();
  for (const Setting& s : settings()) {
    const SettingValue v = s.get(c);
    if (s.type == SettingType::Real)  // stored as float: written in the float's shortest form (0.001, not 0.0010000000474)
      j[std::string(s.key)] = as_double(static_cast<float>(std::get<double>(v)));
    else
      std::visit([&](const auto& value) { j[std::string(s.key)] = value; }, v);
  }
  j["effective_weight_decay"] = as_double(c.effective_weight_decay());
  j["beta1"] = as_double(c.beta1);
  j["beta2"] = as_double(c.beta2);
  j["eps"] = as_double(c.eps);
  return j;
}

namespace {

nlohmann::json backend_json(const BackendRun& run) {
  nlohmann::json epochs = nlohmann::json::array();
  for (const auto& e : run.epochs)
    epochs.push_back({{"epoch", e.epoch},
                      {"train_loss", e.train_loss},
                      {"test_loss", e.test_loss},
                      {"test_accuracy", e.test_accuracy},
                      {"samples_per_s", e.samples_per_s},
                      {"seconds", e.seconds}});
  nlohmann::json losses = nlohmann::json::array();
  for (size_t i = 0; i < run.step_losses.size() && i < kReportStepLosses; ++i)
    losses.push_back(as_double(run.step_losses[i]));
  nlohmann::json kernels = nlohmann::json::array();
  for (const auto& k : run.kernels.rows())
    kernels.push_back({{"name", k.name},
                       {"calls", k.calls},
                       {"mean_ms", k.mean_ms},
                       {"gflops", k.gflops},
                       {"gbps", k.gbps},
                       {"pct_of_step", k.pct_of_step}});
  auto memory_json = [](const MemoryUsage& m) {
    return nlohmann::json{{"weights", m.weights},
                          {"master_weights", m.master_weights},
                          {"gradients", m.gradients},
                          {"optimizer_state", m.optimizer_state},
                          {"activations", m.activations},
                          {"attention_scores", m.attention_scores},
                          {"workspace", m.workspace},
                          {"dataset", m.dataset},
                          {"total", m.total()}};
  };
  nlohmann::json precisions = nlohmann::json::array();
  for (const auto& p : run.precisions)
    precisions.push_back({{"precision", to_string(p.precision)},
                          {"batch", p.batch},
                          {"steps", p.steps},
                          {"mean_step_ms", p.mean_step_ms()},
                          {"gbps", p.gbps()},
                          {"gflops", p.gflops()},
                          {"samples_per_s", p.samples_per_s()},
                          {"skipped_steps", p.skipped}});
  nlohmann::json markers = nlohmann::json::array();
  for (const auto& mk : run.markers)
    markers.push_back({{"step", mk.step}, {"seconds", mk.seconds}, {"label", mk.label}});
  nlohmann::json j = {{"name", run.name},
                      {"device", run.device},
                      {"precision", to_string(run.config.precision)},
                      {"epochs", epochs},
                      {"step_losses", losses},
                      {"kernels", kernels},
                      {"precisions", precisions},
                      {"skipped_steps", run.skipped_steps},
                      // null: unavailable, a device without timestamps has no kernel times
                      {"busy_share", run.kernels.untimed_steps() > 0 ? nlohmann::json(nullptr)
                                                                    : nlohmann::json(run.busy_share())},
                      {"loss_scale", run.loss_scale > 0 ? nlohmann::json(as_double(run.loss_scale))
                                                        : nlohmann::json(nullptr)},
                      {"markers", markers},
                      {"memory", memory_json(run.memory)},
                      {"memory_fp32", memory_json(run.memory_fp32)}};
  if (!run.error.empty()) j["error"] = run.error;
  return j;
}

nlohmann::json roofline_json(const BackendRun& run, const std::vector<BackendPeaks>& all) {
  const BackendPeaks* found = nullptr;
  for (const auto& b : all)
    if (b.backend == run.name) found = &b;
  const DevicePeaks* p = found && found->peaks ? &*found->peaks : nullptr;
  const RoofCeilings roof = p ? roof_ceilings(*p, run.config.threads) : RoofCeilings{};
  nlohmann::json kernels = nlohmann::json::array();
  for (const RooflinePoint& k : roofline_points(roof, run.kernels.rows()))
    kernels.push_back({{"name", k.kernel},
                       {"intensity", k.intensity},
                       {"gflops", k.gflops},
                       {"gbps", k.gbps},
                       {"bound", k.transfer ? "host-to-device transfer" : to_string(k.bound)},
                       {"roof_gflops", k.roof_gflops},
                       {"pct_of_roof", k.pct_of_roof}});
  return {{"backend", run.name},
          {"device", p ? p->device : run.device},
          {"software", p ? p->software : false},
          {"peaks", found ? found->source : std::string("not measured")},
          {"note", found ? found->note : std::string()},
          {"measured_at", p ? nlohmann::json(p->measured_at) : nlohmann::json(nullptr)},
          {"load_average", p ? nlohmann::json(p->load_average) : nlohmann::json(nullptr)},
          {"bandwidth_gbps", roof.bandwidth_gbps},
          {"bandwidth_from", roof.bandwidth_from},
          {"compute_gflops", roof.compute_gflops},
          {"compute_from", roof.compute_from},
          {"ridge_intensity", ridge_intensity(roof)},
          {"kernels", kernels}};
}

}  // namespace

nlohmann::json report_json(const TrainConfig& config, const std::vector<BackendRun>& runs, bool interrupted,
                           const std::vector<BackendPeaks>* peaks) {
  nlohmann::json backends = nlohmann::json::array();
  for (const auto& r : runs) backends.push_back(backend_json(r));
  const Speedup s = run_speedup(runs);
  nlohmann::json j = {{"config", config_json(config)},
                      {"backends", backends},
                      {"speedup", s.ok() ? nlohmann::json(s.value) : nlohmann::json(nullptr)},
                      {"interrupted", interrupted}};
  if (!s.ok()) j["speedup_reason"] = s.reason;
  if (peaks) {
    nlohmann::json roofline = nlohmann::json::array();
    for (const auto& r : runs) roofline.push_back(roofline_json(r, *peaks));
    j["roofline"] = roofline;
  }
  return j;
}

void write_report_json(const std::string& path, const TrainConfig& config, const std::vector<BackendRun>& runs,
                       bool interrupted, const std::vector<BackendPeaks>* peaks) {
  write_json_atomically(path, report_json(config, runs, interrupted, peaks));
}

void write_json_atomically(const std::string& path, const nlohmann::json& json) {
  write_file_atomically(path, json.dump(2) + "\n", "the report");
}

}  // namespace core
