// libFuzzer target: core::read_idx_images / read_idx_labels on a file holding the input as it is (a plain IDX file;
// an input that starts with gzip's magic bytes is read as gzip). Seeds: fuzz/corpus/idx_plain.
#include <cstddef>
#include <cstdint>

#include "idx_harness.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::write_scratch(data, size);
  fuzz::read_every_way();
  return 0;
}
