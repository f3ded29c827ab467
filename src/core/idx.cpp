// The IDX reader: a byte stream over a plain or gzip file (zlib), the header checks, and the chunked payload read
// that detects truncation and trailing bytes. Every error message is "<path>: <what is wrong, naming the field>".
#include "core/idx.hpp"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <vector>

#include "core/error.hpp"

namespace core {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw Error(ErrorKind::Data, fmt::format("{}: {}", path, what));
}

// A read-only byte stream over one file. gzip is recognised by its magic bytes 0x1f 0x8b (RFC 1952) and inflated
// with zlib (windowBits 15 + 16: gzip only), which checks each member's CRC-32 and length trailer. Members may follow
// one another (gzip -c a b > ab.gz); after the last one the file must end: anything else is trailing data, refused as
// a plain file's extra bytes are (zlib's gz* API skipped it silently).
class ByteSource {
 public:
  explicit ByteSource(const std::string& path) : path_(path) {
    std::error_code ec;
    fs::file_status st = fs::status(path, ec);
    if (st.type() == fs::file_type::not_found) fail(path, "file not found");
    if (ec) fail(path, fmt::format("cannot access the file: {}", ec.message()));
    if (fs::is_directory(st)) fail(path, "is a directory, expected an IDX file");
    if (!fs::is_regular_file(st)) fail(path, "is not a regular file, expected an IDX file");
    file_bytes_ = fs::file_size(path, ec);
    if (ec) fail(path, fmt::format("cannot read the file size: {}", ec.message()));
    if (file_bytes_ == 0) fail(path, "file is empty (0 bytes), expected an IDX file");

    file_ = std::fopen(path.c_str(), "rb");
    if (!file_) fail(path, fmt::format("cannot open the file: {}", std::strerror(errno)));
    std::array<unsigned char, 2> sniff{};
    size_t got = std::fread(sniff.data(), 1, sniff.size(), file_);
    gzip_ = got == 2 && sniff[0] == 0x1f && sniff[1] == 0x8b;
    std::rewind(file_);
    if (gzip_) {
      if (inflateInit2(&z_, 15 + 16) != Z_OK) fail(path, "cannot start zlib (out of memory?)");
      inflating_ = true;
      in_.resize(size_t{1} << 18);
    }
  }
  ~ByteSource() {
    if (file_) std::fclose(file_);
    if (inflating_) inflateEnd(&z_);
  }
  ByteSource(const ByteSource&) = delete;
  ByteSource& operator=(const ByteSource&) = delete;

  // Reads up to n bytes into dst; fewer only where the (decompressed) data ends. Throws on a corrupt or truncated
  // gzip stream, trailing data after it, and on read errors.
  size_t read(unsigned char* dst, size_t n) {
    if (!gzip_) {
      size_t got = std::fread(dst, 1, n, file_);
      if (got < n && std::ferror(file_)) fail(path_, fmt::format("read error: {}", std::strerror(errno)));
      return got;
    }
    size_t total = 0;
    while (total < n && !ended_) {
      if (between_members_) {
        if (!have_input(2)) {  // the file ends after a member: the normal end (with 1 byte left: trailing data)
          if (z_.avail_in > 0) trailing();
          ended_ = true;
          break;
        }
        if (z_.next_in[0] != 0x1f || z_.next_in[1] != 0x8b) trailing();
        inflateReset(&z_);
        between_members_ = false;
      }
      if (z_.avail_in == 0 && !have_input(1))
        fail(path_, "truncated gzip stream: the compressed data ends early (zlib: unexpected end of file)");
      z_.next_out = dst + total;
      z_.avail_out = static_cast<uInt>(std::min<size_t>(n - total, 1u << 30));
      const uInt before = z_.avail_out;
      const int r = inflate(&z_, Z_NO_FLUSH);
      total += before - z_.avail_out;
      if (r == Z_STREAM_END)
        between_members_ = true;
      else if (r == Z_MEM_ERROR)
        fail(path_, "out of memory while inflating the gzip data");
      else if (r != Z_OK && r != Z_BUF_ERROR)
        fail(path_, fmt::format("corrupt gzip data (zlib: {})", z_.msg ? z_.msg : "unknown zlib error"));
    }
    return total;
  }

