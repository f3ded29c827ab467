# The plot widget of the dashboard (src/ui/plot*.cpp) as its own small library, so that tests/test_ui_plot.cpp can
# run it headlessly without the window, Vulkan or GLFW parts of the ui layer. Dear ImGui 1.86 from Debian 12
# (libimgui-dev, a static libimgui.a) through pkg-config; its stb_truetype comes from libstb (pkg-config Requires).
find_package(PkgConfig REQUIRED)
pkg_check_modules(IMGUI REQUIRED IMPORTED_TARGET imgui)

add_library(trainscope_ui_plot STATIC ${CMAKE_SOURCE_DIR}/src/ui/plot_math.cpp ${CMAKE_SOURCE_DIR}/src/ui/plot.cpp
  ${CMAKE_SOURCE_DIR}/src/ui/plot_header.cpp
  ${CMAKE_SOURCE_DIR}/src/ui/text_fit.cpp)
target_include_directories(trainscope_ui_plot PUBLIC ${CMAKE_SOURCE_DIR}/src)
target_link_libraries(trainscope_ui_plot PUBLIC PkgConfig::IMGUI)
