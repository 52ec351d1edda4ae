// main() for GPU unit tests: exits 77 (ctest: skipped) when no CUDA device is
// visible, so the same test list runs on CI (no GPU) and on a GPU machine.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

#include "common/device.hpp"

int main(int argc, char** argv) {
  if (numpipe::cuda_device_count() == 0) {
    std::printf("SKIP: no CUDA device visible\n");
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
