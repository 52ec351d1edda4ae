# Results in and out: users' text tables (common/text_table, gen-input array
# --from-text), export (CSV, NetCDF, VTK), render's animations, colour bars and
# plots. profile-report's own tests are in profile.cmake.
numpipe_unit_test(unit_text_table SOURCES unit/test_text_table.cpp)
numpipe_cli_tests(textin)
if(TARGET nps-export)
  numpipe_unit_test(unit_export SOURCES unit/test_export.cpp LIBS numpipe_export)
  numpipe_cli_tests(export)
endif()
if(TARGET render)
  numpipe_cli_tests(render)
endif()
