# mle-fit's tests (kernels/mle, tools/mle-fit, gen-input mle).
if(TARGET numpipe_kernels_mle)
  numpipe_unit_test(unit_mle SOURCES unit/test_mle.cpp LIBS numpipe_kernels_mle)
  numpipe_unit_test(unit_mle_inference SOURCES unit/test_mle_inference.cpp LIBS numpipe_kernels_mle)
  # --model garch: the CUDA backend's split of each pass over 32 lanes, emulated on the host
  numpipe_unit_test(unit_mle_garch_lanes SOURCES unit/test_mle_garch_lanes.cpp LIBS numpipe_kernels_mle)
  # --model garch: the innovations' standardised AEPD (one and two shapes) and the likelihood's gradient
  numpipe_unit_test(unit_mle_garch_aepd SOURCES unit/test_mle_garch_aepd.cpp LIBS numpipe_kernels_mle)
  # the inference against copies of itself whose exp/log/pow/lgamma round differently and that sum in the
  # CUDA estimate kernel's order (CUDA's stand-ins)
  numpipe_unit_test(unit_mle_rounding SOURCES unit/test_mle_rounding.cpp unit/mle_perturbed.cpp unit/mle_lanes.cpp
                    LIBS numpipe_kernels_mle)
  # the rolling kernel's prescreen bound, on the device (label gpu; CUDA builds only)
  numpipe_gpu_test(gpu_mle SOURCES unit/test_mle_cuda.cu LIBS numpipe_kernels_mle)
  numpipe_unit_test(unit_mle_io SOURCES unit/test_mle_io.cpp LIBS numpipe_kernels_mle)
  numpipe_unit_test(unit_mle_tuning SOURCES unit/test_mle_tuning.cpp)
  numpipe_cli_tests(mle)
endif()
