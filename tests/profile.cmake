# profile-report's tests: units of the report library, CLI tests through the tool
# with profile streams written by np-profile-craft (numpipe's own profile writer).
if(TARGET numpipe_profile_report)
  numpipe_unit_test(unit_profile_report SOURCES unit/test_profile_report.cpp LIBS numpipe_profile_report)
  add_executable(np-profile-craft unit/test_profile_report_craft.cpp)
  target_link_libraries(np-profile-craft PRIVATE numpipe_common numpipe_warnings)
  set_target_properties(np-profile-craft PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  numpipe_cli_tests(profile)
endif()
