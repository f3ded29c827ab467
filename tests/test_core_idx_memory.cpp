// The IDX reader allocates no more than the file can hold: a tiny file whose header declares millions of items is
// refused as truncated without a large allocation. This executable replaces the global operator new to record the
// largest single allocation made while a file is read (found by fuzz/fuzz_idx_plain: a 14-byte labels file
// declaring 553 million labels reserved 2.2 GB before its length was checked).
#include <doctest/doctest.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <new>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/idx.hpp"
#include "platform/files.hpp"

namespace {
std::atomic<size_t> g_largest{0};
void note(size_t n) {
  size_t seen = g_largest.load(std::memory_order_relaxed);
  while (n > seen && !g_largest.compare_exchange_weak(seen, n, std::memory_order_relaxed)) {
  }
}
}  // namespace

void* operator new(size_t n) {
  note(n);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t n) { return operator new(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }

namespace {

namespace fs = std::filesystem;

std::string write_temp(const std::string& name, const std::vector<unsigned char>& bytes) {
  const std::string pid = std::to_string(platform::process_id());
  const fs::path path = fs::temp_directory_path() / ("trainscope_idx_memory_" + pid + name);
  std::FILE* f = std::fopen(path.string().c_str(), "wb");
  REQUIRE(f);
  REQUIRE(std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size());
  std::fclose(f);
  return path.string();
}

std::vector<unsigned char> header(uint32_t magic, const std::vector<uint32_t>& dims) {
  std::vector<unsigned char> out;
  auto put = [&](uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<unsigned char>(v >> shift));
  };
  put(magic);
  for (uint32_t d : dims) put(d);
  return out;
}

// The largest allocation made by `read`, which must throw core::Error(Data) naming the truncation.
size_t largest_allocation_of_refused_read(const std::function<void()>& read) {
  g_largest = 0;
  std::string message;
  try {
    read();
  } catch (const core::Error& e) {
    CHECK(e.kind() == core::ErrorKind::Data);
    message = e.what();
  }
  const size_t largest = g_largest;
  CHECK_MESSAGE(message.find("truncated data") != std::string::npos, message);
  return largest;
}

}  // namespace

TEST_CASE("a tiny plain IDX file declaring millions of items is refused without a large allocation") {
  // 0x21000000 labels (553 million; 553 MB of payload, under the reader's 1 GiB cap) in a 14-byte file.
  std::vector<unsigned char> labels = header(0x801, {0x21000000});
  labels.insert(labels.end(), {1, 2, 3, 4, 5, 6});
  const std::string labels_path = write_temp("labels", labels);
  size_t largest = largest_allocation_of_refused_read([&] { (void)core::read_idx_labels(labels_path, 10); });
  CHECK(largest < (size_t{4} << 20));  // the 1 MiB read chunk and small strings, not 2.2 GB of int32 labels
  // 1,000,000 images of 28x28 (784 MB of pixels: 3 GB as floats) in a 20-byte file.
  std::vector<unsigned char> images = header(0x803, {1000000, 28, 28});
  images.insert(images.end(), {9, 9, 9, 9});
  const std::string images_path = write_temp("images", images);
  largest = largest_allocation_of_refused_read([&] { (void)core::read_idx_images(images_path, 0); });
  CHECK(largest < (size_t{4} << 20));
  fs::remove(labels_path);
  fs::remove(images_path);
}
