// The capped regular-file reader (settings, lesson scripts, caches): FIFOs, devices and directories refused without
// blocking, a size cap kept while reading, caches never read through a link; and file kinds in words.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/files_internal.hpp"

namespace core {

using namespace files_detail;

std::string file_kind(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return "";
  return kind_of(st.st_mode);
}

std::string read_regular_file(const std::string& path, size_t max_bytes, std::string_view what, OutputKind kind) {
  auto refuse = [&](const std::string& why) { throw Error(ErrorKind::Io, fmt::format("{} {}: {}", what, path, why)); };
  auto refuse_kind = [&](mode_t mode) {
    if (kind == OutputKind::Cache && S_ISLNK(mode))
      refuse("is a symlink; trainscope never reads or writes its caches through a link: remove it");
    refuse(fmt::format("is {}, not a regular file; give the path of a file", kind_of(mode)));
  };
  // stat first: a device is refused before it is even opened (opening some devices has effects).
  struct stat st {};
  if ((kind == OutputKind::Cache ? ::lstat(path.c_str(), &st) : ::stat(path.c_str(), &st)) != 0) {
    if (errno == ENOENT) refuse("does not exist");
    if (errno == ELOOP) refuse("is a symlink loop");
    refuse(errno_text(errno));
  }
  if (!S_ISREG(st.st_mode)) refuse_kind(st.st_mode);
  // O_NONBLOCK: should it have become a FIFO since the stat, open() returns instead of waiting for a writer.
  const int flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | (kind == OutputKind::Cache ? O_NOFOLLOW : 0);
  const int fd = ::open(path.c_str(), flags);
  if (fd < 0) refuse(fmt::format("cannot open it: {}", errno_text(errno)));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  if (::fstat(fd, &st) != 0) refuse(errno_text(errno));
  if (!S_ISREG(st.st_mode)) refuse_kind(st.st_mode);
  auto too_large = [&](const std::string& size) {
    refuse(fmt::format("is {}larger than the {} bytes such a file may have; is it the right file?", size, max_bytes));
  };
  if (static_cast<unsigned long long>(st.st_size) > max_bytes) too_large(fmt::format("{} bytes, ", st.st_size));
  // Read to the end, never past the cap (a file may grow while read; /proc files say size 0).
  std::string text;
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) refuse(fmt::format("read error: {}", errno_text(errno)));
    if (n == 0) break;
    if (text.size() + static_cast<size_t>(n) > max_bytes) too_large("");
    text.append(buffer, static_cast<size_t>(n));
  }
  return text;
}

}  // namespace core
