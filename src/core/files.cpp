// Atomic outputs (temporary file + fsync + rename, devices and FIFOs written in place, symlinks of named files kept,
// caches never written through a link, other users' and protected files never replaced) and groups of outputs
// written all or none. The file type is checked on the opened file that is then used, and a FIFO is opened without
// blocking; the system calls themselves are platform/files.hpp's.
#include "core/files.hpp"

#include <fmt/format.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <system_error>

#include "core/error.hpp"
#include "core/files_internal.hpp"

namespace core {
namespace files_detail {

std::string errno_text(int error) { return std::error_code(error, std::generic_category()).message(); }

std::string kind_of(platform::FileType type) {
  switch (type) {
    case platform::FileType::Regular: return "a regular file";
    case platform::FileType::Directory: return "a directory";
    case platform::FileType::Symlink: return "a symlink";
    case platform::FileType::Fifo: return "a FIFO";
    case platform::FileType::CharDevice: return "a character device";
    case platform::FileType::BlockDevice: return "a block device";
    case platform::FileType::Socket: return "a socket";
    case platform::FileType::Other: break;
  }
  return "not a regular file";
}

std::string advice(int error) {
  switch (error) {
    case ENOSPC:
#ifdef EDQUOT
    case EDQUOT:
#endif
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
  const size_t slash = path.find_last_of(platform::path_separators());
  if (slash == std::string::npos) return ".";
  if (slash == 0) return path.substr(0, 1);
  return path.substr(0, slash);
}

std::string base_name(const std::string& path) {
  const size_t slash = path.find_last_of(platform::path_separators());
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string resolve_symlinks(std::string path) {
  for (int hops = 0; hops <= 40; ++hops) {
    platform::FileStatus st;
    if (const int error = platform::file_status(path, false, st)) {
      if (error == ENOENT) return path;
      throw std::system_error(error, std::generic_category());
    }
    if (st.type != platform::FileType::Symlink) return path;
    std::string link;
    if (const int error = platform::read_link(path, link)) throw std::system_error(error, std::generic_category());
    path = std::filesystem::path(link).is_absolute() ? link : parent_dir(path) + "/" + link;
  }
  throw std::system_error(ELOOP, std::generic_category());
}

int create_beside(const std::string& target, const char* tag, std::string& name, platform::File& file) {
  static std::atomic<unsigned> counter{0};
  const std::string dir = parent_dir(target), base = base_name(target);
  for (int attempt = 0; attempt < 100; ++attempt) {
    name = fmt::format("{}/.{}.{}-{}-{}", dir, base, tag, platform::process_id(), counter++);
    const int error = platform::File::create_new(name, file);
    if (error != EEXIST) return error;
  }
  return EEXIST;
}

Refusal replace_refusal(const platform::FileStatus& st) {
  if (!st.owned_by_me)
    return {fmt::format("it belongs to another user (uid {})", st.owner),
            "trainscope replaces only its own user's files: choose another path"};
  if (!st.owner_readable())
    return {fmt::format("it cannot be read (mode {:04o})", st.mode),
            "trainscope does not replace a file it cannot read: choose another path"};
  if (!st.owner_writable())
    return {fmt::format("it is write-protected (mode {:04o})", st.mode),
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
    file_ = platform::File::standard_output();
    direct_ = true;
    target_ = path_;
    return;
  }
  // A cache is looked at itself (a link is not followed); a named file through its symlinks.
  platform::FileStatus st;
  const int status_error = platform::file_status(path_, kind != OutputKind::Cache, st);
  const bool exists = status_error == 0;
  if (!exists && status_error != ENOENT)
    fail(status_error == ELOOP ? "a symlink loop" : errno_text(status_error), status_error);
  if (exists && st.type == platform::FileType::Directory) fail("it is a directory", EISDIR);
  if (kind == OutputKind::Cache && exists && st.type != platform::FileType::Regular)
    fail(fmt::format("it is {}; trainscope writes its caches only as regular files, never through a link or into a "
                     "device",
                     kind_of(st.type)),
         "remove it (the cache is made again)");
  if (exists && writes_in_place(st.type)) {
    if (const int error = platform::File::open_in_place(path_, file_))
      fail(error == ENXIO ? "no program is reading from this FIFO" : errno_text(error), error);
    platform::FileStatus opened;
    if (file_.status(opened) != 0 || !writes_in_place(opened.type))
      fail("it changed while it was being opened", EAGAIN);
    direct_ = true;
    target_ = path_;
    return;
  }
  if (exists && st.type != platform::FileType::Regular)
    fail(fmt::format("it is {}, which trainscope does not write to", kind_of(st.type)), EINVAL);
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
  if (const int error = create_beside(target_, "tmp", temp_, file_)) {
    temp_.clear();
    fail(fmt::format("cannot create a temporary file in {}: {}", parent_dir(target_), errno_text(error)), error);
  }
  if (exists) file_.set_permissions(st.mode);  // the replacement keeps the old file's permissions
}

OutputFile::~OutputFile() { discard(); }

void OutputFile::discard() noexcept {
  file_.close();
  if (!temp_.empty()) platform::remove_file(temp_);
  temp_.clear();
}

void OutputFile::fail(const std::string& why, int error) { fail(why, advice(error)); }

void OutputFile::fail(const std::string& why, const std::string& todo) {
  discard();
  const std::string via = target_.empty() || target_ == path_ ? "" : fmt::format(" (a symlink to {})", target_);
  throw Error(ErrorKind::Io, fmt::format("cannot write {} {}{}: {}; {}", what_, path_, via, why, todo));
}

void OutputFile::write(std::string_view data) {
  if (!file_.is_open() || finished_) fail("it is already closed", EBADF);
  while (!data.empty()) {
    size_t n = 0;
    if (const int error = file_.write_some(data.data(), data.size(), n))
      fail(error == EPIPE ? "the program reading it closed it early" : errno_text(error), error);
    data.remove_prefix(n);
  }
}

void OutputFile::finish() {
  if (finished_) return;
  if (!file_.is_open()) fail("it is already closed", EBADF);
  if (direct_) {
    if (const int error = file_.close()) fail(errno_text(error), error);
    finished_ = true;
    return;
  }
  // fsync before the rename: otherwise a crash just after it can leave an empty file under the target's name.
  if (const int error = file_.sync()) fail(errno_text(error), error);
  if (const int error = file_.close()) fail(errno_text(error), error);
  finished_ = true;
}

void OutputFile::commit() {
  finish();
  if (direct_) return;
  if (temp_.empty()) fail("it is already committed", EBADF);
  if (const int error = platform::rename_replace(temp_, target_)) fail(errno_text(error), error);
  temp_.clear();
  // The rename itself reaches the disk with the directory (best effort: some file systems refuse fsync on it).
  platform::sync_directory(parent_dir(target_));
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