  bool gzip() const { return gzip_; }
  uint64_t file_bytes() const { return file_bytes_; }

 private:
  // Makes at least k compressed bytes available at z_.next_in, reading on (what is left moved to the front); false
  // when the file ends first.
  bool have_input(size_t k) {
    if (z_.avail_in >= k) return true;
    if (z_.avail_in > 0) std::memmove(in_.data(), z_.next_in, z_.avail_in);
    size_t have = z_.avail_in;
    while (have < k) {
      const size_t got = std::fread(in_.data() + have, 1, in_.size() - have, file_);
      if (got == 0 && std::ferror(file_))
        fail(path_, fmt::format("read error in the gzip file: {}", std::strerror(errno)));
      if (got == 0) break;
      have += got;
    }
    z_.next_in = in_.data();
    z_.avail_in = static_cast<uInt>(have);
    return have >= k;
  }

  [[noreturn]] void trailing() {
    const uint64_t used = file_bytes_ - z_.avail_in - remaining_in_file();
    fail(path_, fmt::format("trailing data after the gzip stream ({} bytes from byte {}, not a gzip member); the file "
                            "is probably corrupt or not a .gz of one IDX file",
                            file_bytes_ - used, used));
  }

  uint64_t remaining_in_file() const {
    const long at = std::ftell(file_);
    return at < 0 ? 0 : file_bytes_ - std::min<uint64_t>(file_bytes_, static_cast<uint64_t>(at));
  }

  std::string path_;
  uint64_t file_bytes_ = 0;
  bool gzip_ = false;
  std::FILE* file_ = nullptr;
  z_stream z_{};
  bool inflating_ = false;         // z_ was initialised
  bool between_members_ = false;   // a member ended: the file must end here or another member start
  bool ended_ = false;             // the last member ended with the file
  std::vector<unsigned char> in_;  // compressed input
};

