# price's tests (kernels/price, tools/price, gen-input price).
if(TARGET numpipe_kernels_price)
  numpipe_unit_test(unit_price SOURCES unit/test_price.cpp LIBS numpipe_kernels_price)
  numpipe_unit_test(unit_price_models SOURCES unit/test_price_models.cpp LIBS numpipe_kernels_price)
  numpipe_unit_test(unit_price_io SOURCES unit/test_price_io.cpp LIBS numpipe_kernels_price)
  numpipe_unit_test(unit_price_tuning SOURCES unit/test_price_tuning.cpp)
  numpipe_cli_tests(price)
endif()
