// platform/files on Windows (files.hpp): CreateFileW, GetFileInformationByHandle, MoveFileExW, LockFileEx. The facts
// (which flags make a create exclusive, which open a link itself, how a rename replaces) are Microsoft's
// documentation's; the same policy as on POSIX is built on them in core/files.cpp.
#include <windows.h>

#include <cerrno>
#include <cctype>
#include <filesystem>
#include <string>

#include "platform/files.hpp"
#include "platform/win32_text.hpp"

namespace platform {
namespace {

using win32::last_errno;
using win32::widen;

HANDLE as_handle(intptr_t h) { return reinterpret_cast<HANDLE>(h); }
intptr_t from_handle(HANDLE h) { return reinterpret_cast<intptr_t>(h); }
constexpr DWORD kShareAll = FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE;

// "NUL", "nul", "C:\x\NUL" and "\\.\NUL" name the null device (a reserved name in any folder).
bool names_null_device(const std::string& path) {
  const size_t slash = path.find_last_of("/\\:");
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  for (char& c : base) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return base == "NUL" || base.rfind("NUL.", 0) == 0;
}

int describe(HANDLE h, FileStatus& out) {
  switch (GetFileType(h)) {
    case FILE_TYPE_CHAR:
      out = FileStatus{};
      out.type = FileType::CharDevice;
      out.mode = 0666;
      return 0;
    case FILE_TYPE_PIPE:
      out = FileStatus{};
      out.type = FileType::Fifo;
      out.mode = 0666;
      return 0;
    default: break;
  }
  BY_HANDLE_FILE_INFORMATION info{};
  if (!GetFileInformationByHandle(h, &info)) return last_errno();
  out = FileStatus{};
  if (info.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT)
    out.type = FileType::Symlink;  // only seen when opened with FILE_FLAG_OPEN_REPARSE_POINT
  else if (info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY)
    out.type = FileType::Directory;
  else
    out.type = FileType::Regular;
  out.mode = (info.dwFileAttributes & FILE_ATTRIBUTE_READONLY) ? 0444 : 0666;
  out.size = (static_cast<uint64_t>(info.nFileSizeHigh) << 32) | info.nFileSizeLow;
  out.device = info.dwVolumeSerialNumber;
  out.inode = (static_cast<uint64_t>(info.nFileIndexHigh) << 32) | info.nFileIndexLow;
  return 0;
}

// Opens `path` only to look at it (no read or write access), following links or not.
HANDLE open_to_look(const std::string& path, bool follow_links) {
  const DWORD flags = FILE_FLAG_BACKUP_SEMANTICS | (follow_links ? 0 : FILE_FLAG_OPEN_REPARSE_POINT);
  return CreateFileW(widen(path).c_str(), 0, kShareAll, nullptr, OPEN_EXISTING, flags, nullptr);
}

}  // namespace

const char* path_separators() { return "/\\"; }

// Windows says "path not found" where POSIX says ENOTDIR: a component of the path is a file, not a folder.
static int not_found_errno(const std::string& path) {
  std::filesystem::path p = std::filesystem::u8path(path).parent_path();
  for (; !p.empty() && p.has_relative_path(); p = p.parent_path()) {
    const DWORD attributes = GetFileAttributesW(p.wstring().c_str());
    if (attributes == INVALID_FILE_ATTRIBUTES) continue;
    return (attributes & FILE_ATTRIBUTE_DIRECTORY) ? ENOENT : ENOTDIR;
  }
  return ENOENT;
}

int file_status(const std::string& path, bool follow_links, FileStatus& out) {
  HANDLE h = open_to_look(path, follow_links);
  if (h == INVALID_HANDLE_VALUE) {
    const int error = last_errno();
    return error == ENOENT ? not_found_errno(path) : error;
  }
  const int error = describe(h, out);
  CloseHandle(h);
  if (error == 0 && out.type == FileType::CharDevice) out.null_device = names_null_device(path);
  return error;
}

int standard_output_status(FileStatus& out) {
  HANDLE h = GetStdHandle(STD_OUTPUT_HANDLE);
  if (h == nullptr || h == INVALID_HANDLE_VALUE) return EBADF;
  return describe(h, out);
}

int read_link(const std::string& path, std::string& target) {
  // The whole chain at once: the final path of the file the link leads to (absolute), which resolve_symlinks then
  // sees as a file that is not a link.
  HANDLE h = open_to_look(path, true);
  if (h == INVALID_HANDLE_VALUE) return last_errno();
  std::wstring buffer(32768, L'\0');
  const DWORD n = GetFinalPathNameByHandleW(h, buffer.data(), static_cast<DWORD>(buffer.size()), FILE_NAME_NORMALIZED);
  const int error = n == 0 || n >= buffer.size() ? last_errno() : 0;
  CloseHandle(h);
  if (error) return error;
  buffer.resize(n);
  if (buffer.rfind(L"\\\\?\\", 0) == 0) buffer.erase(0, 4);
  target = win32::narrow(buffer);
  return 0;
}

int rename_replace(const std::string& from, const std::string& to) {
  return MoveFileExW(widen(from).c_str(), widen(to).c_str(), MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH)
             ? 0
             : last_errno();
}

int remove_file(const std::string& path) { return DeleteFileW(widen(path).c_str()) ? 0 : last_errno(); }

void sync_directory(const std::string&) {}  // MOVEFILE_WRITE_THROUGH already waited for the rename

int check_writable(const std::string& path) {
  const DWORD attributes = GetFileAttributesW(widen(path).c_str());
  if (attributes == INVALID_FILE_ATTRIBUTES) {
    FileStatus st;  // devices (NUL, CON) have no attributes but may be opened
    return file_status(path, true, st);
  }
  return (attributes & FILE_ATTRIBUTE_READONLY) && !(attributes & FILE_ATTRIBUTE_DIRECTORY) ? EACCES : 0;
}

int check_readable_directory(const std::string& dir) {
  const DWORD attributes = GetFileAttributesW(widen(dir).c_str());
  if (attributes == INVALID_FILE_ATTRIBUTES) return last_errno();
  return (attributes & FILE_ATTRIBUTE_DIRECTORY) ? 0 : ENOTDIR;
}

std::string canonical_directory(const std::string& dir) {
  std::error_code ec;
  const std::filesystem::path canonical = std::filesystem::canonical(std::filesystem::u8path(dir), ec);
  if (ec) return dir;
  const auto text = canonical.u8string();
  return std::string(text.begin(), text.end());
}

long process_id() { return static_cast<long>(GetCurrentProcessId()); }

// ---- File ----

namespace {

int open_into(const std::string& path, DWORD access, DWORD disposition, DWORD flags, intptr_t& handle) {
  HANDLE h = CreateFileW(widen(path).c_str(), access, kShareAll, nullptr, disposition, flags, nullptr);
  if (h == INVALID_HANDLE_VALUE) return last_errno();
  handle = from_handle(h);
  return 0;
}

}  // namespace

int File::create_new(const std::string& path, File& out) {
  out = File();
  // CREATE_NEW fails on any existing entry, a link included: never written through a planted link.
  return open_into(path, GENERIC_WRITE, CREATE_NEW, FILE_ATTRIBUTE_NORMAL, out.handle_);
}

int File::open_in_place(const std::string& path, File& out) {
  out = File();
  return open_into(path, GENERIC_WRITE, OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, out.handle_);
}

int File::open_for_reading(const std::string& path, bool no_follow, File& out) {
  out = File();
  if (const int error = open_into(path, GENERIC_READ, OPEN_EXISTING,
                                  FILE_ATTRIBUTE_NORMAL | (no_follow ? FILE_FLAG_OPEN_REPARSE_POINT : 0), out.handle_))
    return error;
  FileStatus st;
  if (no_follow && out.status(st) == 0 && st.type == FileType::Symlink) {
    out.close();
    return ELOOP;
  }
  return 0;
}

int File::open_lock_file(const std::string& path, File& out) {
  out = File();
  if (const int error = open_into(path, GENERIC_READ | GENERIC_WRITE, OPEN_ALWAYS,
                                  FILE_ATTRIBUTE_NORMAL | FILE_FLAG_OPEN_REPARSE_POINT, out.handle_))
    return error;
  FileStatus st;
  if (out.status(st) == 0 && st.type == FileType::Symlink) {
    out.close();
    return ELOOP;
  }
  return 0;
}

File File::standard_output() {
  File f;
  f.handle_ = from_handle(GetStdHandle(STD_OUTPUT_HANDLE));
  f.owned_ = false;
  return f;
}

bool File::is_open() const { return handle_ != -1 && handle_ != 0; }

int File::status(FileStatus& out) const { return describe(as_handle(handle_), out); }

int File::write_some(const char* data, size_t n, size_t& written) {
  written = 0;
  DWORD done = 0;
  const DWORD chunk = n > (1u << 30) ? (1u << 30) : static_cast<DWORD>(n);
  if (!WriteFile(as_handle(handle_), data, chunk, &done, nullptr)) return last_errno();
  if (done == 0 && n > 0) return EIO;
  written = done;
  return 0;
}

int File::read_some(char* data, size_t n, size_t& got) {
  got = 0;
  DWORD done = 0;
  const DWORD chunk = n > (1u << 30) ? (1u << 30) : static_cast<DWORD>(n);
  if (!ReadFile(as_handle(handle_), data, chunk, &done, nullptr)) {
    if (GetLastError() == ERROR_BROKEN_PIPE) return 0;  // a pipe whose writer closed: the end
    return last_errno();
  }
  got = done;
  return 0;
}

int File::sync() { return FlushFileBuffers(as_handle(handle_)) ? 0 : last_errno(); }

int File::set_permissions(unsigned) { return 0; }  // Windows has no owner permission bits to carry over

int File::close() {
  if (!is_open()) return 0;
  HANDLE h = as_handle(handle_);
  handle_ = -1;
  if (!owned_) return 0;
  return CloseHandle(h) ? 0 : last_errno();
}

LockResult File::try_lock() {
  OVERLAPPED at{};
  if (LockFileEx(as_handle(handle_), LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &at))
    return LockResult::Locked;
  const DWORD error = GetLastError();
  return error == ERROR_LOCK_VIOLATION || error == ERROR_IO_PENDING ? LockResult::Held : LockResult::Unsupported;
}

std::string File::lock_holder() const { return ""; }  // Windows does not say who holds a byte-range lock

}  // namespace platform