uint32_t big_endian_u32(const unsigned char* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

const char* idx_type_name(unsigned type) {
  switch (type) {
    case 0x08: return "unsigned byte";
    case 0x09: return "signed byte";
    case 0x0B: return "int16";
    case 0x0C: return "int32";
    case 0x0D: return "float32";
    case 0x0E: return "float64";
    default: return "not an IDX type";
  }
}

// What one kind of IDX file must look like: magic 0x000008<ndims>, and a name for each dimension.
struct IdxKind {
  const char* what;  // "image" / "label"
  uint32_t magic;
  std::vector<const char*> dim_names;
  const char* other;  // the kind a file with the other magic probably is
};

struct IdxHeader {
  std::vector<uint32_t> dims;
  uint64_t header_bytes = 0;
  uint64_t payload_bytes = 0;  // product of dims: one byte each
};

IdxHeader read_header(ByteSource& src, const std::string& path, const IdxKind& kind) {
  const auto ndims = static_cast<unsigned>(kind.dim_names.size());
  const uint64_t header_bytes = 4 + 4 * uint64_t{ndims};
  std::array<unsigned char, 4> m{};
  size_t got = src.read(m.data(), 4);
  if (got == 0) fail(path, "file is empty (the gzip stream decompresses to 0 bytes), expected an IDX file");
  if (got < 4) {
    fail(path, fmt::format("truncated header: the file holds {} byte(s), an IDX {} file's header is {} bytes "
                           "(magic number + {} dimension size(s))", got, kind.what, header_bytes, ndims));
  }
  const uint32_t magic = big_endian_u32(m.data());
  if (m[0] != 0 || m[1] != 0) {
    fail(path, fmt::format("magic number 0x{:08X} is not an IDX {} file (expected 0x{:08X}; the first two bytes "
                           "of an IDX file are 0)", magic, kind.what, kind.magic));
  }
  if (m[2] != 0x08) {
    fail(path, fmt::format("data type byte 0x{:02X} ({}) in magic number 0x{:08X} is not supported: only unsigned "
                           "byte (0x08) is (expected 0x{:08X})", m[2], idx_type_name(m[2]), magic, kind.magic));
  }
  if (m[3] != ndims) {
    fail(path, fmt::format("magic number 0x{:08X} is not an IDX {} file (expected 0x{:08X}): it declares {} "
                           "dimension(s), an IDX {} file has {}{}", magic, kind.what, kind.magic, m[3], kind.what,
                           ndims, m[3] == (ndims == 3 ? 1 : 3) ? fmt::format(" (is this {} file?)", kind.other) : ""));
  }

  IdxHeader h;
  h.header_bytes = header_bytes;
  std::vector<unsigned char> raw(4 * ndims);
  got = src.read(raw.data(), raw.size());
  if (got < raw.size()) {
    fail(path, fmt::format("truncated header: the file ends {} byte(s) into the header, an IDX {} file's header "
                           "is {} bytes (magic number + {} dimension size(s))", 4 + got, kind.what, header_bytes,
                           ndims));
  }
  h.payload_bytes = 1;
  for (unsigned i = 0; i < ndims; ++i) {
    uint32_t d = big_endian_u32(raw.data() + 4 * i);
    if (d == 0) fail(path, fmt::format("zero dimension: {} is 0 in the header", kind.dim_names[i]));
    h.dims.push_back(d);
    // Each factor is >= 1, so once the running product passes the limit it stays above it: no overflow.
    h.payload_bytes *= d;
    if (h.payload_bytes > kMaxIdxPayloadBytes) {
      std::string dims;
      for (unsigned j = 0; j < ndims; ++j) {
        dims += fmt::format("{}{} {}", j ? ", " : "", kind.dim_names[j], big_endian_u32(raw.data() + 4 * j));
      }
      fail(path, fmt::format("absurd size in the header ({}): the data would exceed the {} GiB limit of the IDX "
                             "reader; the header is probably corrupt", dims, kMaxIdxPayloadBytes >> 30));
    }
  }
  return h;
}

std::string describe(const IdxHeader& h, const IdxKind& kind) {
  if (h.dims.size() == 3) {
    return fmt::format("{} images of {}x{} ({} bytes of pixels)", h.dims[0], h.dims[1], h.dims[2], h.payload_bytes);
  }
  return fmt::format("{} {}s ({} bytes)", h.dims[0], kind.what, h.payload_bytes);
}

// Reads the first `wanted` bytes of the payload (all of it, or what max_count items need) in chunks, handing each
// to consume(bytes, n, offset). Plain files are checked against their length before anything is read; gzip files
// (whose decompressed length is unknown up front) are inflated only up to `wanted`: when that is the whole payload,
// one more byte is probed, which refuses a longer stream and makes zlib check the CRC trailer; when it is less (a
// --limit), inflation stops there and the rest of the stream is never read.
template <class Consume>
void read_payload(ByteSource& src, const std::string& path, const IdxHeader& h, const IdxKind& kind, uint64_t wanted,
                  Consume&& consume) {
  if (!src.gzip()) {
    const uint64_t after_header = src.file_bytes() - std::min(src.file_bytes(), h.header_bytes);
    if (after_header < h.payload_bytes) {
      fail(path, fmt::format("truncated data: the header says {} but only {} bytes follow the header",
                             describe(h, kind), after_header));
    }
    if (after_header > h.payload_bytes) {
      fail(path, fmt::format("trailing data: {} byte(s) follow the {} the header describes",
                             after_header - h.payload_bytes, describe(h, kind)));
    }
  }
  std::vector<unsigned char> chunk(size_t{1} << 20);
  uint64_t done = 0;
  while (done < wanted) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(chunk.size(), wanted - done));
    const size_t got = src.read(chunk.data(), want);
    consume(chunk.data(), got, done);
    done += got;
    if (got < want) {
      fail(path, fmt::format("truncated data: the header says {} but the {}file holds only {} bytes after the "
                             "header", describe(h, kind), src.gzip() ? "decompressed " : "", done));
    }
  }
  unsigned char extra = 0;
  if (src.gzip() && wanted == h.payload_bytes && src.read(&extra, 1) != 0) {
    fail(path, fmt::format("trailing data: the decompressed file is longer than the {} the header describes; it is "
                           "refused without inflating the rest",
                           describe(h, kind)));
  }
}

