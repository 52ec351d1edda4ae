if(TARGET numpipe_kernels_fluid)
  numpipe_unit_test(unit_fluid SOURCES unit/test_fluid.cpp LIBS numpipe_kernels_fluid)
  numpipe_unit_test(unit_fluid_scene SOURCES unit/test_fluid_scene.cpp LIBS numpipe_kernels_fluid)
  if(TARGET render)
    numpipe_cli_tests(fluid)
  else()
    numpipe_cli_tests(fluid SKIP fluid-render)
  endif()
endif()

# bench/fluid_sweep_micro.cpp is built here (not run: a benchmark) so that it
# keeps compiling against kernels/fluid/simd_avx512.hpp.
if(TARGET numpipe_kernels_fluid AND CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64"
   AND CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  add_executable(fluid_sweep_micro ${PROJECT_SOURCE_DIR}/bench/fluid_sweep_micro.cpp)
  target_include_directories(fluid_sweep_micro PRIVATE ${PROJECT_SOURCE_DIR})
  target_compile_options(fluid_sweep_micro PRIVATE -mavx512f -mavx512dq -Wno-maybe-uninitialized)
  target_link_libraries(fluid_sweep_micro PRIVATE OpenMP::OpenMP_CXX)
  # not a tool: outside bin/, where every program must be one (foundation-docs)
  set_target_properties(fluid_sweep_micro PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
endif()
if(TARGET numpipe_kernels_fluid AND TARGET PNG::PNG)
  numpipe_unit_test(unit_mask_png SOURCES unit/test_mask_png.cpp LIBS numpipe_kernels_fluid PNG::PNG)
endif()
