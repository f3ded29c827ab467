# Cross-compiling trainscope for 64-bit Windows with Debian's mingw-w64 (g++-mingw-w64-x86-64-posix: GCC with POSIX
# threads, which std::thread needs), its tests run under wine (CMAKE_CROSSCOMPILING_EMULATOR): scripts/test-windows.
#   cmake -S . -B build-windows -DCMAKE_TOOLCHAIN_FILE=cmake/mingw64.cmake -DTRAINSCOPE_WINDOWS_DEPS=<folder>
# TRAINSCOPE_WINDOWS_DEPS holds the sources that have no mingw package (GLFW and Dear ImGui, unpacked from Debian's
# source packages by scripts/test-windows); third_party/dependencies.cmake reads it.
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(triple x86_64-w64-mingw32)
set(CMAKE_C_COMPILER ${triple}-gcc-posix)
set(CMAKE_CXX_COMPILER ${triple}-g++-posix)
set(CMAKE_RC_COMPILER ${triple}-windres)
set(CMAKE_FIND_ROOT_PATH /usr/${triple})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)   # glslc, dlltool: programs of the build machine
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)    # libraries and headers: the mingw ones (zlib)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# One self-contained .exe per program: the C++ runtime, libgcc and winpthreads linked in, so that a fresh Windows
# (or a fresh wine prefix) needs no mingw DLL beside it.
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static -static-libgcc -static-libstdc++")
# wine64 runs the test executables; WINEDEBUG=-all keeps wine's own diagnostics out of the tests' output.
find_program(TRAINSCOPE_WINE NAMES wine64 wine)
if(TRAINSCOPE_WINE)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${CMAKE_COMMAND} -E env WINEDEBUG=-all ${TRAINSCOPE_WINE})
endif()
