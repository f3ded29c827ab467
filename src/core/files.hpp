// Safe file I/O for every file trainscope writes (report, screenshots, settings, traces, CSV, caches) or reads that
// a user can point it at (settings, lesson scripts): outputs replace their target atomically and never replace what
// is not trainscope's to replace; inputs are read only from regular files, with a size cap, and never block on a FIFO.
//
// Outputs, the one policy (what `write_file_atomically`, `write_files_atomically` and `OutputFile` do):
//   "-"                          standard output (written directly, not closed)
//   absent or a regular file     a temporary file in the same directory, written, flushed, fsync'ed, then renamed
//                                over the target: a reader sees the old file or the new one, never half of one; a
//                                failure (full disk, kill) leaves the old file as it was. The old file's permission
//                                bits are kept. An existing file is replaced only when it is this user's, readable
//                                and writable by its owner: another user's file, an unreadable one (mode 0200) and
//                                a write-protected one (mode 0444) are refused, never replaced.
//   a symlink                    a file the user named (OutputKind::Named): resolved (also chains, relative links
//                                and dangling links); its final target is replaced as above, the link itself kept.
//                                A cache of trainscope's own (OutputKind::Cache): refused, never followed, so that a
//                                planted link cannot make trainscope overwrite the file it points to.
//   a character device or FIFO   (Named only) written directly (/dev/null, /dev/stdout, a pipe to another program),
//                                never replaced; a FIFO without a reader is an error, not a hang; a reader that goes
//                                away is a write error (EPIPE; main() ignores SIGPIPE), not a killed program
//   anything else                refused (a directory, a socket, a block device)
// Errors are core::Error(Io): "cannot write the report r.json: <why>; <what to do>".
// check_output_path applies the same rules before any long work starts, and check_distinct_outputs refuses two
// outputs of one command that are the same file (core/output_paths.cpp).
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "platform/files.hpp"

namespace core {

// Whose file an output is: one the user named (its symlinks followed: the user chose where it goes) or one of
// trainscope's own caches in $XDG_CACHE_HOME/trainscope (peaks.json, pipelines-*.bin: never through a symlink).
enum class OutputKind { Named, Cache };

// Checks, before any long work starts, that `path` can later be written by write_file_atomically: not empty, not a
// directory, its directory exists and a file can be created there (tried with a probe file that is removed at
// once), an existing file one the policy above lets trainscope replace, or, for an existing device/FIFO, that it is
// writable. `option` names it in the message ("--report").
// Throws core::Error(InvalidArgument) "--report /proc/version: <why>; <what to do>" (the command line's exit 2).
void check_output_path(const std::string& path, std::string_view option);

// Checks before any long work that `dir` is a directory in which each of `names` can be written (check_output_path),
// or that it does not exist yet and the nearest folder above it that does takes files (make_output_dir creates it
// and its missing parents at the end). Throws core::Error(InvalidArgument) "--csv out: is a regular file, not a
// directory; ...".
void check_output_dir(const std::string& dir, std::string_view option, const std::vector<std::string>& names);
// Creates `dir` and its missing parents (mkdir -p). Throws core::Error(Io) "cannot create <what> <dir>: <why>; ...".
void make_output_dir(const std::string& dir, std::string_view what);

// One output of a command, for check_distinct_outputs: the option that names it and its path ("" = none).
struct NamedOutput {
  std::string option;  // "--report", "--csv (steps.csv)"
  std::string path;
};

// Refuses two outputs that would be written to the same file, which would leave only the last one written: the
// same path however spelled (symlinks, "..", hard links to one file), or "-" and a path that is standard output.
// Null devices (/dev/null) may be named any number of times. Throws core::Error(InvalidArgument)
// "--trace same.json: the same file as --report same.json; give each output a file of its own".
void check_distinct_outputs(const std::vector<NamedOutput>& outputs);

// An output being written: bytes go to a temporary file (or straight to a device, FIFO or stdout, see above) and
// reach `path` only at commit(). Destroying it without commit() removes the temporary file and leaves the target
// untouched. `what` names the output in messages ("the report", "the screenshot"). Not copyable; one thread.
class OutputFile {
 public:
  // Opens the temporary file (or the device). Throws core::Error(Io), e.g. for a file the policy does not let it
  // replace.
  OutputFile(std::string path, std::string what, OutputKind kind = OutputKind::Named);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // Appends `data`. Throws core::Error(Io) (e.g. "No space left on device").
  void write(std::string_view data);
  // Flushes the temporary file to disk (fsync) and closes it, without replacing the target yet (what
  // write_files_atomically does to every file before it renames the first). Throws core::Error(Io).
  void finish();
  // finish() if not done, then renames the temporary file over the target. Throws core::Error(Io); the target is
  // then unchanged and the temporary file removed.
  void commit();

  // The file the bytes really go to: `path` with its symlinks resolved (what the rename replaces).
  const std::string& target() const { return target_; }

 private:
  [[noreturn]] void fail(const std::string& why, int error);  // with the errno's advice (files_detail::advice)
  [[noreturn]] void fail(const std::string& why, const std::string& todo);
  void discard() noexcept;

  std::string path_, what_, target_, temp_;
  platform::File file_;
  bool direct_ = false;    // a device, FIFO or stdout: no temporary file, no rename
  bool finished_ = false;  // the temporary file is on disk and closed
};

// OutputFile(path, what, kind), write(data), commit(): the whole file in one call.
void write_file_atomically(const std::string& path, std::string_view data, const std::string& what,
                           OutputKind kind = OutputKind::Named);

// One file of write_files_atomically.
struct FileContents {
  std::string path;
  std::string_view data;
  std::string what;  // "the CSV file steps.csv"
};

// Several files that belong together (train --csv's steps.csv, kernels.csv, peaks.csv): every one is written to its
// temporary file and flushed to disk before the first is renamed, so that a full disk or a refused file part-way
// leaves all the old files as they were, never old and new ones mixed. Throws core::Error(Io) as OutputFile.
void write_files_atomically(const std::vector<FileContents>& files);

// The largest settings file or lesson script read_regular_file accepts by default.
inline constexpr size_t kMaxSmallFileBytes = size_t{1} << 20;  // 1 MiB

// Reads the whole of `path`, which must be a regular file of at most `max_bytes` (symlinks followed for a Named file;
// a Cache that is a symlink is refused, as OutputFile refuses to write it). Refuses a FIFO, a device, a socket or a
// directory with a message saying what it is, without blocking (the file is opened with O_NONBLOCK and checked with
// fstat before a byte is read). `what` names the file in messages ("settings file"). Throws core::Error(Io)
// "<what> <path>: <why>"; a missing file says "does not exist".
std::string read_regular_file(const std::string& path, size_t max_bytes, std::string_view what,
                              OutputKind kind = OutputKind::Named);

// The kind of file at `path` in words ("a directory", "a FIFO", "a character device", "a socket", "a block device",
// "a regular file", "a symlink"), as lstat sees it (symlinks are not followed); "" when it does not exist.
std::string file_kind(const std::string& path);

}  // namespace core
