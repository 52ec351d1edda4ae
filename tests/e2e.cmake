# End to end: the stream's frames and threads (split records, parallel compression
# and decompression, stored frames, --compress), the whole-process profile, the
# CUDA context made while the input is read, and staged host-device copies
# (tests/cli/e2e-*.sh; e2e-*gpu* carry the gpu label).
numpipe_unit_test(unit_stream_frames SOURCES unit/test_stream_frames.cpp)
numpipe_cli_tests(e2e)
# np-stream-bench: the stream's speed on one large record (bench/e2e runs it; not a test).
add_executable(np-stream-bench ${PROJECT_SOURCE_DIR}/bench/stream_bench.cpp)
target_link_libraries(np-stream-bench PRIVATE numpipe_common numpipe_warnings)
set_target_properties(np-stream-bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
