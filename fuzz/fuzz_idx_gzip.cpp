// libFuzzer target: the IDX reader's gzip path. An input that starts with gzip's magic bytes (0x1f 0x8b) is written
// as it is, so libFuzzer mutates real gzip streams (corrupt deflate data, CRC and length trailers, truncation,
// concatenated members); any other input is an IDX file's contents, gzip-compressed here first, so that the header
// and payload checks (a stream longer or shorter than its header declares) are reached through zlib. Seeds:
// fuzz/corpus/idx_gzip.
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "idx_harness.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size >= 2 && data[0] == 0x1f && data[1] == 0x8b) {
    fuzz::write_scratch(data, size);
  } else {
    // A gzip stream (RFC 1952) made by deflate with windowBits 15 + 16.
    z_stream z{};
    if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) std::abort();
    std::vector<uint8_t> out(deflateBound(&z, size) + 32);
    z.next_in = const_cast<Bytef*>(data);
    z.avail_in = static_cast<uInt>(size);
    z.next_out = out.data();
    z.avail_out = static_cast<uInt>(out.size());
    if (deflate(&z, Z_FINISH) != Z_STREAM_END) std::abort();
    out.resize(z.total_out);
    deflateEnd(&z);
    fuzz::write_scratch(out.data(), out.size());
  }
  fuzz::read_every_way();
  return 0;
}
