// platform/system on Windows (system.hpp): GlobalMemoryStatusEx, GetLogicalProcessorInformation, the processor's
// name from the registry, GetThreadTimes, console handles.
#include <windows.h>
#include <io.h>

#include <cstdio>
#include <vector>

#include "platform/system.hpp"
#include "platform/win32_text.hpp"

namespace platform {

double load_average() { return -1; }  // Windows keeps no load average: the caller says "unknown"

std::tm local_time(std::time_t t) {
  std::tm tm{};
  localtime_s(&tm, &t);
  return tm;
}

double available_memory_bytes() {
  MEMORYSTATUSEX status{};
  status.dwLength = sizeof status;
  return GlobalMemoryStatusEx(&status) ? static_cast<double>(status.ullAvailPhys) : -1;
}

// Windows has no per-process address-space or thread-count limit to read (a job object's limits aside).
double address_space_limit_bytes() { return -1; }
long user_thread_limit() { return -1; }
long real_user_id() { return -1; }

uint64_t physical_memory_bytes() {
  MEMORYSTATUSEX status{};
  status.dwLength = sizeof status;
  return GlobalMemoryStatusEx(&status) ? status.ullTotalPhys : 0;
}

uint64_t last_level_cache_bytes() {
  DWORD bytes = 0;
  GetLogicalProcessorInformation(nullptr, &bytes);
  if (bytes == 0) return 0;
  std::vector<SYSTEM_LOGICAL_PROCESSOR_INFORMATION> info(bytes / sizeof(SYSTEM_LOGICAL_PROCESSOR_INFORMATION));
  if (!GetLogicalProcessorInformation(info.data(), &bytes)) return 0;
  uint64_t l2 = 0, l3 = 0;
  for (const auto& i : info) {
    if (i.Relationship != RelationCache) continue;
    if (i.Cache.Level == 3 && i.Cache.Size > l3) l3 = i.Cache.Size;
    if (i.Cache.Level == 2 && i.Cache.Size > l2) l2 = i.Cache.Size;
  }
  return l3 ? l3 : l2;
}

std::string cpu_model_name() {
  char name[256] = {};
  DWORD size = sizeof name;
  if (RegGetValueA(HKEY_LOCAL_MACHINE, "HARDWARE\\DESCRIPTION\\System\\CentralProcessor\\0", "ProcessorNameString",
                   RRF_RT_REG_SZ, nullptr, name, &size) != ERROR_SUCCESS)
    return "";
  std::string text = name;
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

double thread_cpu_seconds() {
  FILETIME created, exited, kernel, user;
  if (!GetThreadTimes(GetCurrentThread(), &created, &exited, &kernel, &user)) return 0;
  auto seconds = [](const FILETIME& t) {
    return 1e-7 * static_cast<double>((static_cast<uint64_t>(t.dwHighDateTime) << 32) | t.dwLowDateTime);
  };
  return seconds(kernel) + seconds(user);
}

void lower_this_thread_priority() { SetThreadPriority(GetCurrentThread(), THREAD_PRIORITY_BELOW_NORMAL); }

bool normal_priority_thread_cpu_seconds(std::map<long, double>&) { return false; }

bool stderr_is_terminal() { return _isatty(_fileno(stderr)) != 0; }

int stderr_terminal_columns() {
  CONSOLE_SCREEN_BUFFER_INFO info{};
  if (!GetConsoleScreenBufferInfo(GetStdHandle(STD_ERROR_HANDLE), &info)) return 0;
  return info.srWindow.Right - info.srWindow.Left + 1;
}

StdoutToStderr::StdoutToStderr() {
  saved_ = _dup(_fileno(stdout));
  if (saved_ >= 0) _dup2(_fileno(stderr), _fileno(stdout));
}

StdoutToStderr::~StdoutToStderr() {
  if (saved_ >= 0) _dup2(saved_, _fileno(stdout)), _close(saved_);
}

}  // namespace platform
