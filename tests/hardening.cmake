# The hardening tests (tests/cli/hardening-*.sh): the exit-code contract under
# resource limits, signals, write failures and hostile values, across the tools.
# Each script skips the parts whose tools this build lacks. tests/cli/mpi-hardening.sh
# (label mpi) and the fuzz target's corpus replay (tests/fuzz, label fuzz) go with
# them; tests/stress/hostile is run by hand (not by ctest).
numpipe_cli_tests(hardening)
numpipe_unit_test(unit_hardening SOURCES unit/test_hardening.cpp)
