// The median of repeats, a peak of repeats and the load average (measure.hpp).
#include "core/measure.hpp"

#include <algorithm>
#include <ctime>

#include "platform/system.hpp"

namespace core {

double median(std::vector<double> samples) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  return n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
}

double peak_of_repeats(const std::vector<double>& samples, bool higher_is_better) {
  if (samples.empty()) return 0;
  return higher_is_better ? *std::max_element(samples.begin(), samples.end()) : median(samples);
}

double load_average() { return platform::load_average(); }

std::string local_time_text() {
  const std::time_t now = std::time(nullptr);
  const std::tm tm = platform::local_time(now);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &tm);
  return text;
}

}  // namespace core
