# CMake glue only: every dependency is a Debian 12 package (see scripts/setup.sh for the list). A Windows build
# cross-compiled with mingw-w64 gets the same targets from third_party/windows.cmake.
if(WIN32 AND CMAKE_CROSSCOMPILING)
  include(${CMAKE_CURRENT_LIST_DIR}/windows.cmake)
  return()
endif()
find_package(Vulkan REQUIRED)             # libvulkan-dev
find_package(ZLIB REQUIRED)               # zlib1g-dev
find_package(CLI11 CONFIG REQUIRED)       # libcli11-dev
find_package(nlohmann_json CONFIG REQUIRED) # nlohmann-json3-dev
find_package(fmt CONFIG REQUIRED)         # libfmt-dev
find_package(Threads REQUIRED)
find_program(GLSLC glslc REQUIRED)        # glslc
find_package(doctest CONFIG)              # doctest-dev (tests only)
find_package(glfw3 CONFIG REQUIRED)       # libglfw3-dev (the dashboard window)
find_package(PkgConfig REQUIRED)          # pkg-config
pkg_check_modules(IMGUI REQUIRED IMPORTED_TARGET imgui)  # libimgui-dev: Dear ImGui 1.86, GLFW + Vulkan backends
