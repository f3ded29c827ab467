// The rules of trainscope's numeric settings, in one place: the command line (CLI11 validators in app/), the
// dashboard's controls (core::validate of a pending TrainConfig, run::Worker for live commands) and lesson scripts
// all check a value with these functions, so a value refused in one place is refused everywhere with the same
// message. Text is parsed strictly (std::from_chars: no saturation, no trailing characters, no NaN or infinity where
// a finite number is needed) and an empty value is named as empty.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace core {

// A whole-number setting: allowed values min..max. `what` is the noun used in messages ("the batch size");
// `note` an optional remark appended in parentheses ("0: all hardware threads").
struct IntRule {
  std::string_view option;  // "--batch"
  std::string_view what;
  long long min, max;
  std::string_view note = {};
};

// A real-valued setting: finite, within [min, max], with either end open (excluded) where said. A max of
// kUnbounded means "any finite float" (the settings are stored as float).
inline constexpr double kUnbounded = 3.4028234663852886e38;  // FLT_MAX
struct RealRule {
  std::string_view option;
  std::string_view what;
  double min, max;
  bool min_open = false, max_open = false;
  std::string_view note = {};
};

namespace rules {
// Data
inline constexpr IntRule limit{"--limit", "the number of training samples", 0, 2147483647, "0: all"};
inline constexpr IntRule spiral_classes{"--spiral-classes", "the number of spiral arms", 2, 16};
inline constexpr IntRule spiral_points{"--spiral-points", "the points per spiral arm", 4, 1000000};
inline constexpr RealRule spiral_noise{"--spiral-noise", "the spiral's noise", 0, 1};
// Model
inline constexpr IntRule hidden{"--hidden", "each hidden layer size", 1, 65536};
inline constexpr IntRule conv{"--conv", "each convolution's output channels", 1, 1024};
inline constexpr IntRule layers{"--layers", "the transformer's blocks", 1, 64};
inline constexpr IntRule heads{"--heads", "the attention heads", 1, 256};
inline constexpr IntRule embed{"--embed", "the transformer's width", 1, 16384};
inline constexpr IntRule context{"--context", "the sequence length", 2, 4096};
// Optimisation
inline constexpr RealRule lr{"--lr", "the learning rate", 0, 10, true, false};
inline constexpr RealRule momentum{"--momentum", "SGD momentum", 0, 1, false, true};
inline constexpr RealRule weight_decay{"--weight-decay", "the decoupled weight decay", 0, 1};
inline constexpr RealRule loss_scale{"--loss-scale", "the initial fp16 loss scale", 1, kUnbounded, false, false,
                                     "default 65536"};
inline constexpr IntRule batch{"--batch", "the batch size", 1, 65536};
inline constexpr IntRule epochs{"--epochs", "the number of epochs", 1, 10000};
// Execution
inline constexpr IntRule threads{"--threads", "the number of CPU threads", 0, 1024, "0: all hardware threads"};
inline constexpr IntRule device{"--device", "the Vulkan device index", -1, 1023, "-1: the best device"};
inline constexpr IntRule loader_threads{"--loader-threads", "the number of loader threads", 1, 64};
inline constexpr IntRule prefetch{"--prefetch", "the batches prefetched", 0, 64, "0: each batch assembled when needed"};
inline constexpr IntRule readback{"--readback", "the read-back interval in steps", 1, 1000};
// Display (dashboard)
inline constexpr RealRule font_size{"--font-size", "the font size in pixels", 10, 48};  // --font-size 0: remembered
// Whole frames per second: a cap under 1 would leave the window seconds between frames (closing it included).
inline constexpr IntRule max_fps{"--max-fps", "the frame-rate cap in frames per second", 0, 1000, "0: no cap"};
inline constexpr IntRule frames{"--frames", "the number of frames", 0, 100000000, "0: until the window is closed"};
}  // namespace rules

// "1..65536", "a number > 0 and <= 10", "in [0, 1)", "a finite number >= 0": the allowed values in words.
std::string allowed(const IntRule& rule);
std::string allowed(const RealRule& rule);

// Throws core::Error(InvalidArgument) "--batch 0: the batch size must be 1..65536" unless `value` is allowed.
void check(const IntRule& rule, long long value);
void check(const RealRule& rule, double value);  // NaN and infinities are never allowed

// Parses `text` strictly and checks it. Throws core::Error(InvalidArgument) naming the option and the value:
// empty ("--batch: the value is empty; the batch size must be 1..65536"), not a number, too large or too small for
// any integer (never saturated), not finite, or out of range.
long long parse_int(std::string_view text, const IntRule& rule);
double parse_real(std::string_view text, const RealRule& rule);

// The seed: any whole number 0..2^64-1, parsed without saturation ("--seed 18446744073709551616: too large ...").
uint64_t parse_seed(std::string_view text);

// A window or picture size "WIDTHxHEIGHT" in pixels, each 64..16384 (--size, a lesson's window.size): true and the
// two numbers, or false. kSizeRule is what to say when it is false.
bool parse_window_size(std::string_view text, int& width, int& height);
inline constexpr const char* kSizeRule = "give WIDTHxHEIGHT in pixels, each 64..16384, e.g. 1600x900";

}  // namespace core
