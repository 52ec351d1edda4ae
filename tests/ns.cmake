# ns-step tests: units (CPU backend), CLI pipelines, GPU agreement and benchmarks-as-tests.
if(TARGET numpipe_kernels_ns)
  numpipe_unit_test(unit_ns SOURCES unit/test_ns.cpp LIBS numpipe_kernels_ns)
endif()
