// The names of the host phases of the step timeline, and the evaluation's result from its per-row outputs.
#include "core/trainer.hpp"

#include <algorithm>

namespace core {

const char* to_string(HostPhase phase) {
  switch (phase) {
    case HostPhase::Record: return "record";
    case HostPhase::Submit: return "submit";
    case HostPhase::FenceWait: return "fence wait";
    case HostPhase::ReadBack: return "read-back";
    case HostPhase::LoaderWait: return "loader wait";
    case HostPhase::Upload: return "upload";
  }
  return "?";
}

EvalResult evaluation_result(const Dataset& test, std::span<const float> losses, std::span<const int32_t> correct) {
  const size_t N = static_cast<size_t>(test.count);
  if (N == 0) return {};
  const size_t T = test.tokens() ? static_cast<size_t>(test.features) : 1;
  // A task that counts a part of each sequence (the answer) is right when all of that part is; text, whose every
  // position counts, position by position.
  const bool whole_answers = test.tokens() && size_t(test.counted) < T;
  double loss = 0, right = 0, counted = 0;
  for (size_t i = 0; i < N; ++i) {
    bool all = true;
    for (size_t t = i * T; t < (i + 1) * T; ++t) {
      if (test.tokens() && test.y[t] < 0) continue;  // a position whose target does not count
      loss += losses[t];
      counted += 1;
      all = all && correct[t] != 0;
      if (!whole_answers) right += correct[t];
    }
    if (whole_answers) right += all ? 1 : 0;
  }
  return {counted > 0 ? loss / counted : 0.0, right / (whole_answers ? static_cast<double>(N) : counted)};
}

std::vector<int32_t> generate_greedy(Trainer& trainer, std::vector<float> x, int rows, int positions, int prompt) {
  const size_t T = static_cast<size_t>(positions), R = static_cast<size_t>(rows);
  for (size_t p = static_cast<size_t>(std::max(prompt, 1)) - 1; p + 1 < T; ++p) {
    const std::vector<int32_t> next = trainer.predict(x, R);
    if (next.size() != R * T) return {};  // this trainer cannot predict
    for (size_t r = 0; r < R; ++r) x[r * T + p + 1] = static_cast<float>(next[r * T + p]);
  }
  return std::vector<int32_t>(x.begin(), x.end());
}

}  // namespace core
