# Cross-compiling trainscope's core and CPU layers for 64-bit ARM (AArch64) Linux with Debian's g++-aarch64-linux-gnu,
# their tests run under qemu-aarch64-static (CMAKE_CROSSCOMPILING_EMULATOR): scripts/test-arm.
#   cmake -S . -B build-arm -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64.cmake -DTRAINSCOPE_CPU_ONLY=ON \
#         -DTRAINSCOPE_ARM_SYSROOT=<folder>
# TRAINSCOPE_ARM_SYSROOT holds the AArch64 libraries the cross compiler lacks (zlib, unpacked from Debian's arm64
# packages by scripts/test-arm); third_party/cpu_only.cmake reads it.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(triple aarch64-linux-gnu)
set(CMAKE_C_COMPILER ${triple}-gcc)
set(CMAKE_CXX_COMPILER ${triple}-g++)
set(TRAINSCOPE_ARM_SYSROOT "" CACHE PATH "Folder with zlib's AArch64 files unpacked from Debian's packages (scripts/test-arm)")
set(CMAKE_FIND_ROOT_PATH /usr/${triple} ${TRAINSCOPE_ARM_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)   # programs of the build machine
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)    # libraries and headers: the AArch64 ones
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# qemu runs the test executables; -L points it at the cross toolchain's AArch64 glibc and libstdc++ (the dynamic
# loader and the libraries the executables need).
find_program(TRAINSCOPE_QEMU_AARCH64 qemu-aarch64-static)
if(TRAINSCOPE_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${TRAINSCOPE_QEMU_AARCH64} -L /usr/${triple})
endif()
