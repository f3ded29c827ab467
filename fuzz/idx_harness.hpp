// The body shared by the two IDX fuzz targets: the bytes become a file (the reader reads files: it sniffs gzip by
// its magic bytes), which is read as images and as labels, whole and with a --limit. Each read either succeeds with
// data that keeps the reader's promises (shapes, pixel range, label range) or throws core::Error(Data); anything
// else (a crash, a sanitizer report, another exception, a broken promise) is a finding.
#pragma once
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/error.hpp"
#include "core/idx.hpp"

namespace fuzz {

// A file of this process in $TMPDIR (default /tmp), rewritten for every input.
inline const std::string& scratch_path() {
  static const std::string path = [] {
    const char* tmp = std::getenv("TMPDIR");
    return std::string(tmp && *tmp ? tmp : "/tmp") + "/trainscope-fuzz-idx-" + std::to_string(::getpid());
  }();
  return path;
}

inline void write_scratch(const uint8_t* data, size_t size) {
  std::FILE* f = std::fopen(scratch_path().c_str(), "wb");
  if (!f) std::abort();
  if (size && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
}

inline void check_images(uint64_t limit) {
  try {
    const core::IdxImages im = core::read_idx_images(scratch_path(), limit);
    if (im.count < 0 || im.count > im.declared_count || (limit && static_cast<uint64_t>(im.count) > limit)) std::abort();
    if (im.pixels.size() != static_cast<size_t>(im.count) * im.rows * im.cols) std::abort();
    for (float p : im.pixels)
      if (!(p >= 0.0f && p <= 1.0f)) std::abort();
  } catch (const core::Error& e) {
    if (e.kind() != core::ErrorKind::Data) std::abort();
  }
}

inline void check_labels(uint64_t limit) {
  try {
    const core::IdxLabels l = core::read_idx_labels(scratch_path(), 10, limit);
    if (static_cast<uint64_t>(l.values.size()) > static_cast<uint64_t>(l.declared_count)) std::abort();
    if (limit && l.values.size() > limit) std::abort();
    for (int32_t v : l.values)
      if (v < 0 || v >= 10) std::abort();
  } catch (const core::Error& e) {
    if (e.kind() != core::ErrorKind::Data) std::abort();
  }
}

// Reads the scratch file every way the program does: whole (train without --limit), and the first 3 samples.
inline void read_every_way() {
  check_images(0);
  check_images(3);
  check_labels(0);
  check_labels(3);
}

}  // namespace fuzz
