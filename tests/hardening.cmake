# The hardening tests (tests/cli/hardening-*.sh): the exit-code contract under
# resource limits, signals, write failures and hostile values, across the tools.
# Each script skips the parts whose tools this build lacks. tests/cli/mpi-hardening.sh
# (label mpi) and the fuzz target's corpus replay (tests/fuzz, label fuzz) go with
# them; tests/stress/hostile is run by hand (not by ctest).
numpipe_cli_tests(hardening)
numpipe_unit_test(unit_hardening SOURCES unit/test_hardening.cpp)
# LD_PRELOAD fault injector of tests/cli/hardening-signals.sh (a signal at points of an output's commit).
add_library(np-faultshim MODULE cli/faultshim.cpp)
target_link_libraries(np-faultshim PRIVATE ${CMAKE_DL_LIBS})
set_target_properties(np-faultshim PROPERTIES PREFIX "" LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
