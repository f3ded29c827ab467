// The capped regular-file reader (settings, lesson scripts, caches): FIFOs, devices and directories refused without
// blocking, a size cap kept while reading, caches never read through a link; and file kinds in words.
#include <fmt/format.h>

#include <cerrno>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/files_internal.hpp"

namespace core {

using namespace files_detail;

std::string file_kind(const std::string& path) {
  platform::FileStatus st;
  if (platform::file_status(path, false, st) != 0) return "";
  return kind_of(st.type);
}

std::string read_regular_file(const std::string& path, size_t max_bytes, std::string_view what, OutputKind kind) {
  auto refuse = [&](const std::string& why) { throw Error(ErrorKind::Io, fmt::format("{} {}: {}", what, path, why)); };
  auto refuse_kind = [&](platform::FileType type) {
    if (kind == OutputKind::Cache && type == platform::FileType::Symlink)
      refuse("is a symlink; trainscope never reads or writes its caches through a link: remove it");
    refuse(fmt::format("is {}, not a regular file; give the path of a file", kind_of(type)));
  };
  // The status first: a device is refused before it is even opened (opening some devices has effects).
  platform::FileStatus st;
  if (const int error = platform::file_status(path, kind != OutputKind::Cache, st)) {
    if (error == ENOENT) refuse("does not exist");
    if (error == ELOOP) refuse("is a symlink loop");
    refuse(errno_text(error));
  }
  if (st.type != platform::FileType::Regular) refuse_kind(st.type);
  // Opened without blocking: should it have become a FIFO since, opening returns instead of waiting for a writer.
  platform::File file;
  if (const int error = platform::File::open_for_reading(path, kind == OutputKind::Cache, file))
    refuse(fmt::format("cannot open it: {}", errno_text(error)));
  if (const int error = file.status(st)) refuse(errno_text(error));
  if (st.type != platform::FileType::Regular) refuse_kind(st.type);
  auto too_large = [&](const std::string& size) {
    refuse(fmt::format("is {}larger than the {} bytes such a file may have; is it the right file?", size, max_bytes));
  };
  if (st.size > max_bytes) too_large(fmt::format("{} bytes, ", st.size));
  // Read to the end, never past the cap (a file may grow while read; /proc files say size 0).
  std::string text;
  char buffer[65536];
  for (;;) {
    size_t n = 0;
    if (const int error = file.read_some(buffer, sizeof buffer, n)) refuse(fmt::format("read error: {}", errno_text(error)));
    if (n == 0) break;
    if (text.size() + n > max_bytes) too_large("");
    text.append(buffer, n);
  }
  return text;
}

}  // namespace core
