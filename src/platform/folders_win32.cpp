// platform/folders on Windows (folders.hpp): the Known Folders (SHGetKnownFolderPath): RoamingAppData for settings,
// LocalAppData for caches (they belong to this machine), Pictures for lesson screenshots.
#include <windows.h>
#include <knownfolders.h>
#include <shlobj.h>

#include <cwchar>

#include "platform/folders.hpp"
#include "platform/win32_text.hpp"

namespace platform {
namespace {

std::filesystem::path known_folder(REFKNOWNFOLDERID id) {
  PWSTR path = nullptr;
  std::filesystem::path out;
  if (SHGetKnownFolderPath(id, 0, nullptr, &path) == S_OK && path) out = std::filesystem::path(path);
  CoTaskMemFree(path);
  return out;
}

}  // namespace

std::filesystem::path user_config_dir() { return known_folder(FOLDERID_RoamingAppData); }
std::filesystem::path user_cache_dir() { return known_folder(FOLDERID_LocalAppData); }
std::filesystem::path user_pictures_dir() { return known_folder(FOLDERID_Pictures); }

const char* why_no_cache_dir() { return "Windows gave no LocalAppData folder for this user"; }
const char* why_no_config_dir() { return "Windows gave no AppData folder for this user"; }

}  // namespace platform
