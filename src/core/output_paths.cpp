// The checks an output path gets before any long work starts (core::check_output_path) and the refusal of two
// outputs of one command that are the same file (core::check_distinct_outputs): the rules of core/files.hpp, applied
// early, so that a path that cannot be written costs the user a second and exit code 2, not a training run.
#include <fmt/format.h>

#include <cerrno>
#include <filesystem>
#include <system_error>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/files_internal.hpp"

namespace core {

using namespace files_detail;

void check_output_path(const std::string& path, std::string_view option) {
  auto refuse = [&](const std::string& why, const std::string& todo) {
    throw Error(ErrorKind::InvalidArgument, fmt::format("{} {}: {}; {}", option, path, why, todo));
  };
  if (path == "-") return;
  if (path.empty()) refuse("the file name is empty", "give a file name, or - for standard output");
  platform::FileStatus st;
  if (const int error = platform::file_status(path, true, st); error == 0) {
    if (st.type == platform::FileType::Directory) refuse("is a directory", "give a file name");
    if (writes_in_place(st.type)) {
      // Written in place: it must accept writes. A FIFO is not opened here (that would need its reader now).
      if (const int denied = platform::check_writable(path))
        refuse(fmt::format("{} not writable: {}", kind_of(st.type), errno_text(denied)), "choose a writable path");
      if (st.type == platform::FileType::CharDevice) {
        platform::File device;
        if (const int failed = platform::File::open_in_place(path, device))
          refuse(fmt::format("cannot open the character device for writing: {}", errno_text(failed)),
                 "choose a writable path");
      }
      return;
    }
    if (st.type != platform::FileType::Regular)
      refuse(fmt::format("is {}, which trainscope does not write to", kind_of(st.type)),
             "give a regular file, a character device or a FIFO");
  } else if (error == ELOOP) {
    refuse("is a symlink loop", "fix the link or choose another path");
  } else if (error == ENOTDIR) {
    refuse("a part of the path is not a directory", "choose a path in an existing directory");
  } else if (error != ENOENT) {
    refuse(fmt::format("cannot be checked: {}", errno_text(error)), "choose another path");
  }
  // Absent or a regular file: replaced by a temporary file renamed in its (resolved) directory.
  std::string target;
  try {
    target = resolve_symlinks(path);
  } catch (const std::system_error& e) {
    refuse(fmt::format("cannot follow its symlinks: {}", e.code().message()), "fix the link or choose another path");
  }
  const std::string dir = parent_dir(target);
  platform::FileStatus dir_st;
  if (platform::file_status(dir, true, dir_st) != 0 || dir_st.type != platform::FileType::Directory)
    refuse(fmt::format("the directory {} does not exist", dir), "create it first or choose another path");
  std::string probe;
  platform::File probe_file;
  if (const int error = create_beside(target, "probe", probe, probe_file)) {
    // A name near the file system's limit (255 bytes) leaves no room for the temporary name beside it (issue 34: it
    // read "cannot create files in the directory .").
    if (error == ENAMETOOLONG)
      refuse(fmt::format("the name ({} characters) is too long for this file system: the file is written through a "
                         "temporary one beside it, named after it ({} characters)",
                         base_name(target).size(), base_name(probe).size()),
             "choose a shorter name");
    refuse(fmt::format("cannot create files in the directory {}: {}", dir, errno_text(error)),
           "choose a writable directory");
  }
  probe_file.close();
  platform::remove_file(probe);
  // An existing file: one trainscope may replace (checked after the folder, which says more about /proc/version).
  if (platform::file_status(target, true, st) == 0 && st.type == platform::FileType::Regular) {
    const Refusal refusal = replace_refusal(st);
    if (!refusal.why.empty()) refuse(refusal.why, refusal.todo);
  }
}

void check_output_dir(const std::string& dir, std::string_view option, const std::vector<std::string>& names) {
  platform::FileStatus st;
  if (dir.empty())
    throw Error(ErrorKind::InvalidArgument,
                fmt::format("{}: the directory name is empty; give a directory (it is created if missing)", option));
  if (platform::file_status(dir, true, st) == 0) {
    if (st.type != platform::FileType::Directory)
      throw Error(ErrorKind::InvalidArgument,
                  fmt::format("{} {}: is {}, not a directory; give a directory (it is created if missing)", option, dir,
                              kind_of(st.type)));
    for (const std::string& name : names) check_output_path(dir + "/" + name, option);  // each replaceable
    return;
  }
  // Missing: made with its missing parents at the end. Its files' paths must not be too long for the system (past
  // PATH_MAX the files could not be made after the training, and were lost): the system says so for any path of
  // that length, existing or not.
  for (const std::string& name : names) {
    std::error_code error;
    (void)std::filesystem::status(std::filesystem::path(dir) / name, error);
    if (error == std::errc::filename_too_long)
      throw Error(ErrorKind::InvalidArgument,
                  fmt::format("{} {}: the path of its file {} ({} characters) is too long for this system; choose a "
                              "shorter path",
                              option, dir, name, (std::filesystem::path(dir) / name).string().size()));
  }
  // The nearest folder that exists must take files.
  std::filesystem::path missing = std::filesystem::path(dir).lexically_normal();
  if (!missing.has_filename()) missing = missing.parent_path();
  while (missing.has_parent_path() && platform::file_status(missing.parent_path().string(), true, st) != 0)
    missing = missing.parent_path();
  check_output_path(missing.string(), option);
}

void make_output_dir(const std::string& dir, std::string_view what) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    throw Error(ErrorKind::Io,
                fmt::format("cannot create {} {}: {}; choose a writable place", what, dir, ec.message()));
}

namespace {

// What `path` will be written to, as a key two outputs share exactly when they are one file: the device and inode
// of an existing file (through symlinks and hard links; "-" is whatever standard output is), else the canonical
// path of the file the symlinks lead to. Empty for a null device, which takes any number of outputs.
std::string output_identity(const std::string& path) {
  platform::FileStatus st;
  const bool exists =
      (path == "-" ? platform::standard_output_status(st) : platform::file_status(path, true, st)) == 0;
  if (exists) {
    if (st.null_device) return "";
    return fmt::format("inode {}:{}", st.device, st.inode);
  }
  if (path == "-") return "standard output";
  std::string target = path;
  try {
    target = resolve_symlinks(path);
  } catch (const std::system_error&) {
  }
  return "path " + platform::canonical_directory(parent_dir(target)) + "/" + base_name(target);
}

}  // namespace

void check_distinct_outputs(const std::vector<NamedOutput>& outputs) {
  std::vector<std::string> keys;
  for (size_t i = 0; i < outputs.size(); ++i) {
    keys.push_back(outputs[i].path.empty() ? "" : output_identity(outputs[i].path));
    if (keys[i].empty()) continue;
    for (size_t j = 0; j < i; ++j)
      if (keys[j] == keys[i]) {
        auto name = [](const NamedOutput& o) {
          return o.path == "-" ? o.option + " - (standard output)" : o.option + " " + o.path;
        };
        throw Error(ErrorKind::InvalidArgument,
                    fmt::format("{}: the same file as {}; give each output a file of its own", name(outputs[i]),
                                name(outputs[j])));
      }
  }
}

}  // namespace core
