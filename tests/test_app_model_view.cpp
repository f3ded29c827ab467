// What the model sees (issue 32, part 7): the Model tab's labels against an independent computation. A live session
// trains a small CNN on Fashion-MNIST on each backend; from a snapshot, the test recomputes the class of each shown
// test image with the whole-step reference's forward pass in double (cpu::reference, not the backends' kernels) from
// the parameters the snapshot says the predictions were made with, and checks the backend's predictions, the Model
// tab's labels drawn from that snapshot, the true labels against the test set, and the filters against the first
// layer's weights. TRAINSCOPE_KEEP_PNG_DIR keeps the pictures.
#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "core/model_view.hpp"
#include "cpu/train_step.hpp"
#include "cpu/trainer.hpp"
#include "dashboard_test_util.hpp"
#include "eventually.hpp"
#include "gpu/trainer.hpp"
#include "run/data.hpp"
#include "run/session.hpp"
#include "ui/dashboard.hpp"

namespace {

core::TrainConfig cnn_config() {
  core::TrainConfig cfg;
  cfg.dataset = "fashion-mnist";
  cfg.model = core::ModelKind::CNN;
  cfg.conv = {4, 8};
  cfg.hidden = {16};
  cfg.limit = 512;
  cfg.batch = 32;
  cfg.epochs = 1000;  // until stopped
  cfg.lr = 0.005f;
  return cfg;
}

}  // namespace

TEST_CASE("the Model tab's predictions equal the reference forward pass on the snapshot's own weights") {
  const core::TrainConfig cfg = cnn_config();
  auto data = std::make_shared<const core::DataSplit>(run::load_data(cfg));
  const core::ModelShape shape = core::model_shape(cfg, *data);
  std::vector<std::pair<std::string, run::TrainerFactory>> backends = {{"cpu", cpu::make_trainer}};
  if (test::vulkan_device_or_skip("the GPU backend's view"))
    backends.push_back({"gpu", [](const core::TrainConfig& c, const core::DataSplit& d, const std::vector<float>& p) {
                          return gpu::make_trainer(c, d, p);
                        }});
  auto renderer = test::make_renderer(1280, 720);
  for (const auto& [name, factory] : backends) {
    CAPTURE(name);
    run::Observer observer;
    run::Session session(cfg, data, {run::BackendSpec{name, factory}}, observer, run::SessionOptions{true});
    session.start();
    // A view predicted after some training (the weights no longer the initial ones), then a later one: two chances
    // for the predictions and the parameters to disagree, were they read at different times.
    core::BackendRun run;
    for (long after : {5L, 40L}) {
      REQUIRE(test::eventually([&] {
        run = session.snapshot().at(0);
        return run.model_view && run.model_view->step >= after;
      }));
      const core::ModelView& v = *run.model_view;
      REQUIRE(v.count() == core::kModelViewImages);
      REQUIRE(v.params);
      REQUIRE(v.predicted.size() == static_cast<size_t>(v.count()));
      // The images and true labels are the test set's rows, one class after another.
      std::vector<uint32_t> rows;
      for (int i = 0; i < v.count(); ++i) {
        const int r = v.rows[static_cast<size_t>(i)];
        rows.push_back(static_cast<uint32_t>(r));
        CHECK(v.labels[static_cast<size_t>(i)] == data->test.y[static_cast<size_t>(r)]);
        CHECK(v.labels[static_cast<size_t>(i)] == i % 10);
        CHECK(std::equal(data->test.row(r), data->test.row(r) + data->test.features,
                         v.images.begin() + static_cast<long>(i) * data->test.features));
      }
      // The reference's logits from the snapshot's parameters: its first maximum is the class. A near tie (a margin
      // under 1e-4 of the logits' scale, where float and double may rank two classes differently) is not judged.
      const auto state = cpu::reference::initial_state(cfg, *v.params);
      const std::vector<double> logits = cpu::reference::logits(cfg, shape, data->test, rows, state);
      const int K = shape.classes();
      int judged = 0;
      for (int i = 0; i < v.count(); ++i) {
        const double* z = logits.data() + static_cast<size_t>(i) * K;
        const int best = static_cast<int>(std::max_element(z, z + K) - z);
        double second = -1e300;
        for (int k = 0; k < K; ++k)
          if (k != best) second = std::max(second, z[k]);
        if (z[best] - second < 1e-4 * std::max(1.0, std::abs(z[best]))) continue;
        ++judged;
        CAPTURE(i);
        CHECK(v.predicted[static_cast<size_t>(i)] == best);
      }
      CHECK(judged >= v.count() - 2);
      // The filters: the first convolution's weights, which come first in the parameters.
      CHECK(v.filters == 4);
      CHECK(v.filter_channels == 1);
      REQUIRE(v.filter_weights.size() == 4u * 9u);
      CHECK(std::equal(v.filter_weights.begin(), v.filter_weights.end(), v.params->begin()));
    }
    session.request_stop();
    session.wait();
    // The Model tab drawn from that snapshot: the labels it shows are the classes judged above, by name.
    if (!renderer) continue;
    ui::DashboardModel model;
    ui::DashboardView view;
    view.runs = {run};
    model.update(view.runs);
    view.model = &model;
    view.config = cfg;
    ui::Dashboard dashboard;
    dashboard.show(ui::Tab::Model);
    const ui::Image img = renderer->render([&] { dashboard.draw(view, nullptr); }, 3);
    test::keep_png(img, "model_view_" + name + ".png");
    const ui::ModelPanel::Drawn& d = dashboard.model.drawn();
    CHECK(d.backend == name);
    const core::ModelView& v = *run.model_view;
    const std::vector<std::string> names = core::class_names(data->test);
    REQUIRE(d.predicted.size() == static_cast<size_t>(v.count()));
    REQUIRE(d.truth.size() == static_cast<size_t>(v.count()));
    for (int i = 0; i < v.count(); ++i) {
      CHECK(d.predicted[static_cast<size_t>(i)] == names[static_cast<size_t>(v.predicted[static_cast<size_t>(i)])]);
      CHECK(d.truth[static_cast<size_t>(i)] == names[static_cast<size_t>(data->test.y[static_cast<size_t>(v.rows[static_cast<size_t>(i)])])]);
    }
    CHECK(d.filters == 4);
  }
}

TEST_CASE("model_view_rows: one of each class in turn; Fashion-MNIST's class names; nothing for data without images") {
  core::Dataset d;
  d.name = "fashion-mnist";
  d.classes = 10;
  d.height = d.width = 2, d.channels = 1, d.features = 4;
  for (int i = 0; i < 40; ++i) d.y.push_back((i * 7) % 10);  // classes in a scrambled order, 4 of each
  d.count = 40;
  d.x.assign(160, 0.5f);
  const std::vector<int> rows = core::model_view_rows(d, 16);
  REQUIRE(rows.size() == 16);
  for (size_t i = 0; i < rows.size(); ++i) CHECK(d.y[static_cast<size_t>(rows[i])] == static_cast<int>(i % 10));
  CHECK(rows[10] > rows[0]);  // the second of class 0 after the first
  CHECK(core::class_names(d).at(9) == "Ankle boot");
  d.name = "mnist-format (x)";
  CHECK(core::class_names(d).at(9) == "9");
  d.height = 0;
  CHECK(core::model_view_rows(d, 16).empty());
}
