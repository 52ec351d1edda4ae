# profile-report: the report library (parsing, derived numbers, renderings,
# calibration) is shared with its unit tests; CUDA calibration kernels only in
# CUDA builds, else a fallback that says there is no CUDA device.
if(NUMPIPE_HAVE_CUDA)
  set(PROFILE_REPORT_CALIBRATE_CUDA profile-report/calibrate.cu)
else()
  set(PROFILE_REPORT_CALIBRATE_CUDA profile-report/calibrate_nocuda.cpp)
endif()
add_library(numpipe_profile_report STATIC
  profile-report/report.cpp profile-report/store.cpp profile-report/calibrate_cpu.cpp
  ${PROFILE_REPORT_CALIBRATE_CUDA})
target_include_directories(numpipe_profile_report PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(numpipe_profile_report PUBLIC numpipe_common PRIVATE numpipe_warnings)
numpipe_tool(profile-report SOURCES profile-report.cpp LIBS numpipe_profile_report)
