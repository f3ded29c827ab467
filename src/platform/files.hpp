// platform/files: the file system calls that trainscope's output policy (core/files.hpp) is built on, one small
// interface with a POSIX implementation (files_posix.cpp) and a Win32 one (files_win32.cpp). The policy itself (what
// may be replaced, the messages, the atomic replace) lives in core and is written once; these are its primitives.
// Errors are returned as errno values (0 = success) so that core's advice ("free some disk space") reads the same on
// every system; the Win32 side maps its error codes onto them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace platform {

enum class FileType { Regular, Directory, Symlink, Fifo, CharDevice, BlockDevice, Socket, Other };

struct FileStatus {
  FileType type = FileType::Other;
  unsigned mode = 0;          // permission bits (07777): POSIX's own; on Windows 0666, or 0444 when read-only
  bool owned_by_me = true;    // its owner is this process's effective user (Windows: always true)
  uint64_t owner = 0;         // the owner's user id, for messages
  uint64_t size = 0;          // bytes
  uint64_t device = 0;        // device and inode (Windows: volume serial number and file index):
  uint64_t inode = 0;         //   two paths name one file exactly when both are equal
  bool null_device = false;   // /dev/null (Windows: NUL), which takes any number of outputs
  bool owner_readable() const { return (mode & 0400) != 0; }
  bool owner_writable() const { return (mode & 0200) != 0; }
};

// The separators a path may use ("/" on POSIX, "/\\" on Windows).
const char* path_separators();

// The status of `path`; with follow_links false a symlink is described itself (lstat). Returns 0 or an errno value
// (ENOENT, ELOOP for a symlink loop, ENOTDIR, EACCES, ...).
int file_status(const std::string& path, bool follow_links, FileStatus& out);
// The status of whatever standard output is. Returns 0 or an errno value.
int standard_output_status(FileStatus& out);
// The target a symlink holds, as written in it (maybe relative). Returns 0 or an errno value.
int read_link(const std::string& path, std::string& target);
// rename(2): `from` replaces `to` atomically (Windows: MoveFileEx with MOVEFILE_REPLACE_EXISTING). 0 or errno.
int rename_replace(const std::string& from, const std::string& to);
int remove_file(const std::string& path);  // 0 or errno
// Flushes a directory's entries to disk (after a rename); best effort, a no-op where the system has no such call.
void sync_directory(const std::string& dir);
// Whether this process may write `path` (access(W_OK)), or read and list the directory `dir`. 0 or errno.
int check_writable(const std::string& path);
int check_readable_directory(const std::string& dir);
// `dir` with every symlink and ".." resolved (realpath), or `dir` itself when that fails.
std::string canonical_directory(const std::string& dir);
long process_id();

enum class LockResult { Locked, Held, Unsupported };

// An open file (a descriptor on POSIX, a HANDLE on Windows), closed by the destructor. Move-only; one thread.
class File {
 public:
  File() = default;
  ~File();
  File(File&& other) noexcept;
  File& operator=(File&& other) noexcept;
  File(const File&) = delete;
  File& operator=(const File&) = delete;

  // A new file that must not exist yet (O_EXCL: never through a planted link), for writing. 0 or errno (EEXIST).
  static int create_new(const std::string& path, File& out);
  // An existing character device or FIFO, for writing in place. A FIFO without a reader fails at once with ENXIO
  // instead of blocking. 0 or errno.
  static int open_in_place(const std::string& path, File& out);
  // For reading, without blocking on a FIFO; with no_follow a symlink is refused (ELOOP). 0 or errno.
  static int open_for_reading(const std::string& path, bool no_follow, File& out);
  // A lock file, created when missing, never through a symlink. 0 or errno.
  static int open_lock_file(const std::string& path, File& out);
  // Standard output, written through but never closed by this object.
  static File standard_output();

  bool is_open() const;
  int status(FileStatus& out) const;
  // Writes up to n bytes (interrupted calls retried); `written` = what was taken. 0 or errno (EPIPE, ENOSPC, ...).
  int write_some(const char* data, size_t n, size_t& written);
  // Reads up to n bytes; got = 0 at the end of the file. 0 or errno.
  int read_some(char* data, size_t n, size_t& got);
  int sync();                          // to disk (fsync / FlushFileBuffers); 0 or errno
  int set_permissions(unsigned mode);  // the permission bits (a no-op on Windows); 0 or errno
  int close();                         // 0 or errno; the object is closed afterwards either way
  // An exclusive advisory lock (flock / LockFileEx), without waiting. Released by close().
  LockResult try_lock();
  // Who holds the lock on this file ("process 4242 (trainscope)"), or "" when it cannot be told.
  std::string lock_holder() const;

 private:
  intptr_t handle_ = -1;
  bool owned_ = true;
};

}  // namespace platform
