# The dependencies of a Windows build cross-compiled on Debian (cmake/mingw64.cmake; scripts/test-windows), as the
# same targets the Linux build gets from find_package: Debian's packages wherever they serve mingw too, else the
# pieces a Debian package holds, built here.
#   zlib                              libz-mingw-w64-dev (a mingw library)
#   fmt, nlohmann-json, CLI11, glm,   the headers of Debian's packages (header-only use: fmt as FMT_HEADER_ONLY),
#   doctest, stb, Vulkan headers      reached through a folder of links in the build tree, never /usr/include itself
#                                     (glibc's headers must not shadow mingw's)
#   Vulkan's import library           made by dlltool from the prototypes of Debian's vulkan_core.h/vulkan_win32.h:
#                                     the program links vulkan-1.dll, the Vulkan loader every Windows GPU driver
#                                     installs (and wine's builtin, which reaches the host's Vulkan)
#   GLFW 3.3.8, Dear ImGui 1.86       built from Debian's source packages (glfw3, imgui), unpacked by
#                                     scripts/test-windows into TRAINSCOPE_WINDOWS_DEPS
set(TRAINSCOPE_WINDOWS_DEPS "" CACHE PATH "Folder with the unpacked glfw3 and imgui source packages (scripts/test-windows)")
set(staged ${CMAKE_BINARY_DIR}/windows-include)
file(MAKE_DIRECTORY ${staged})
foreach(dir fmt nlohmann CLI glm doctest stb vulkan vk_video)
  if(EXISTS /usr/include/${dir} AND NOT EXISTS ${staged}/${dir})
    file(CREATE_LINK /usr/include/${dir} ${staged}/${dir} SYMBOLIC)
  endif()
endforeach()

# The C++ runtime DLLs (cmake/mingw64.cmake) beside the programs and the tests, where Windows looks first.
file(COPY ${TRAINSCOPE_MINGW_DLLS} DESTINATION ${CMAKE_BINARY_DIR})
file(COPY ${TRAINSCOPE_MINGW_DLLS} DESTINATION ${CMAKE_BINARY_DIR}/tests)

# printf and friends as C99 says (mingw-w64's own implementation): msvcrt's print three exponent digits ("1e-006"),
# which the plot's axis labels and every printed figure would show.
add_compile_definitions(__USE_MINGW_ANSI_STDIO=1)

find_package(ZLIB REQUIRED)
find_package(Threads REQUIRED)
find_program(GLSLC glslc REQUIRED)

add_library(fmt::fmt INTERFACE IMPORTED)
target_include_directories(fmt::fmt INTERFACE ${staged})
target_compile_definitions(fmt::fmt INTERFACE FMT_HEADER_ONLY)
foreach(target nlohmann_json::nlohmann_json CLI11::CLI11 doctest::doctest)
  add_library(${target} INTERFACE IMPORTED)
  target_include_directories(${target} INTERFACE ${staged})
endforeach()
set(doctest_FOUND TRUE)

# vulkan-1.dll's import library, from every vk* prototype of the headers (an import library binds only the functions
# the program calls, so listing extension functions the loader does not export costs nothing).
find_program(DLLTOOL NAMES x86_64-w64-mingw32-dlltool REQUIRED)
set(def ${CMAKE_BINARY_DIR}/vulkan-1.def)
set(exports "")
foreach(header vulkan_core.h vulkan_win32.h)
  file(STRINGS /usr/include/vulkan/${header} lines REGEX "^VKAPI_ATTR .* VKAPI_CALL vk[A-Za-z0-9]+\\(")
  foreach(line ${lines})
    string(REGEX REPLACE "^.* VKAPI_CALL (vk[A-Za-z0-9]+)\\(.*$" "\\1" name "${line}")
    string(APPEND exports "    ${name}\n")
  endforeach()
endforeach()
file(WRITE ${def} "LIBRARY vulkan-1.dll\nEXPORTS\n${exports}")
set(import_lib ${CMAKE_BINARY_DIR}/libvulkan-1.a)
execute_process(COMMAND ${DLLTOOL} -d ${def} -l ${import_lib} -D vulkan-1.dll RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "dlltool could not make vulkan-1.dll's import library from ${def}")
endif()
add_library(Vulkan::Vulkan UNKNOWN IMPORTED)
set_target_properties(Vulkan::Vulkan PROPERTIES IMPORTED_LOCATION ${import_lib}
  INTERFACE_INCLUDE_DIRECTORIES ${staged} INTERFACE_COMPILE_DEFINITIONS VK_USE_PLATFORM_WIN32_KHR)

# GLFW and Dear ImGui from their Debian source packages.
if(NOT EXISTS ${TRAINSCOPE_WINDOWS_DEPS}/glfw/CMakeLists.txt OR NOT EXISTS ${TRAINSCOPE_WINDOWS_DEPS}/imgui/imgui.cpp)
  message(FATAL_ERROR "TRAINSCOPE_WINDOWS_DEPS (${TRAINSCOPE_WINDOWS_DEPS}) must hold glfw/ and imgui/ unpacked "
                      "from Debian's source packages glfw3 and imgui: run scripts/test-windows, which does it")
endif()
set(GLFW_BUILD_EXAMPLES OFF CACHE BOOL "" FORCE)
set(GLFW_BUILD_TESTS OFF CACHE BOOL "" FORCE)
set(GLFW_BUILD_DOCS OFF CACHE BOOL "" FORCE)
set(GLFW_INSTALL OFF CACHE BOOL "" FORCE)
add_subdirectory(${TRAINSCOPE_WINDOWS_DEPS}/glfw ${CMAKE_BINARY_DIR}/glfw EXCLUDE_FROM_ALL)
set(imgui ${TRAINSCOPE_WINDOWS_DEPS}/imgui)
add_library(trainscope_imgui STATIC ${imgui}/imgui.cpp ${imgui}/imgui_draw.cpp ${imgui}/imgui_tables.cpp
  ${imgui}/imgui_widgets.cpp ${imgui}/backends/imgui_impl_glfw.cpp ${imgui}/backends/imgui_impl_vulkan.cpp)
# As Debian's pkg-config file for libimgui-dev: imgui.h and backends/ found from one include folder.
target_include_directories(trainscope_imgui PUBLIC ${imgui})
target_link_libraries(trainscope_imgui PUBLIC glfw Vulkan::Vulkan)
target_compile_options(trainscope_imgui PRIVATE -w)  # third-party code: its warnings are not ours to fix
add_library(PkgConfig::IMGUI ALIAS trainscope_imgui)
