// platform/process on Windows (process.hpp): GetModuleFileNameW, GetEnvironmentStringsW, and CreateProcessW with an
// anonymous pipe for the child's standard output and an environment block of its own.
#include <windows.h>
// psapi.h needs windows.h first
#include <psapi.h>

#include <algorithm>
#include <cstdlib>
#include <system_error>

#include "platform/process.hpp"
#include "platform/win32_text.hpp"

namespace platform {
namespace {

// One argument quoted as the Microsoft C runtime parses a command line: backslashes are literal except before a
// quote, where each is doubled and the quote escaped ("Parsing C++ command-line arguments", Microsoft's docs).
std::wstring quoted(const std::wstring& arg) {
  if (!arg.empty() && arg.find_first_of(L" \t\n\v\"") == std::wstring::npos) return arg;
  std::wstring out = L"\"";
  size_t backslashes = 0;
  for (wchar_t c : arg) {
    if (c == L'\\') {
      ++backslashes;
      continue;
    }
    out.append(c == L'"' ? 2 * backslashes + 1 : backslashes, L'\\');
    backslashes = 0;
    out += c;
  }
  out.append(2 * backslashes, L'\\');
  out += L'"';
  return out;
}

}  // namespace

std::filesystem::path executable_path() {
  std::wstring buffer(32768, L'\0');
  const DWORD n = GetModuleFileNameW(nullptr, buffer.data(), static_cast<DWORD>(buffer.size()));
  if (n == 0 || n >= buffer.size()) return {};
  buffer.resize(n);
  return std::filesystem::path(buffer);
}

std::vector<std::string> environment() {
  std::vector<std::string> out;
  wchar_t* block = GetEnvironmentStringsW();
  if (!block) return out;
  for (const wchar_t* e = block; *e; e += wcslen(e) + 1)
    if (*e != L'=') out.push_back(win32::narrow(e, wcslen(e)));  // "=C:=C:\x" entries are the shell's, not variables
  FreeEnvironmentStringsW(block);
  return out;
}

void set_env(const std::string& name, const std::string& value) {
  // An empty value through _putenv_s would remove the variable; Windows cannot hold an empty one in the C runtime.
  _wputenv_s(win32::widen(name).c_str(), win32::widen(value).c_str());
}

void unset_env(const std::string& name) { _wputenv_s(win32::widen(name).c_str(), L""); }

bool is_executable(const std::filesystem::path& path) {
  const DWORD attributes = GetFileAttributesW(path.wstring().c_str());
  return attributes != INVALID_FILE_ATTRIBUTES && !(attributes & FILE_ATTRIBUTE_DIRECTORY);
}

std::string executable_name(const std::string& stem) { return stem + ".exe"; }

void* loaded_library_symbol(const char* library, const char* symbol) {
  HMODULE module = GetModuleHandleW(win32::widen(library).c_str());  // no reference taken: never loads it
  return module ? reinterpret_cast<void*>(GetProcAddress(module, symbol)) : nullptr;
}

std::string pin_xinput_library() {
  for (const char* name : {"xinput1_4.dll", "xinput1_3.dll", "xinput9_1_0.dll", "xinput1_2.dll", "xinput1_1.dll"}) {
    HMODULE module = LoadLibraryW(win32::widen(name).c_str());
    if (!module) continue;  // GLFW then tries the next one, as here
    HMODULE pinned = nullptr;
    const bool ok = GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_PIN, win32::widen(name).c_str(), &pinned);
    FreeLibrary(module);  // the pin holds it now (or, where pinning failed, GLFW's own reference does)
    return ok ? name : "";
  }
  return "";
}

