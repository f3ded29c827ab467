// cpu::start_thread: a thread that the system may refuse. Under a limit on processes and threads (a container's or a
// lab machine's pids limit, `ulimit -u`) std::thread's constructor throws std::system_error; a pool or loader that
// had already started threads then unwound past joinable ones (std::terminate) or hung in its destructor. Here a
// refusal is a core::Error that says which thread, why and what to do; the callers stop and join what they started.
#pragma once
#include <string>
#include <system_error>
#include <thread>
#include <utility>

namespace cpu {

// Test-only fault injection (tests/test_cpu_thread_pool.cpp, test_run_input.cpp), as vk::fail_allocation_after: after
// fail_thread_start_after(k) the next k thread starts succeed and the (k+1)-th is refused as the system refuses one
// (EAGAIN); once; k < 0 disarms.
void fail_thread_start_after(long k);
// Whether this start is the injected refusal (and disarms it).
bool injected_thread_refusal();

// The error for a thread the system refused: `what` names it ("CPU thread 5 of 64 (--threads 64)"), `advice` what
// to change ("use fewer --threads"), `reason` the system's (std::system_error::what()).
[[noreturn]] void throw_thread_refused(const std::string& what, const std::string& reason, const std::string& advice);

// std::thread(fn), or core::Error(InvalidArgument) through throw_thread_refused when the system refuses it.
template <typename Fn>
std::thread start_thread(Fn&& fn, const std::string& what, const std::string& advice) {
  try {
    if (injected_thread_refusal())
      throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again),
                              "injected (fail_thread_start_after)");
    return std::thread(std::forward<Fn>(fn));
  } catch (const std::system_error& e) {
    throw_thread_refused(what, e.what(), advice);
  }
}

}  // namespace cpu
