# ns-step tests: units (CPU backend), CLI pipelines, and the GPU tests (label gpu).
if(TARGET numpipe_kernels_ns)
  numpipe_unit_test(unit_ns SOURCES unit/test_ns.cpp LIBS numpipe_kernels_ns)
  numpipe_unit_test(unit_ns_bodies SOURCES unit/test_ns_bodies.cpp LIBS numpipe_kernels_ns)
  if(NUMPIPE_HAVE_CUDA)
    numpipe_unit_test(unit_ns_cuda SOURCES unit/test_ns_cuda.cpp LIBS numpipe_kernels_ns LABELS gpu)
  endif()
  numpipe_cli_tests(ns)
endif()
