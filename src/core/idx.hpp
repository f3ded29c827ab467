// The low-level IDX reader (the MNIST file format of LeCun et al.): one images file or one labels file, plain or
// gzip-compressed, turned into floats / int32 labels. Every kind of bad input becomes one core::Error(Data) whose
// message starts with the file's path and names the field at fault; nothing larger than the file can hold is
// allocated from a corrupt header.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace core {

// The largest payload (bytes after the header) the reader accepts: far above Fashion-MNIST's 47 MB, far below
// what a corrupt header could claim (4 GiB^3).
inline constexpr uint64_t kMaxIdxPayloadBytes = uint64_t{1} << 30;

// pixels is (count, rows*cols) row-major, each value byte/255 in [0, 1].
struct IdxImages {
  int declared_count = 0;  // the header's image count
  int count = 0;           // the images read: declared_count, or fewer when a max_count asked for fewer
  int rows = 0;
  int cols = 0;
  std::vector<float> pixels;
};

struct IdxLabels {
  int declared_count = 0;       // the header's label count
  std::vector<int32_t> values;  // the labels read (declared_count, or fewer when a max_count asked for fewer)
};

// The dimensions an IDX images (images: true) or labels file declares in its header (count first; images: count,
// rows, cols), read without the payload: what reading it whole would allocate, known before it is read. Throws
// core::Error(Data) as the readers below do for a bad header.
std::vector<uint32_t> read_idx_dims(const std::string& path, bool images);

// An IDX images file: magic 0x00000803 (unsigned byte, 3 dims), big-endian dims count, rows, cols, then the pixels.
// max_count > 0 reads only the first max_count images (--limit): a gzip file is then inflated only as far as they
// need, never to the size its header declares (a 1 MB "gzip bomb" can declare 1 GiB); a plain file's length is still
// checked against the header. Without it, nothing beyond the header's size is inflated: one more byte is refused as
// trailing data. Throws core::Error(Data) "<path>: <what is wrong>".
IdxImages read_idx_images(const std::string& path, uint64_t max_count = 0);

// An IDX labels file: magic 0x00000801 (unsigned byte, 1 dim), big-endian count, then one byte per label.
// Labels must lie in [0, max_classes); max_classes in [1, 256] (InvalidArgument otherwise). max_count as above.
// Throws core::Error(Data) "<path>: <what is wrong>", e.g. "label 12 at index 345 is above 9 (labels must be 0..9)".
IdxLabels read_idx_labels(const std::string& path, int max_classes, uint64_t max_count = 0);

}  // namespace core
