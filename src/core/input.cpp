// The input pipeline's settings in words and the assembly of a batch's rows on the host (core/input.hpp).
#include "core/input.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstring>

#include "core/error.hpp"
#include "core/half.hpp"
#include "core/rng.hpp"

namespace core {

const char* to_string(InputSource s) { return s == InputSource::Host ? "host" : "device"; }

std::string to_string(const InputPipeline& p) {
  if (!p.host()) return "device-resident";
  return fmt::format("host{}, {} loader thread{}, prefetch {}, {}", p.augment ? ", augment" : "", p.loader_threads,
                     p.loader_threads == 1 ? "" : "s", p.prefetch, p.pageable ? "pageable" : "pinned");
}

namespace {
// The side of a square single-channel image of `features` pixels, or 0.
int image_side(int features) {
  const int side = static_cast<int>(std::lround(std::sqrt(static_cast<double>(features))));
  return side > 0 && side * side == features ? side : 0;
}
}  // namespace

std::string augment_problem(const Dataset& data) {
  const int side = image_side(data.features);
  if (side >= 2 * kAugmentPadding) return {};
  return fmt::format("--augment: random crop and flip need square images of at least {}x{} pixels; {} has {} "
                     "features per sample; drop --augment or use --dataset fashion-mnist",
                     2 * kAugmentPadding, 2 * kAugmentPadding, data.name.empty() ? "this dataset" : data.name,
                     data.features);
}

size_t batch_upload_bytes(long batch, long features, Precision precision) {
  return static_cast<size_t>(batch) * static_cast<size_t>(features) * storage_bytes(precision) +
         static_cast<size_t>(batch) * sizeof(int32_t);
}

void assemble_rows(const Dataset& train, std::span<const uint32_t> order, size_t first, size_t r0, size_t r1,
                   bool augment, uint64_t seed, Precision precision, std::byte* x, int32_t* y) {
  const size_t C = static_cast<size_t>(train.features);
  if (first + r1 > order.size()) throw Error(ErrorKind::Internal, "assemble_rows: batch past the end of the order");
  const int side = augment ? image_side(train.features) : 0;
  if (augment && side < 2 * kAugmentPadding) throw Error(ErrorKind::InvalidArgument, augment_problem(train));
  std::vector<float> row(C);
  for (size_t r = r0; r < r1; ++r) {
    const size_t position = first + r;
    const uint32_t sample = order[position];
    if (sample >= static_cast<uint32_t>(train.count))
      throw Error(ErrorKind::Internal, "assemble_rows: a sample index past the training set");
    const float* src = train.row(static_cast<int>(sample));
    const float* out = src;
    if (augment) {
      // The crop's offset in the zero-padded image (0..2 x padding, each way) and the flip, drawn in this order.
      Pcg32 rng(seed, (static_cast<uint64_t>(position) << 32) | sample);
      const int dy = static_cast<int>(rng.below(2 * kAugmentPadding + 1)) - kAugmentPadding;
      const int dx = static_cast<int>(rng.below(2 * kAugmentPadding + 1)) - kAugmentPadding;
      const bool flip = rng.below(2) == 1;
      // Output pixel (i, j) is padded-image pixel (i + dy, j' + dx) of the original, j' = j or side-1-j when flipped
      // (the flip applies to the cropped image, as torchvision applies RandomHorizontalFlip after RandomCrop).
      for (int i = 0; i < side; ++i)
        for (int j = 0; j < side; ++j) {
          const int jj = flip ? side - 1 - j : j;
          const int si = i + dy, sj = jj + dx;
          const bool inside = si >= 0 && si < side && sj >= 0 && sj < side;
          row[static_cast<size_t>(i * side + j)] = inside ? src[si * side + sj] : 0.0f;
        }
      out = row.data();
    }
    switch (precision) {
      case Precision::FP32:
        std::memcpy(x + r * C * sizeof(float), out, C * sizeof(float));
        break;
      case Precision::FP16:
      case Precision::BF16: {
        auto* dst = reinterpret_cast<uint16_t*>(x) + r * C;
        for (size_t c = 0; c < C; ++c)
          dst[c] = precision == Precision::FP16 ? float_to_fp16(out[c]) : float_to_bf16(out[c]);
        break;
      }
    }
    y[r] = train.y[sample];
  }
}

}  // namespace core
