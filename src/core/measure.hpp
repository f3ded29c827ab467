// Helpers every measurement of trainscope shares (the peaks, the bench, the FMA probe): the median of repeats, a
// peak's value of its repeats, and the machine's load average, which a figure measured on a busy machine is reported
// with.
#pragma once
#include <string>
#include <vector>

namespace core {

// The median of `samples` (the mean of the two middle ones for an even count); 0 when empty.
double median(std::vector<double> samples);

// A peak's value from its repeats: the best for a rate (`higher_is_better`: GB/s, GFLOP/s), the median for a cost (a
// round trip's microseconds). Other work on the machine, an interrupt, a CPU's clock or a hypervisor that deschedules
// the probe only ever slow a repeat down, so the fastest repeat of a throughput probe is the closest to what the
// hardware does; STREAM reports its best rate for the same reason (McCalpin, stream.c). A cost is what a typical call
// pays. On a 16-core VM the median of 5 FMA repeats (67-81 GFLOP/s) sat below what a GEMM then ran at, 108% of the
// "peak" (2026-11-29). 0 when empty.
double peak_of_repeats(const std::vector<double>& samples, bool higher_is_better);

// The 1-minute load average (/proc/loadavg), or -1 where it cannot be read.
double load_average();

// The local time now, "2026-11-20 14:03:11" (when a figure was measured).
std::string local_time_text();

}  // namespace core
