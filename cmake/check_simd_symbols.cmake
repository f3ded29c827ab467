# The SIMD level files (src/cpu/gemm_avx2.cpp, gemm_avx512.cpp) compiled at -O0 define no code that another file could
# call: only their level's entry points (cpu::avx2_* / cpu::avx512_*). An inline function or template they instantiate
# (std::vector<float>::resize, std::construct_at<float>) is emitted as a weak (ELF) or COMDAT (COFF) definition, and the
# linker keeps one copy of it for the whole program: where it keeps the one compiled with AVX2 or AVX-512 flags, a
# caller on a CPU without those instructions runs them. -O0 emits every such instantiation, so nothing depends on
# what the optimizer happens to inline. Run by ctest (tests/CMakeLists.txt, test_cpu_simd_symbols):
#   cmake -DNM=<nm> -DOBJECTS=<a.o|b.o> -P cmake/check_simd_symbols.cmake
if(NOT NM OR NOT OBJECTS)
  message(FATAL_ERROR "usage: cmake -DNM=<nm> -DOBJECTS=<object|object...> -P check_simd_symbols.cmake")
endif()
string(REPLACE "|" ";" objects "${OBJECTS}")
set(leaks "")
foreach(object ${objects})
  execute_process(COMMAND ${NM} -C --defined-only --extern-only ${object}
    OUTPUT_VARIABLE listing ERROR_VARIABLE errors RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NM} could not read ${object}: ${errors}")
  endif()
  string(REPLACE "\n" ";" lines "${listing}")
  set(entry_points 0)
  foreach(line ${lines})
    # "<address> <type> <name>": code is T (text, COFF's COMDAT text too), W (ELF weak) or i (an indirect function)
    if(NOT line MATCHES "^[0-9a-fA-F]+ ([TWi]) (.*)$")
      continue()
    endif()
    set(name "${CMAKE_MATCH_2}")
    if(name MATCHES "^cpu::avx(2|512)_[a-z_]+\\(")
      math(EXPR entry_points "${entry_points} + 1")
    else()
      list(APPEND leaks "${object}: ${name}")
    endif()
  endforeach()
  if(entry_points EQUAL 0)  # a listing that lost its entry points would check nothing
    message(FATAL_ERROR "${object} defines no cpu::avx2_*/cpu::avx512_* entry point: is it a SIMD level file?")
  endif()
endforeach()
if(leaks)
  list(LENGTH leaks count)
  string(REPLACE ";" "\n  " text "${leaks}")
  message(FATAL_ERROR "${count} functions defined with a SIMD level's flags that other files could link to "
    "(move the code that instantiates them to a file compiled for any x86-64, as cpu::micro_kernel_panel):\n  ${text}")
endif()
message(STATUS "SIMD level files: no function but their entry points (${OBJECTS})")
