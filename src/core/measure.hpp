// Helpers every measurement of trainscope shares (the peaks, the bench, the FMA probe): the median of repeats, and
// the machine's load average, which a figure measured on a busy machine is reported with.
#pragma once
#include <string>
#include <vector>

namespace core {

// The median of `samples` (the mean of the two middle ones for an even count); 0 when empty.
double median(std::vector<double> samples);

// The 1-minute load average (/proc/loadavg), or -1 where it cannot be read.
double load_average();

// The local time now, "2026-11-20 14:03:11" (when a figure was measured).
std::string local_time_text();

}  // namespace core