// The items to read: the header's count, or max_count when that is smaller (0: all).
uint64_t items_wanted(uint32_t declared, uint64_t max_count) {
  return max_count > 0 ? std::min<uint64_t>(declared, max_count) : declared;
}

// How many payload bytes may be allocated before they are read: for a plain file no more than the file holds, and
// for gzip no more than the compressed size times deflate's best ratio (about 1032:1, RFC 1951's 258-byte matches
// in ~2 bits), so a corrupt header in a small file cannot make us allocate gigabytes. (Called before read_payload
// checks a plain file's length: a 14-byte file declaring 553 million labels reserved 2.2 GB.)
uint64_t reserve_bound(const ByteSource& src, uint64_t payload) {
  if (!src.gzip()) return std::min<uint64_t>(payload, src.file_bytes());
  return std::min<uint64_t>(payload, src.file_bytes() * 1032 + 4096);
}

}  // namespace

namespace {
const IdxKind kImageKind{"image", 0x00000803, {"image count", "rows", "cols"}, "a labels"};
const IdxKind kLabelKind{"label", 0x00000801, {"label count"}, "an images"};
}  // namespace

std::vector<uint32_t> read_idx_dims(const std::string& path, bool images) {
  ByteSource src(path);
  return read_header(src, path, images ? kImageKind : kLabelKind).dims;
}

IdxImages read_idx_images(const std::string& path, uint64_t max_count) {
  const IdxKind& kind = kImageKind;
  ByteSource src(path);
  const IdxHeader h = read_header(src, path, kind);
  IdxImages out;
  out.declared_count = static_cast<int>(h.dims[0]);  // each dim <= kMaxIdxPayloadBytes < INT_MAX
  out.count = static_cast<int>(items_wanted(h.dims[0], max_count));
  out.rows = static_cast<int>(h.dims[1]);
  out.cols = static_cast<int>(h.dims[2]);
  const uint64_t wanted = static_cast<uint64_t>(out.count) * h.dims[1] * h.dims[2];
  out.pixels.reserve(reserve_bound(src, wanted));
  read_payload(src, path, h, kind, wanted, [&](const unsigned char* bytes, size_t n, uint64_t) {
    const size_t old = out.pixels.size();
    out.pixels.resize(old + n);
    for (size_t i = 0; i < n; ++i) out.pixels[old + i] = static_cast<float>(bytes[i]) / 255.0f;
  });
  return out;
}

IdxLabels read_idx_labels(const std::string& path, int max_classes, uint64_t max_count) {
  if (max_classes < 1 || max_classes > 256) {
    throw Error(ErrorKind::InvalidArgument,
                fmt::format("read_idx_labels: max_classes {} is outside [1, 256] (labels are bytes)", max_classes));
  }
  const IdxKind& kind = kLabelKind;
  ByteSource src(path);
  const IdxHeader h = read_header(src, path, kind);
  IdxLabels out;
  out.declared_count = static_cast<int>(h.dims[0]);
  const uint64_t wanted = items_wanted(h.dims[0], max_count);
  out.values.reserve(reserve_bound(src, wanted));
  read_payload(src, path, h, kind, wanted, [&](const unsigned char* bytes, size_t n, uint64_t offset) {
    for (size_t i = 0; i < n; ++i) {
      if (bytes[i] >= max_classes) {
        fail(path, fmt::format("label {} at index {} is above {} (labels must be 0..{})", bytes[i], offset + i,
                               max_classes - 1, max_classes - 1));
      }
      out.values.push_back(bytes[i]);
    }
  });
  return out;
}

}  // namespace core
