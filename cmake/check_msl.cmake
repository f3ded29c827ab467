# ctest's shaders_msl (cmake/shaders.cmake): every shader variant trainscope embeds, compiled to SPIR-V with the
# build's own glslc flags and translated to Metal Shading Language by Debian's spirv-cross at MSL 2.1 (macOS 10.14,
# the oldest MoltenVK targets) and 3.0, as MoltenVK does on a Mac. A variant that does not translate fails the test
# with spirv-cross's message. No Metal compiler exists here: this checks the translation, not the Metal build.
#   cmake -DGLSLC=... -DSPIRV_CROSS=... -DSHADER_DIR=... -DVARIANTS=<file> -DWORK=<dir> -P check_msl.cmake
cmake_minimum_required(VERSION 3.22)  # list() keeps empty elements (CMP0007)
file(STRINGS ${VARIANTS} variants)
file(MAKE_DIRECTORY ${WORK})
set(count 0)
foreach(line ${variants})
  string(REPLACE "|" ";" parts "${line}")
  list(GET parts 0 name)
  list(GET parts 1 source)
  list(SUBLIST parts 2 -1 defines)
  list(REMOVE_ITEM defines "")
  set(spv ${WORK}/${name}.spv)
  execute_process(COMMAND ${GLSLC} --target-env=vulkan1.2 -O -I ${SHADER_DIR}/common ${defines} -o ${spv}
                          ${SHADER_DIR}/${source}.comp
                  RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${name}: glslc failed: ${err}")
  endif()
  foreach(version 20100 30000)
    execute_process(COMMAND ${SPIRV_CROSS} --msl --msl-version ${version} ${spv} --output ${WORK}/${name}.metal
                    RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_VARIABLE out)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "${name}: spirv-cross --msl --msl-version ${version} failed: ${err}${out}")
    endif()
  endforeach()
  math(EXPR count "${count} + 1")
endforeach()
if(count EQUAL 0)
  message(FATAL_ERROR "no shader variants listed in ${VARIANTS}")
endif()
message(STATUS "${count} shader variants translate to MSL 2.1 and 3.0")
