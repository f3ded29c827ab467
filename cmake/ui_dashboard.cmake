# The dashboard: its data model, layout, panels, lesson scripts and the figures' wording shared by the last two
# (src/ui/dashboard*, layout*, panel*, lesson*, figure*), on
# top of the rendering layer (trainscope_ui), the plot widget (trainscope_ui_plot) and the live training session
# (trainscope_run).
file(GLOB dashboard_srcs CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/ui/dashboard*.cpp ${CMAKE_SOURCE_DIR}/src/ui/panel*.cpp
  ${CMAKE_SOURCE_DIR}/src/ui/layout*.cpp ${CMAKE_SOURCE_DIR}/src/ui/lesson*.cpp ${CMAKE_SOURCE_DIR}/src/ui/figure*.cpp)
add_library(trainscope_dashboard STATIC ${dashboard_srcs})
# A unity build as the layers are (src/CMakeLists.txt, at its top): 92 -> 33 CPU-s for these 32 files, cold.
set_target_properties(trainscope_dashboard PROPERTIES UNITY_BUILD ${TRAINSCOPE_UNITY_BUILD} UNITY_BUILD_BATCH_SIZE 16)
target_include_directories(trainscope_dashboard PUBLIC ${CMAKE_SOURCE_DIR}/src)
target_link_libraries(trainscope_dashboard PUBLIC trainscope_ui trainscope_ui_plot trainscope_run fmt::fmt)
target_link_libraries(trainscope PRIVATE trainscope_dashboard)
