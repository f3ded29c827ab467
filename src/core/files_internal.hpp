// The pieces core/files.cpp (writing), core/output_paths.cpp (the checks before writing) and core/files_read.cpp
// share: file kinds in words, errno advice, path splitting, symlink resolution, temporary files beside a target, and
// the one rule for which existing files may be replaced. Internal to core's file code: not for other layers.
#pragma once
#include <sys/stat.h>

#include <string>

namespace core::files_detail {

std::string errno_text(int error);

// "a regular file", "a directory", "a FIFO", ... for a mode from stat/lstat.
std::string kind_of(mode_t mode);

// What the user can do about a failed write, by errno ("free some disk space or choose another place").
std::string advice(int error);

std::string parent_dir(const std::string& path);  // "a/b.json" -> "a", "b.json" -> ".", "/b" -> "/"
std::string base_name(const std::string& path);   // "a/b.json" -> "b.json"

// Follows `path` through symlinks (chains, relative and dangling links) to the file they finally name, which may
// not exist yet. Throws std::system_error with the errno (ELOOP after 40 links, as the kernel's MAXSYMLINKS).
std::string resolve_symlinks(std::string path);

// Creates a new, empty file beside `target` (".<name>.<tag>-<pid>-<n>", hidden so a leftover from a kill does not
// look like an output; O_EXCL, so never through a planted link). Returns the descriptor and sets `name`; -1 with
// errno set on failure.
int create_beside(const std::string& target, const char* tag, std::string& name);

// Character devices and FIFOs are written in place, never replaced.
inline bool writes_in_place(mode_t mode) { return S_ISCHR(mode) || S_ISFIFO(mode); }

// Why the existing regular file with status `st` must not be replaced, and what to do; `why` empty when it may be.
// trainscope replaces only its own user's files that their owner can read and write: another user's file (a shared
// cache folder), an unreadable one (mode 0200: what it holds cannot even be kept) and a write-protected one (0444:
// someone protected it) are refused. Decided from the owner and mode bits, not access(), which is always true for
// root.
struct Refusal {
  std::string why, todo;
};
Refusal replace_refusal(const struct stat& st);

}  // namespace core::files_detail
