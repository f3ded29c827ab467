// platform/threads on POSIX (threads.hpp): the list of a thread's exit calls is a thread_local object, whose
// destructor the C library runs when the thread ends (and for the main thread at exit), as for every thread_local.
#include <utility>
#include <vector>

#include "platform/threads.hpp"

namespace platform {
namespace {

struct ExitCalls {
  std::vector<std::pair<void (*)(void*), void*>> calls;
  ~ExitCalls() {
    for (auto it = calls.rbegin(); it != calls.rend(); ++it) it->first(it->second);
  }
};
thread_local ExitCalls t_exit_calls;

}  // namespace

void at_thread_exit(void (*release)(void*), void* object) { t_exit_calls.calls.emplace_back(release, object); }

}  // namespace platform
