// Safe file I/O for every file trainscope writes (report, screenshots, settings, traces, CSV, caches) or reads that
// a user can point it at (settings, lesson scripts): outputs replace their target atomically and never replace what
// is not a regular file; inputs are read only from regular files, with a size cap, and never block on a FIFO.
//
// Outputs, the rules (what `write_file_atomically` and `OutputFile` do):
//   "-"                          standard output (written directly, not closed)
//   absent or a regular file     a temporary file in the same directory, written, flushed, fsync'ed, then renamed
//                                over the target: a reader sees the old file or the new one, never half of one; a
//                                failure (full disk, kill) leaves the old file as it was. The old file's permission
//                                bits are kept.
//   a symlink                    resolved (also chains, relative links and dangling links); its final target is
//                                replaced as above and the link itself is kept
//   a character device or FIFO   written directly (/dev/null, /dev/stdout, a pipe to another program), never
//                                replaced; a FIFO without a reader is an error, not a hang
//   anything else                refused (a directory, a socket, a block device)
// Errors are core::Error(Io): "cannot write the report r.json: <why>; <what to do>".
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace core {

// Checks, before any long work starts, that `path` can later be written by write_file_atomically: not empty, not a
// directory, its directory exists and a file can be created there (tried with a probe file that is removed at
// once), or, for an existing device/FIFO, that it is writable. `option` names it in the message ("--report").
// Throws core::Error(InvalidArgument) "--report /proc/version: <why>; <what to do>" (the command line's exit 2).
void check_output_path(const std::string& path, std::string_view option);

// An output being written: bytes go to a temporary file (or straight to a device, FIFO or stdout, see above) and
// reach `path` only at commit(). Destroying it without commit() removes the temporary file and leaves the target
// untouched. `what` names the output in messages ("the report", "the screenshot"). Not copyable; one thread.
class OutputFile {
 public:
  // Opens the temporary file (or the device). Throws core::Error(Io).
  OutputFile(std::string path, std::string what);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // Appends `data`. Throws core::Error(Io) (e.g. "No space left on device").
  void write(std::string_view data);
  // Flushes to disk (fsync) and renames the temporary file over the target. Throws core::Error(Io); the target is
  // then unchanged and the temporary file removed.
  void commit();

  // The file the bytes really go to: `path` with its symlinks resolved (what the rename replaces).
  const std::string& target() const { return target_; }

 private:
  [[noreturn]] void fail(const std::string& why, int error);
  void discard() noexcept;

  std::string path_, what_, target_, temp_;
  int fd_ = -1;
  bool direct_ = false;  // a device, FIFO or stdout: no temporary file, no rename
  bool owns_fd_ = true;  // false for stdout
};

// OutputFile(path, what), write(data), commit(): the whole file in one call.
void write_file_atomically(const std::string& path, std::string_view data, const std::string& what);

// The largest settings file or lesson script read_regular_file accepts by default.
inline constexpr size_t kMaxSmallFileBytes = size_t{1} << 20;  // 1 MiB

// Reads the whole of `path`, which must be a regular file (symlinks followed) of at most `max_bytes`. Refuses a
// FIFO, a device, a socket or a directory with a message saying what it is, without blocking (the file is opened
// with O_NONBLOCK and checked with fstat before a byte is read). `what` names the file in messages ("settings
// file"). Throws core::Error(Io) "<what> <path>: <why>"; a missing file says "does not exist".
std::string read_regular_file(const std::string& path, size_t max_bytes, std::string_view what);

// The kind of file at `path` in words ("a directory", "a FIFO", "a character device", "a socket", "a block device",
// "a regular file", "a symlink"), as lstat sees it (symlinks are not followed); "" when it does not exist.
std::string file_kind(const std::string& path);

}  // namespace core
