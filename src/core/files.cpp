// Atomic outputs (temporary file + fsync + rename, devices and FIFOs written in place, symlinks kept), the output
// path pre-check, and the capped regular-file reader. POSIX calls throughout: the file type must be checked on the
// descriptor that is then used (fstat), and O_NONBLOCK is what keeps a FIFO from blocking open().
#include "core/files.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <system_error>

#include "core/error.hpp"

namespace core {
namespace {

std::string errno_text(int error) { return std::error_code(error, std::generic_category()).message(); }

std::string kind_of(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISLNK(mode)) return "a symlink";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// What the user can do about a failed write, by errno.
std::string advice(int error) {
  switch (error) {
    case ENOSPC:
    case EDQUOT:
    case EFBIG:
      return "free some disk space or choose another place";
    case ENXIO:
      return "start the program that reads the FIFO first";
    default:
      return "choose a writable path";
  }
}

std::string parent_dir(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string base_name(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Follows `path` through symlinks (chains, relative and dangling links) to the file they finally name, which may
// not exist yet. Throws the errno (ELOOP after 40 links, as the kernel's MAXSYMLINKS).
std::string resolve_symlinks(std::string path) {
  for (int hops = 0; hops <= 40; ++hops) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
      if (errno == ENOENT) return path;
      throw std::system_error(errno, std::generic_category());
    }
    if (!S_ISLNK(st.st_mode)) return path;
    std::string link(static_cast<size_t>(st.st_size > 0 ? st.st_size : 255) + 1, '\0');
    const ssize_t n = ::readlink(path.c_str(), link.data(), link.size());
    if (n < 0) throw std::system_error(errno, std::generic_category());
    link.resize(static_cast<size_t>(n));
    path = !link.empty() && link[0] == '/' ? link : parent_dir(path) + "/" + link;
  }
  throw std::system_error(ELOOP, std::generic_category());
}

// Creates a new, empty file beside `target` (".<name>.<tag>-<pid>-<n>", hidden so a leftover from a kill does not
// look like an output). Returns the descriptor and sets `name`; -1 with errno set on failure.
int create_beside(const std::string& target, const char* tag, std::string& name) {
  static std::atomic<unsigned> counter{0};
  const std::string dir = parent_dir(target), base = base_name(target);
  for (int attempt = 0; attempt < 100; ++attempt) {
    name = fmt::format("{}/.{}.{}-{}-{}", dir, base, tag, static_cast<long>(::getpid()), counter++);
    const int fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, 0666);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  errno = EEXIST;
  return -1;
}

bool writes_in_place(mode_t mode) { return S_ISCHR(mode) || S_ISFIFO(mode); }

}  // namespace

std::string file_kind(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return "";
  return kind_of(st.st_mode);
}

// ---- output path pre-check ----

void check_output_path(const std::string& path, std::string_view option) {
  auto refuse = [&](const std::string& why, const std::string& todo) {
    throw Error(ErrorKind::InvalidArgument, fmt::format("{} {}: {}; {}", option, path, why, todo));
  };
  if (path == "-") return;
  if (path.empty()) refuse("the file name is empty", "give a file name, or - for standard output");
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) refuse("is a directory", "give a file name");
    if (writes_in_place(st.st_mode)) {
      // Written in place: it must accept writes. A FIFO is not opened here (that would need its reader now).
      if (::access(path.c_str(), W_OK) != 0) refuse(fmt::format("{} not writable: {}", kind_of(st.st_mode),
                                                              errno_text(errno)), "choose a writable path");
      if (S_ISCHR(st.st_mode)) {
        const int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        if (fd < 0) refuse(fmt::format("cannot open the character device for writing: {}", errno_text(errno)),
                           "choose a writable path");
        ::close(fd);
      }
      return;
    }
    if (!S_ISREG(st.st_mode))
      refuse(fmt::format("is {}, which trainscope does not write to", kind_of(st.st_mode)),
             "give a regular file, a character device or a FIFO");
  } else if (errno == ELOOP) {
    refuse("is a symlink loop", "fix the link or choose another path");
  } else if (errno == ENOTDIR) {
    refuse("a part of the path is not a directory", "choose a path in an existing directory");
  } else if (errno != ENOENT) {
    refuse(fmt::format("cannot be checked: {}", errno_text(errno)), "choose another path");
  }
  // Absent or a regular file: replaced by a temporary file renamed in its (resolved) directory.
  std::string target;
  try {
    target = resolve_symlinks(path);
  } catch (const std::system_error& e) {
    refuse(fmt::format("cannot follow its symlinks: {}", e.code().message()), "fix the link or choose another path");
  }
  const std::string dir = parent_dir(target);
  struct stat dir_st {};
  if (::stat(dir.c_str(), &dir_st) != 0 || !S_ISDIR(dir_st.st_mode))
    refuse(fmt::format("the directory {} does not exist", dir), "create it first or choose another path");
  std::string probe;
  const int fd = create_beside(target, "probe", probe);
  if (fd < 0) refuse(fmt::format("cannot create files in the directory {}: {}", dir, errno_text(errno)),
                     "choose a writable directory");
  ::close(fd);
  ::unlink(probe.c_str());
}

