// platform/threads: work to do when a thread ends. POSIX (threads_posix.cpp: a C++ thread_local, which there is
// the system's own thread-local storage) and Win32 (threads_win32.cpp: a fiber-local storage slot, FlsAlloc).
// Why not a thread_local object with a destructor everywhere: mingw-w64's GCC 12 has no native thread-local storage
// and emulates it (libgcc's emutls, one pthread key), and winpthreads ends a thread's keys in the order they were
// made: emutls's key, made at the first thread_local access, before libstdc++'s key for thread_local destructors. So
// at a thread's end its thread_local variables are freed first and their destructors then run on freed memory, whose
// first bytes the heap has reused (measured under wine: a thread_local int reads 0 again in a destructor after the
// thread set 42, and the first 8 of 32 bytes of a thread_local object are overwritten). A std::vector's pointers are
// those first bytes: cpu::ThreadPool's destructor joined garbage (std::terminate: "No such process"), and wine then
// did not end the process.
#pragma once

namespace platform {

// Calls release(object) when the calling thread ends, the last registered first. For the main thread that is at
// exit where the system runs it (POSIX), or never (Windows: the process's memory goes with it). Throws
// std::bad_alloc or std::runtime_error when it cannot register; release is then not called.
void at_thread_exit(void (*release)(void*), void* object);

}  // namespace platform
