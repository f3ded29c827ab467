// platform/folders: where this user's settings, caches and pictures go. Linux and other Unix: the XDG base directory
// spec (XDG_CONFIG_HOME, XDG_CACHE_HOME, XDG_PICTURES_DIR or xdg-user-dirs' user-dirs.dirs, with $HOME fallbacks);
// Windows: the Known Folders (RoamingAppData, LocalAppData, Pictures); macOS: ~/Library/Application Support,
// ~/Library/Caches and ~/Pictures. Each returns an empty path when the folder cannot be found (no HOME).
#pragma once
#include <filesystem>

namespace platform {

std::filesystem::path user_config_dir();    // e.g. ~/.config; trainscope adds "trainscope/settings.json"
std::filesystem::path user_cache_dir();     // e.g. ~/.cache; trainscope adds "trainscope/..."
std::filesystem::path user_pictures_dir();  // e.g. ~/Pictures

// Why the folders above are empty, in the words of this system ("neither XDG_CACHE_HOME nor HOME is set").
const char* why_no_cache_dir();
const char* why_no_config_dir();

}  // namespace platform