// ---- OutputFile ----

OutputFile::OutputFile(std::string path, std::string what) : path_(std::move(path)), what_(std::move(what)) {
  if (path_.empty()) fail("the file name is empty", EINVAL);
  if (path_ == "-") {
    std::fflush(stdout);  // what stdio buffered comes first
    fd_ = STDOUT_FILENO;
    owns_fd_ = false;
    direct_ = true;
    target_ = path_;
    return;
  }
  struct stat st {};
  const bool exists = ::stat(path_.c_str(), &st) == 0;
  if (!exists && errno != ENOENT) fail(errno == ELOOP ? "a symlink loop" : errno_text(errno), errno);
  if (exists && S_ISDIR(st.st_mode)) fail("it is a directory", EISDIR);
  if (exists && writes_in_place(st.st_mode)) {
    // O_NONBLOCK: a FIFO without a reader fails with ENXIO instead of blocking for ever.
    fd_ = ::open(path_.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd_ < 0) fail(errno == ENXIO ? "no program is reading from this FIFO" : errno_text(errno), errno);
    struct stat opened {};
    if (::fstat(fd_, &opened) != 0 || !writes_in_place(opened.st_mode))
      fail("it changed while it was being opened", EAGAIN);
    ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) & ~O_NONBLOCK);  // from now on, writes wait for the reader
    direct_ = true;
    target_ = path_;
    return;
  }
  if (exists && !S_ISREG(st.st_mode))
    fail(fmt::format("it is {}, which trainscope does not write to", kind_of(st.st_mode)), EINVAL);
  try {
    target_ = resolve_symlinks(path_);
  } catch (const std::system_error& e) {
    fail(fmt::format("cannot follow its symlinks: {}", e.code().message()), e.code().value());
  }
  fd_ = create_beside(target_, "tmp", temp_);
  if (fd_ < 0) fail(fmt::format("cannot create a temporary file in {}: {}", parent_dir(target_), errno_text(errno)),
                    errno);
  if (exists) ::fchmod(fd_, st.st_mode & 07777);  // the replacement keeps the old file's permissions
}

OutputFile::~OutputFile() { discard(); }

void OutputFile::discard() noexcept {
  if (fd_ >= 0 && owns_fd_) ::close(fd_);
  fd_ = -1;
  if (!temp_.empty()) ::unlink(temp_.c_str());
  temp_.clear();
}

void OutputFile::fail(const std::string& why, int error) {
  discard();
  const std::string via = target_.empty() || target_ == path_ ? "" : fmt::format(" (a symlink to {})", target_);
  throw Error(ErrorKind::Io, fmt::format("cannot write {} {}{}: {}; {}", what_, path_, via, why, advice(error)));
}

void OutputFile::write(std::string_view data) {
  if (fd_ < 0) fail("it is already closed", EBADF);
  while (!data.empty()) {
    const ssize_t n = ::write(fd_, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = n < 0 ? errno : EIO;
      fail(errno_text(error), error);
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
}

void OutputFile::commit() {
  if (fd_ < 0) fail("it is already closed", EBADF);
  if (direct_) {
    if (owns_fd_ && ::close(fd_) != 0) {
      const int error = errno;
      fd_ = -1;
      fail(errno_text(error), error);
    }
    fd_ = -1;
    return;
  }
  // fsync before the rename: otherwise a crash just after it can leave an empty file under the target's name.
  if (::fsync(fd_) != 0) fail(errno_text(errno), errno);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail(errno_text(errno), errno);
  if (::rename(temp_.c_str(), target_.c_str()) != 0) fail(errno_text(errno), errno);
  temp_.clear();
  // The rename itself reaches the disk with the directory (best effort: some file systems refuse fsync on it).
  const int dir = ::open(parent_dir(target_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

void write_file_atomically(const std::string& path, std::string_view data, const std::string& what) {
  OutputFile out(path, what);
  out.write(data);
  out.commit();
}

// ---- reading ----

std::string read_regular_file(const std::string& path, size_t max_bytes, std::string_view what) {
  auto refuse = [&](const std::string& why) {
    throw Error(ErrorKind::Io, fmt::format("{} {}: {}", what, path, why));
  };
  auto refuse_kind = [&](mode_t mode) {
    refuse(fmt::format("is {}, not a regular file; give the path of a file", kind_of(mode)));
  };
  // stat first: a device is refused before it is even opened (opening some devices has effects).
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) refuse("does not exist");
    if (errno == ELOOP) refuse("is a symlink loop");
    refuse(errno_text(errno));
  }
  if (!S_ISREG(st.st_mode)) refuse_kind(st.st_mode);
  // O_NONBLOCK: should it have become a FIFO since the stat, open() returns instead of waiting for a writer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
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
