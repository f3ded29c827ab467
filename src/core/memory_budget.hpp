// The host memory budget: what a command will hold in the machine's memory at its peak — both trainers, a software
// GPU's device memory (which is host memory), dataset copies, GEMM operands, STREAM arrays — worked out from the
// sizes alone and checked against what the machine has available before anything is allocated, so that an absurd
// model, batch, STREAM size or dataset is refused in one line with the figures and what to change, instead of the
// kernel's OOM killer ending the process minutes later. train, dashboard, sweep, bench, peaks, lessons and the live
// changes of the dashboard all check through check_host_memory. (The device side, a real GPU's heaps and
// allocation limits, is checked beside it by the GPU layer.)
#pragma once
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/config.hpp"
#include "core/dataset.hpp"

namespace core {

// What one command will hold at its peak, part by part, in bytes.
struct MemoryNeed {
  struct Part {
    std::string what;  // "CPU trainer", "GPU trainer (software Vulkan: host memory)", "STREAM arrays"
    double bytes = 0;
  };
  std::vector<Part> parts;

  MemoryNeed& add(std::string what, double bytes);
  double total() const;
  // "CPU trainer: 3.2 GiB, GPU trainer (software Vulkan: its device memory is host memory): 3.2 GiB"
  std::string describe() const;
};

// What this process may still allocate, and what sets that figure.
struct HostMemory {
  double available = 0;  // bytes; the smallest of the figures that could be read (+infinity when none could)
  std::string source;    // "MemAvailable in /proc/meminfo", "the memory cgroup /a/b (limit 3.0 GiB, 0.4 GiB in
                         // use)", "TRAINSCOPE_MEMORY_LIMIT=3G"
  bool address_space = false;  // `available` is set by the address-space limit, which counts mappings, not pages
};

// The memory available to this process: the smallest of MemAvailable (/proc/meminfo), each memory cgroup's limit
// above it minus its use without reclaimable page cache (cgroup v2 memory.max - (memory.current - inactive_file),
// v1 memory.limit_in_bytes - (memory.usage_in_bytes - total_inactive_file), every level up to the root), and
// the address-space limit (ulimit -v, RLIMIT_AS) less what the process maps already (VmSize in /proc/self/status), and
// TRAINSCOPE_MEMORY_LIMIT (a size such as 3G, 512M, 3GiB or bytes: "trainscope may use at most this much"; a value
// that does not parse is warned about on stderr once and ignored). `root` prefixes /proc and /sys/fs/cgroup (tests
// point it at a folder of the same layout, with `address_space_limit` in bytes standing in for the process's limit,
// -1: none); the environment override and the real limit are read only for the real root "".
HostMemory host_memory(const std::string& root = "", double address_space_limit = -1);

// "3G" -> 3 GiB; "512M", "3GiB", "1.5G", "4096" (bytes). Returns a negative number when `text` is not a size.
double parse_memory_size(std::string_view text);

// "6.4 GiB", "512 MiB": bytes for people (binary units, as the kernel and free(1) count them).
std::string memory_text(double bytes);
// memory_text of two figures that are not equal, with as many digits as it takes for them to read differently
// ("2.13 GiB", "2.12 GiB"; bytes at the last).
std::pair<std::string, std::string> distinct_memory_texts(double a, double b);

// Refuses `need` when its total is more than `host.available` minus a margin for the program itself and its
// libraries (kProgramBytes). Throws core::Error(InvalidArgument), one line:
// "<subject>: needs 6.4 GiB of host memory (CPU trainer: 3.2 GiB, ...), but 2.5 GiB is available (the memory
// cgroup ..., less 256 MiB for trainscope itself); <todo>" — the command line's exit code 2.
void check_host_memory(const MemoryNeed& need, std::string_view subject, std::string_view todo, const HostMemory& host);
void check_host_memory(const MemoryNeed& need, std::string_view subject, std::string_view todo);  // host_memory()

// What to say when std::bad_alloc escapes the checks (an allocation the budget did not foresee, or memory taken by
// others meanwhile): "out of memory <doing>: an allocation failed that the memory check did not foresee (what bounds
// it: ...); use smaller --batch or --hidden sizes, ..." rather than "std::bad_alloc". Never throws.
std::string out_of_memory_text(std::string_view doing);

// Kept free for trainscope itself, its libraries and (with a GPU backend) the Vulkan driver and shader compiler:
// measured at 8 MiB (CPU only) to 143 MiB (lavapipe) of peak RSS for the tiny spiral runs; rounded up.
inline constexpr double kProgramBytes = 256.0 * (1 << 20);

// What a software Vulkan driver maps beyond kProgramBytes under an address-space limit (ulimit -v), which counts
// mappings rather than used pages. lavapipe, mapped at the check about 209 MiB: a CNN at batch 256 (about 140 MiB of
// tensors) segfaulted under 879 MiB and ran under 977 MiB, ~630 MiB above both; at batch 1024 (539 MiB) ~400 MiB.
// With kProgramBytes: 768 MiB, above the worst seen.
inline constexpr double kDriverAddressSpaceBytes = 512.0 * (1 << 20);

// A trainer that will be built, and whether what it allocates is host memory: always for the CPU; for the GPU on a
// software Vulkan device (lavapipe: its "device memory" is this machine's memory), never on a real GPU, whose
// device memory the GPU layer checks against the device's heaps.
struct NewTrainer {
  std::string backend;  // "cpu" | "gpu"
  bool on_host = true;
};

// The host memory of the trainers `trainers` for `c` on `data` (data itself is already held by the caller and not
// counted again). Per trainer, from the shapes alone (core::tensor_layout in fp32; no allocation):
//   cpu: weights, gradients, optimizer state, activations and workspace at fp32 (16-bit storage holds less, except
//        its fp32 arena for the widened operands: + the largest GEMM's operands at 4 bytes), the packed copy of the
//        largest GEMM's B operand that the calling thread keeps (cpu/gemm.hpp), and 2 MiB of packed A per thread;
//   gpu on the host: the same fp32 figure with the trainer's own copy of the dataset (device memory = host memory),
//        + 1 MiB for its small buffers (placeholders, staging, queries).
//   gpu on a real GPU: nothing here (its staging buffers are small).
MemoryNeed training_memory_need(const TrainConfig& c, const DataSplit& data, const std::vector<NewTrainer>& trainers);

// The trainers of c.backends, the GPU's on the host when `gpu_on_host`.
std::vector<NewTrainer> new_trainers(const TrainConfig& c, bool gpu_on_host);

// check_host_memory(training_memory_need(c, data, trainers)) with the training's subject and advice: what train,
// the dashboard (its start, Reset and live changes, lessons included) and each sweep point run before building
// trainers. Throws core::Error(InvalidArgument) "--hidden/--batch: this run needs ...; use smaller ...".
void check_training_memory(const TrainConfig& c, const DataSplit& data, const std::vector<NewTrainer>& trainers,
                           const HostMemory& host, const MemoryNeed& extra = {});
// With `extra`: what else the command holds beside the trainers (the dashboard's window and its screenshots).
void check_training_memory(const TrainConfig& c, const DataSplit& data, const std::vector<NewTrainer>& trainers,
                           const MemoryNeed& extra = {});

// A picture of width x height pixels rendered and saved as PNG: about four copies of its RGBA pixels (the rendered
// image, its read-back, the PNG's rows and the encoder's), counted as 4.5 x 4 bytes x width x height: measured
// 1.06 GB of peak RSS above a train run at 8192x8192 (256 MiB a copy), 255 MB at 4096x4096.
MemoryNeed picture_memory_need(int width, int height, std::string_view what);

}  // namespace core
