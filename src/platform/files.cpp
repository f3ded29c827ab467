// platform/files: what every system's File shares (files.hpp); the calls themselves are in files_posix.cpp and
// files_win32.cpp.
#include "platform/files.hpp"

namespace platform {

File::~File() { close(); }

File::File(File&& other) noexcept : handle_(other.handle_), owned_(other.owned_) { other.handle_ = -1; }

File& File::operator=(File&& other) noexcept {
  if (this != &other) {
    close();
    handle_ = other.handle_;
    owned_ = other.owned_;
    other.handle_ = -1;
  }
  return *this;
}

}  // namespace platform
