// The pieces core/files.cpp (writing), core/output_paths.cpp (the checks before writing) and core/files_read.cpp
// share: file kinds in words, errno advice, path splitting, symlink resolution, temporary files beside a target, and
// the one rule for which existing files may be replaced. Internal to core's file code: not for other layers.
#pragma once
#include <string>

#include "platform/files.hpp"

namespace core::files_detail {

std::string errno_text(int error);

// "a regular file", "a directory", "a FIFO", ... for a file type from platform::file_status.
std::string kind_of(platform::FileType type);

// What the user can do about a failed write, by errno ("free some disk space or choose another place").
std::string advice(int error);

std::string parent_dir(const std::string& path);  // "a/b.json" -> "a", "b.json" -> ".", "/b" -> "/"
std::string base_name(const std::string& path);   // "a/b.json" -> "b.json"

// Follows `path` through symlinks (chains, relative and dangling links) to the file they finally name, which may
// not exist yet. Throws std::system_error with the errno (ELOOP after 40 links, as the kernel's MAXSYMLINKS).
std::string resolve_symlinks(std::string path);

// Creates a new, empty file beside `target` (".<name>.<tag>-<pid>-<n>", hidden so a leftover from a kill does not
// look like an output; O_EXCL, so never through a planted link). Opens it into `file` and sets `name`; returns
// the errno value on failure (0 on success).
int create_beside(const std::string& target, const char* tag, std::string& name, platform::File& file);

// Character devices and FIFOs are written in place, never replaced.
inline bool writes_in_place(platform::FileType type) {
  return type == platform::FileType::CharDevice || type == platform::FileType::Fifo;
}

// Why the existing regular file with status `st` must not be replaced, and what to do; `why` empty when it may be.
// trainscope replaces only its own user's files that their owner can read and write: another user's file (a shared
// cache folder), an unreadable one (mode 0200: what it holds cannot even be kept) and a write-protected one (0444:
// someone protected it) are refused. Decided from the owner and mode bits, not access(), which is always true for
// root.
struct Refusal {
  std::string why, todo;
};
Refusal replace_refusal(const platform::FileStatus& st);

}  // namespace core::files_detail
