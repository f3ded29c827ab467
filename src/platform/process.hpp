// platform/process: this executable's path, the environment, running a helper program whose standard output is
// read line by line (`trainscope bench` runs its OpenBLAS reference that way), and a child whose output goes to files
// (the tests start trainscope so). POSIX: posix_spawn + a pipe; Windows: CreateProcess with an anonymous pipe and an
// environment block of its own, or with file handles.
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace platform {

// The running executable's path (/proc/self/exe, GetModuleFileNameW, _NSGetExecutablePath); empty when unknown.
std::filesystem::path executable_path();
// "NAME=value" for each variable of this process's environment.
std::vector<std::string> environment();
// Sets the variable NAME of this process's environment to `value` (replacing it), or removes it; what std::getenv
// and environment() see afterwards, and what programs started later inherit. setenv/unsetenv on POSIX, _putenv_s on
// Windows (which updates the C runtime's copy and the process's block alike). Not thread-safe: call it while no
// other thread reads the environment (tests, before they start anything).
void set_env(const std::string& name, const std::string& value);
void unset_env(const std::string& name);

// Whether `path` names a file this user may run.
bool is_executable(const std::filesystem::path& path);
// The name of an executable file on this system: `stem` on POSIX, `stem`.exe on Windows.
std::string executable_name(const std::string& stem);

// The address of `symbol` in the shared library `library` if the process has already loaded it, else nullptr
// (dlopen with RTLD_NOLOAD; GetModuleHandleW on Windows: this never loads it nor holds it loaded).
void* loaded_library_symbol(const char* library, const char* symbol);

// Call before glfwInit. GLFW's Windows backend loads an XInput DLL at glfwInit (the first of xinput1_4, xinput1_3,
// xinput9_1_0, xinput1_2, xinput1_1) and frees it at glfwTerminate. Under wine that free can crash the process:
// wine's xinput1_4.dll runs an update thread, and its unload waits for that thread's SetEvent(done_event) only, then
// unmaps the DLL while the thread still has to return from SetEvent into it ("page fault on execute access" in
// hid_update_thread_proc, one window test in five under load: docs/windows.md). This loads the DLL that GLFW takes
// and pins it for the process's life (GetModuleHandleExW with GET_MODULE_HANDLE_EX_FLAG_PIN), so that GLFW's free
// never unloads it. Returns the DLL's name, or "" where there is none (POSIX systems: GLFW uses no XInput there).
std::string pin_xinput_library();

// Runs `program` with `args` (args[0] is the program's name as it sees it) and exactly the environment `env`
// ("NAME=value" each), calls on_line for each line of its standard output (without the newline) until on_line
// returns false or the output ends, then waits for it. Returns its exit code, or -1 when it did not exit normally
// (killed by a signal). Throws std::system_error when it cannot be started.
int run_reading_lines(const std::filesystem::path& program, const std::vector<std::string>& args,
                      const std::vector<std::string>& env, const std::function<bool(const std::string&)>& on_line);

// A program started with this process's environment, its standard output and standard error going to files (no
// shell, no quoting). Throws std::system_error when it cannot be started or a file cannot be opened. The destructor
// waits for it if wait() was not called (a child is never left behind unwaited).
class Child {
 public:
  struct Exit {
    int code = -1;                // the exit code; a death by a signal reads as 128 + the signal, as in a shell
    int64_t peak_memory_kb = 0;  // its peak resident memory (ru_maxrss; Windows: the peak working set)
  };
  // args[0] is the program's name as it sees it. Standard output goes to `stdout_path`, created or truncated, or,
  // with `create_stdout` false, an existing file written from its start (/dev/full on Linux); standard error to
  // `stderr_path`, created or truncated.
  Child(const std::filesystem::path& program, const std::vector<std::string>& args,
        const std::filesystem::path& stdout_path, const std::filesystem::path& stderr_path, bool create_stdout = true);
  ~Child();
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  long id() const { return id_; }  // the process id (what kill or taskkill takes)
  Exit wait();                     // once: later calls return the same

 private:
  long id_ = 0;
  void* handle_ = nullptr;  // Windows: the process handle
  bool waited_ = false;
  Exit exit_;
};

}  // namespace platform
