# The kernels: one .comp per kernel, compiled once each as the fp32 variant named like the file.
# Other variants (e.g. storage dtypes) are added here as trainscope_shader(<name>_<variant> <file> DEFINE=...).
file(GLOB kernel_sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.comp)
foreach(src ${kernel_sources})
  get_filename_component(kernel ${src} NAME_WE)
  trainscope_shader(${kernel} ${kernel})
endforeach()
