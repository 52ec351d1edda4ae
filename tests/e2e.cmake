# End to end: the stream's frames and threads (split records, parallel compression
# and decompression, stored frames, --compress), the whole-process profile, the
# CUDA context made while the input is read, and staged host-device copies
# (tests/cli/e2e-*.sh; e2e-*gpu* carry the gpu label).
numpipe_unit_test(unit_stream_frames SOURCES unit/test_stream_frames.cpp)
numpipe_cli_tests(e2e)
