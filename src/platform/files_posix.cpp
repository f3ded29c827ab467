// platform/files on POSIX systems (Linux, macOS): thin wrappers of open/fstat/rename/flock (files.hpp).
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/sysmacros.h>
#endif

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "platform/files.hpp"

namespace platform {
namespace {

FileType type_of(mode_t mode) {
  if (S_ISREG(mode)) return FileType::Regular;
  if (S_ISDIR(mode)) return FileType::Directory;
  if (S_ISLNK(mode)) return FileType::Symlink;
  if (S_ISFIFO(mode)) return FileType::Fifo;
  if (S_ISCHR(mode)) return FileType::CharDevice;
  if (S_ISBLK(mode)) return FileType::BlockDevice;
  if (S_ISSOCK(mode)) return FileType::Socket;
  return FileType::Other;
}

void describe(const struct stat& st, FileStatus& out) {
  out.type = type_of(st.st_mode);
  out.mode = st.st_mode & 07777;
  out.owner = st.st_uid;
  out.owned_by_me = st.st_uid == ::geteuid();
  out.size = st.st_size > 0 ? static_cast<uint64_t>(st.st_size) : 0;
  out.device = static_cast<uint64_t>(st.st_dev);
  out.inode = static_cast<uint64_t>(st.st_ino);
#ifdef __linux__
  out.null_device = S_ISCHR(st.st_mode) && major(st.st_rdev) == 1 && minor(st.st_rdev) == 3;
#else
  struct stat null {};
  out.null_device = S_ISCHR(st.st_mode) && ::stat("/dev/null", &null) == 0 && null.st_rdev == st.st_rdev;
#endif
}

int fd_of(intptr_t handle) { return static_cast<int>(handle); }

}  // namespace

const char* path_separators() { return "/"; }

int file_status(const std::string& path, bool follow_links, FileStatus& out) {
  struct stat st {};
  if ((follow_links ? ::stat(path.c_str(), &st) : ::lstat(path.c_str(), &st)) != 0) return errno;
  describe(st, out);
  return 0;
}

int standard_output_status(FileStatus& out) {
  struct stat st {};
  if (::fstat(STDOUT_FILENO, &st) != 0) return errno;
  describe(st, out);
  return 0;
}

int read_link(const std::string& path, std::string& target) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return errno;
  std::string link(static_cast<size_t>(st.st_size > 0 ? st.st_size : 255) + 1, '\0');
  const ssize_t n = ::readlink(path.c_str(), link.data(), link.size());
  if (n < 0) return errno;
  link.resize(static_cast<size_t>(n));
  target = link;
  return 0;
}

int rename_replace(const std::string& from, const std::string& to) {
  return ::rename(from.c_str(), to.c_str()) == 0 ? 0 : errno;
}

int remove_file(const std::string& path) { return ::unlink(path.c_str()) == 0 ? 0 : errno; }

void sync_directory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);  // some file systems refuse fsync on a directory: best effort
    ::close(fd);
  }
}

int check_writable(const std::string& path) { return ::access(path.c_str(), W_OK) == 0 ? 0 : errno; }

int check_readable_directory(const std::string& dir) {
  return ::access(dir.c_str(), R_OK | X_OK) == 0 ? 0 : errno;
}

std::string canonical_directory(const std::string& dir) {
  if (char* real = ::realpath(dir.c_str(), nullptr)) {
    std::string out = real;
    std::free(real);
    return out;
  }
  return dir;
}

long process_id() { return static_cast<long>(::getpid()); }

// ---- File ----

namespace {

int open_into(const std::string& path, int flags, mode_t mode, intptr_t& handle) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC | O_NOCTTY, mode);
  if (fd < 0) return errno;
  handle = fd;
  return 0;
}

}  // namespace

int File::create_new(const std::string& path, File& out) {
  out = File();
  return open_into(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0666, out.handle_);
}

