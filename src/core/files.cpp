// Atomic outputs (temporary file + fsync + rename, devices and FIFOs written in place, symlinks of named files kept,
// caches never written through a link, other users' and protected files never replaced) and groups of outputs
// written all or none. POSIX calls throughout: the file type must be checked on the descriptor that is then used
// (fstat), and O_NONBLOCK is what keeps a FIFO from blocking open().
#include "core/files.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <memory>
#include <system_error>

#include "core/error.hpp"
#include "core/files_internal.hpp"

namespace core {
namespace files_detail {

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

std::string advice(int error) {
  switch (error) {
    case ENOSPC:
    case EDQUOT:
    case EFBIG:
      return "free some disk space or choose another place";
    case ENXIO:
      return "start the program that reads the FIFO first";
    case EPIPE:
      return "the program reading it stopped early; keep it reading, or write to a file";
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

int create_beside(const std::string& target, const char* tag, std::string& name) {
  static std::atomic<unsigned> counter{0};
  const std::string dir = parent_dir(target), base = base_name(target);
  for (int attempt = 0; attempt < 100; ++attempt) {
    name = fmt::format("{}/.{}.{}-{}-{}", dir, base, tag, static_cast<long>(::getpid()), counter++);
    const int fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW, 0666);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  errno = EEXIST;
  return -1;
}

Refusal replace_refusal(const struct stat& st) {
  const unsigned mode = st.st_mode & 07777;
  if (st.st_uid != ::geteuid())
    return {fmt::format("it belongs to another user (uid {})", st.st_uid),
            "trainscope replaces only its own user's files: choose another path"};
  if (!(st.st_mode & S_IRUSR))
    return {fmt::format("it cannot be read (mode {:04o})", mode),
            "trainscope does not replace a file it cannot read: choose another path"};
  if (!(st.st_mode & S_IWUSR))
    return {fmt::format("it is write-protected (mode {:04o})", mode),
            "make it writable (chmod u+w) or remove it to have it replaced, or choose another path"};
  return {};
}

}  // namespace files_detail

using namespace files_detail;

// ---- OutputFile ----

OutputFile::OutputFile(std::string path, std::string what, OutputKind kind)
    : path_(std::move(path)), what_(std::move(what)) {
  if (path_.empty()) fail("the file name is empty", EINVAL);
  if (path_ == "-" && kind == OutputKind::Named) {
    std::fflush(stdout);  // what stdio buffered comes first
    fd_ = STDOUT_FILENO;
    owns_fd_ = false;
    direct_ = true;
    target_ = path_;
    return;
  }
  // A cache is looked at itself (lstat: a link is not followed); a named file through its symlinks.
  struct stat st {};
  const bool exists = (kind == OutputKind::Cache ? ::lstat(path_.c_str(), &st) : ::stat(path_.c_str(), &st)) == 0;
  if (!exists && errno != ENOENT) fail(errno == ELOOP ? "a symlink loop" : errno_text(errno), errno);
  if (exists && S_ISDIR(st.st_mode)) fail("it is a directory", EISDIR);
  if (kind == OutputKind::Cache && exists && !S_ISREG(st.st_mode))
    fail(fmt::format("it is {}; trainscope writes its caches only as regular files, never through a link or into a "
                     "device",
                     kind_of(st.st_mode)),
         "remove it (the cache is made again)");
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
  if (exists) {
    const Refusal refusal = replace_refusal(st);
    if (!refusal.why.empty()) fail(refusal.why, refusal.todo);
  }
  if (kind == OutputKind::Cache) {
    target_ = path_;
  } else {
    try {
      target_ = resolve_symlinks(path_);
    } catch (const std::system_error& e) {
      fail(fmt::format("cannot follow its symlinks: {}", e.code().message()), e.code().value());
    }
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

void OutputFile::fail(const std::string& why, int error) { fail(why, advice(error)); }

void OutputFile::fail(const std::string& why, const std::string& todo) {
  discard();
  const std::string via = target_.empty() || target_ == path_ ? "" : fmt::format(" (a symlink to {})", target_);
  throw Error(ErrorKind::Io, fmt::format("cannot write {} {}{}: {}; {}", what_, path_, via, why, todo));
}

void OutputFile::write(std::string_view data) {
  if (fd_ < 0 || finished_) fail("it is already closed", EBADF);
  while (!data.empty()) {
    const ssize_t n = ::write(fd_, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = n < 0 ? errno : EIO;
      fail(error == EPIPE ? "the program reading it closed it early" : errno_text(error), error);
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
}

void OutputFile::finish() {
  if (finished_) return;
  if (fd_ < 0) fail("it is already closed", EBADF);
  if (direct_) {
    if (owns_fd_ && ::close(fd_) != 0) {
      const int error = errno;
      fd_ = -1;
      fail(errno_text(error), error);
    }
    fd_ = -1;
    finished_ = true;
    return;
  }
  // fsync before the rename: otherwise a crash just after it can leave an empty file under the target's name.
  if (::fsync(fd_) != 0) fail(errno_text(errno), errno);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail(errno_text(errno), errno);
  finished_ = true;
}

void OutputFile::commit() {
  finish();
  if (direct_) return;
  if (temp_.empty()) fail("it is already committed", EBADF);
  if (::rename(temp_.c_str(), target_.c_str()) != 0) fail(errno_text(errno), errno);
  temp_.clear();
  // The rename itself reaches the disk with the directory (best effort: some file systems refuse fsync on it).
  const int dir = ::open(parent_dir(target_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

void write_file_atomically(const std::string& path, std::string_view data, const std::string& what, OutputKind kind) {
  OutputFile out(path, what, kind);
  out.write(data);
  out.commit();
}

void write_files_atomically(const std::vector<FileContents>& files) {
  std::vector<std::unique_ptr<OutputFile>> outs;
  for (const FileContents& f : files) {
    outs.push_back(std::make_unique<OutputFile>(f.path, f.what));
    outs.back()->write(f.data);
    outs.back()->finish();
  }
  for (auto& out : outs) out->commit();  // only renames are left: the disk cannot fill up any more
}

}  // namespace core
