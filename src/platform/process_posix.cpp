// platform/process on POSIX systems (process.hpp).
#include <dlfcn.h>
#include <spawn.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __APPLE__
#include <mach-o/dyld.h>
#endif

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <system_error>

#include "platform/process.hpp"

extern char** environ;

namespace platform {

std::filesystem::path executable_path() {
#ifdef __APPLE__
  char path[4096];
  uint32_t size = sizeof path;
  return _NSGetExecutablePath(path, &size) == 0 ? std::filesystem::path(path) : std::filesystem::path();
#else
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path() : self;
#endif
}

std::vector<std::string> environment() {
  std::vector<std::string> out;
  for (char** e = environ; *e; ++e) out.emplace_back(*e);
  return out;
}

void set_env(const std::string& name, const std::string& value) { ::setenv(name.c_str(), value.c_str(), 1); }

void unset_env(const std::string& name) { ::unsetenv(name.c_str()); }

bool is_executable(const std::filesystem::path& path) { return ::access(path.c_str(), X_OK) == 0; }

std::string executable_name(const std::string& stem) { return stem; }

void* loaded_library_symbol(const char* library, const char* symbol) {
  void* handle = ::dlopen(library, RTLD_LAZY | RTLD_NOLOAD);
  if (!handle) return nullptr;
  void* address = ::dlsym(handle, symbol);
  ::dlclose(handle);  // only drops the reference RTLD_NOLOAD took: the library stays loaded by whoever loaded it
  return address;
}

std::string pin_xinput_library() { return ""; }  // GLFW uses no XInput here: nothing to pin

int run_reading_lines(const std::filesystem::path& program, const std::vector<std::string>& args,
                      const std::vector<std::string>& env, const std::function<bool(const std::string&)>& on_line) {
  std::vector<std::string> argv_text = args, env_text = env;
  std::vector<char*> argv, envp;
  for (auto& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);

  int fds[2];
  if (::pipe(fds) != 0) throw std::system_error(errno, std::generic_category(), "pipe");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    throw std::system_error(rc, std::generic_category(), program.string());
  }
  if (FILE* in = ::fdopen(fds[0], "r")) {
    char line[4096];
    while (std::fgets(line, sizeof line, in)) {
      std::string text(line, std::strcspn(line, "\n"));
      if (!on_line(text)) break;
    }
    std::fclose(in);
  } else {
    ::close(fds[0]);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

Child::Child(const std::filesystem::path& program, const std::vector<std::string>& args,
             const std::filesystem::path& stdout_path, const std::filesystem::path& stderr_path, bool create_stdout) {
  std::vector<std::string> argv_text = args;
  std::vector<char*> argv;
  for (auto& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, stdout_path.c_str(),
                                   create_stdout ? O_WRONLY | O_CREAT | O_TRUNC : O_WRONLY, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::system_error(rc, std::generic_category(), program.string());
  id_ = pid;
}

Child::~Child() { wait(); }

Child::Exit Child::wait() {
  if (waited_) return exit_;
  waited_ = true;
  int status = 0;
  struct rusage usage {};
  while (::wait4(static_cast<pid_t>(id_), &status, 0, &usage) < 0) {
    if (errno != EINTR) return exit_;  // not our child any more: code -1
  }
  exit_.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  exit_.peak_memory_kb = usage.ru_maxrss;  // kilobytes on Linux (bytes on macOS)
#ifdef __APPLE__
  exit_.peak_memory_kb /= 1024;
#endif
  return exit_;
}

}  // namespace platform
