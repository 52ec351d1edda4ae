# integrate: unit tests (CPU), CLI/pipeline tests, GPU tests (label gpu).
if(TARGET numpipe_kernels_integrate)
  numpipe_unit_test(unit_integrate SOURCES unit/test_integrate.cpp LIBS numpipe_kernels_integrate)
  numpipe_unit_test(unit_integrate_table SOURCES unit/test_integrate_table.cpp LIBS numpipe_kernels_integrate)
  numpipe_unit_test(unit_integrate_products SOURCES unit/test_integrate_products.cpp LIBS numpipe_kernels_integrate)
  numpipe_unit_test(unit_integrate_valuation SOURCES unit/test_integrate_valuation.cpp LIBS numpipe_kernels_integrate)
  numpipe_gpu_test(gpu_integrate SOURCES unit/test_integrate_gpu.cpp LIBS numpipe_kernels_integrate)
  numpipe_cli_tests(integrate)
endif()