int run_reading_lines(const std::filesystem::path& program, const std::vector<std::string>& args,
                      const std::vector<std::string>& env, const std::function<bool(const std::string&)>& on_line) {
  SECURITY_ATTRIBUTES inherit{sizeof(SECURITY_ATTRIBUTES), nullptr, TRUE};
  HANDLE read_end = nullptr, write_end = nullptr;
  if (!CreatePipe(&read_end, &write_end, &inherit, 0))
    throw std::system_error(win32::last_errno(), std::generic_category(), "CreatePipe");
  SetHandleInformation(read_end, HANDLE_FLAG_INHERIT, 0);  // only the write end goes to the child

  std::wstring command;
  for (const auto& a : args) command += (command.empty() ? L"" : L" ") + quoted(win32::widen(a));
  // The environment block: "NAME=value\0" each, sorted by name as CreateProcess expects, then one more "\0".
  std::vector<std::wstring> vars;
  for (const auto& e : env) vars.push_back(win32::widen(e));
  std::sort(vars.begin(), vars.end(), [](const std::wstring& a, const std::wstring& b) {
    return _wcsicmp(a.c_str(), b.c_str()) < 0;
  });
  std::wstring block;
  for (const auto& v : vars) block += v + L'\0';
  block += L'\0';

  STARTUPINFOW startup{};
  startup.cb = sizeof startup;
  startup.dwFlags = STARTF_USESTDHANDLES;
  startup.hStdInput = GetStdHandle(STD_INPUT_HANDLE);
  startup.hStdOutput = write_end;
  startup.hStdError = GetStdHandle(STD_ERROR_HANDLE);
  PROCESS_INFORMATION child{};
  const BOOL started = CreateProcessW(program.wstring().c_str(), command.data(), nullptr, nullptr, TRUE,
                                      CREATE_UNICODE_ENVIRONMENT, block.data(), nullptr, &startup, &child);
  const int start_error = started ? 0 : win32::last_errno();
  CloseHandle(write_end);
  if (!started) {
    CloseHandle(read_end);
    throw std::system_error(start_error, std::generic_category(), program.string());
  }
  std::string pending;
  char buffer[4096];
  bool more = true;
  for (DWORD got = 0; more && ReadFile(read_end, buffer, sizeof buffer, &got, nullptr) && got > 0;) {
    pending.append(buffer, got);
    for (size_t nl; more && (nl = pending.find('\n')) != std::string::npos; pending.erase(0, nl + 1)) {
      std::string line = pending.substr(0, nl);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      more = on_line(line);
    }
  }
  if (more && !pending.empty()) on_line(pending);
  CloseHandle(read_end);
  WaitForSingleObject(child.hProcess, INFINITE);
  DWORD code = 1;
  GetExitCodeProcess(child.hProcess, &code);
  CloseHandle(child.hProcess);
  CloseHandle(child.hThread);
  return static_cast<int>(code);
}

Child::Child(const std::filesystem::path& program, const std::vector<std::string>& args,
             const std::filesystem::path& stdout_path, const std::filesystem::path& stderr_path, bool create_stdout) {
  SECURITY_ATTRIBUTES inherit{sizeof(SECURITY_ATTRIBUTES), nullptr, TRUE};
  auto open = [&](const std::filesystem::path& path, DWORD disposition) {
    const DWORD share = FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE;
    HANDLE h = CreateFileW(path.wstring().c_str(), GENERIC_WRITE, share, &inherit, disposition, FILE_ATTRIBUTE_NORMAL,
                           nullptr);
    if (h == INVALID_HANDLE_VALUE) throw std::system_error(win32::last_errno(), std::generic_category(), path.string());
    return h;
  };
  HANDLE out = open(stdout_path, create_stdout ? CREATE_ALWAYS : OPEN_EXISTING);
  HANDLE err = INVALID_HANDLE_VALUE;
  try {
    err = open(stderr_path, CREATE_ALWAYS);
  } catch (...) {
    CloseHandle(out);
    throw;
  }
  std::wstring command;
  for (const auto& a : args) command += (command.empty() ? L"" : L" ") + quoted(win32::widen(a));
  STARTUPINFOW startup{};
  startup.cb = sizeof startup;
  startup.dwFlags = STARTF_USESTDHANDLES;
  startup.hStdInput = GetStdHandle(STD_INPUT_HANDLE);
  startup.hStdOutput = out;
  startup.hStdError = err;
  PROCESS_INFORMATION child{};
  const BOOL started = CreateProcessW(program.wstring().c_str(), command.data(), nullptr, nullptr, TRUE, 0, nullptr,
                                      nullptr, &startup, &child);
  const int start_error = started ? 0 : win32::last_errno();
  CloseHandle(out);  // the child holds its own copies
  CloseHandle(err);
  if (!started) throw std::system_error(start_error, std::generic_category(), program.string());
  CloseHandle(child.hThread);
  handle_ = child.hProcess;
  id_ = static_cast<long>(child.dwProcessId);
}

Child::~Child() {
  wait();
  if (handle_) CloseHandle(static_cast<HANDLE>(handle_));
}

Child::Exit Child::wait() {
  if (waited_) return exit_;
  waited_ = true;
  HANDLE process = static_cast<HANDLE>(handle_);
  WaitForSingleObject(process, INFINITE);
  DWORD code = 0;
  if (GetExitCodeProcess(process, &code)) exit_.code = static_cast<int>(code);
  PROCESS_MEMORY_COUNTERS counters{};
  counters.cb = sizeof counters;
  if (K32GetProcessMemoryInfo(process, &counters, sizeof counters))
    exit_.peak_memory_kb = static_cast<int64_t>(counters.PeakWorkingSetSize / 1024);
  return exit_;
}

}  // namespace platform
