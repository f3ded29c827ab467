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
# The C++ runtime as DLLs (libstdc++-6, libgcc_s_seh-1, libwinpthread-1), shipped beside trainscope.exe by
# scripts/package: linked statically (-static-libstdc++), std::thread::join threw "No such process" under wine at the
# end of test_cpu_conv (a ThreadPool's destructor), while the same objects linked against the DLLs passed.
set(TRAINSCOPE_MINGW_DLLS "")
foreach(dll libstdc++-6.dll libgcc_s_seh-1.dll libwinpthread-1.dll)
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=${dll} OUTPUT_VARIABLE path
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT EXISTS "${path}")  # libwinpthread lives with mingw's libraries, not GCC's
    set(path /usr/${triple}/lib/${dll})
  endif()
  get_filename_component(path ${path} REALPATH)
  list(APPEND TRAINSCOPE_MINGW_DLLS ${path})
endforeach()
# wine runs the test executables (the runtime DLLs are copied beside them: third_party/windows.cmake); WINEDEBUG=-all
# keeps wine's own diagnostics out of the tests' output.
find_program(TRAINSCOPE_WINE NAMES wine64 wine)
if(TRAINSCOPE_WINE)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${CMAKE_COMMAND} -E env WINEDEBUG=-all ${TRAINSCOPE_WINE})
endif()