int File::open_in_place(const std::string& path, File& out) {
  out = File();
  // O_NONBLOCK: a FIFO without a reader fails with ENXIO instead of blocking for ever; from then on, writes wait.
  if (const int error = open_into(path, O_WRONLY | O_NONBLOCK, 0, out.handle_)) return error;
  const int fd = fd_of(out.handle_);
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return 0;
}

int File::open_for_reading(const std::string& path, bool no_follow, File& out) {
  out = File();
  return open_into(path, O_RDONLY | O_NONBLOCK | (no_follow ? O_NOFOLLOW : 0), 0, out.handle_);
}

int File::open_lock_file(const std::string& path, File& out) {
  out = File();
  return open_into(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK, 0644, out.handle_);
}

File File::standard_output() {
  File f;
  f.handle_ = STDOUT_FILENO;
  f.owned_ = false;
  return f;
}

bool File::is_open() const { return handle_ >= 0; }

int File::status(FileStatus& out) const {
  struct stat st {};
  if (::fstat(fd_of(handle_), &st) != 0) return errno;
  describe(st, out);
  return 0;
}

int File::write_some(const char* data, size_t n, size_t& written) {
  written = 0;
  for (;;) {
    const ssize_t w = ::write(fd_of(handle_), data, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return errno;
    if (w == 0 && n > 0) return EIO;
    written = static_cast<size_t>(w);
    return 0;
  }
}

int File::read_some(char* data, size_t n, size_t& got) {
  got = 0;
  for (;;) {
    const ssize_t r = ::read(fd_of(handle_), data, n);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return errno;
    got = static_cast<size_t>(r);
    return 0;
  }
}

int File::sync() { return ::fsync(fd_of(handle_)) == 0 ? 0 : errno; }

int File::set_permissions(unsigned mode) { return ::fchmod(fd_of(handle_), mode & 07777) == 0 ? 0 : errno; }

int File::close() {
  if (handle_ < 0) return 0;
  const int fd = fd_of(handle_);
  handle_ = -1;
  if (!owned_) return 0;
  return ::close(fd) == 0 ? 0 : errno;
}

LockResult File::try_lock() {
  if (::flock(fd_of(handle_), LOCK_EX | LOCK_NB) == 0) return LockResult::Locked;
  return errno == EWOULDBLOCK || errno == EINTR ? LockResult::Held : LockResult::Unsupported;
}

std::string File::lock_holder() const {
#ifdef __linux__
  // /proc/locks lines: "1: FLOCK  ADVISORY  WRITE 4242 08:01:123456 0 EOF"; the holder's name from /proc/PID/comm.
  struct stat st {};
  if (::fstat(fd_of(handle_), &st) != 0) return "";
  std::FILE* locks = std::fopen("/proc/locks", "re");
  if (!locks) return "";
  char inode[96];
  std::snprintf(inode, sizeof inode, "%02x:%02x:%llu", major(st.st_dev), minor(st.st_dev),
                static_cast<unsigned long long>(st.st_ino));
  std::string holder;
  char line[512];
  while (holder.empty() && std::fgets(line, sizeof line, locks)) {
    char type[32] = {}, advisory[32] = {}, mode[32] = {}, where[128] = {};
    long pid = 0;
    if (std::sscanf(line, "%*[^:]: %31s %31s %31s %ld %127s", type, advisory, mode, &pid, where) == 5 &&
        std::strcmp(inode, where) == 0 && pid > 0) {
      std::string comm = "?";
      const std::string comm_path = "/proc/" + std::to_string(pid) + "/comm";
      if (std::FILE* f = std::fopen(comm_path.c_str(), "re")) {
        char name[64] = {};
        if (std::fgets(name, sizeof name, f)) comm = std::string(name, std::strcspn(name, "\n"));
        std::fclose(f);
      }
      holder = "process " + std::to_string(pid) + " (" + comm + ")";
    }
  }
  std::fclose(locks);
  return holder;
#else
  return "";
#endif
}

}  // namespace platform
