// mle: the CUDA backend's tuning knobs read from the environment (kernels/mle/tuning.hpp):
// defaults, every accepted value, C's atoi reading of the numbers, the error for another.
#include <doctest/doctest.h>
#include <stdlib.h>

#include <string>

#include "common/error.hpp"
#include "kernels/mle/tuning.hpp"
#include "test_util.hpp"

using namespace numpipe;
using numpipe::mle::Tuning;
using namespace numpipe::test;

TEST_CASE("mle tuning: the defaults where nothing is set") {
  unsetenv("NUMPIPE_MLE_GROUP");
  unsetenv("NUMPIPE_MLE_PRESCREEN");
  unsetenv("NUMPIPE_MLE_ESTIMATE_LANES");
  const Tuning t = mle::tuning_from_environment();
  CHECK(t.group == 8);
  CHECK(t.prescreen);
  CHECK(t.estimate_lanes == 0);
}

TEST_CASE("mle tuning: NUMPIPE_MLE_GROUP 4, anything else 8") {
  for (const char* four : {"4", "04", "4x"}) {
    ScopedEnv env("NUMPIPE_MLE_GROUP", four);
    CHECK(mle::tuning_from_environment().group == 4);
  }
  for (const char* eight : {"8", "16", "", "four"}) {
    ScopedEnv env("NUMPIPE_MLE_GROUP", eight);
    CHECK(mle::tuning_from_environment().group == 8);
  }
}

TEST_CASE("mle tuning: NUMPIPE_MLE_PRESCREEN off where it reads 0") {
  for (const char* off : {"0", "", "no"}) {
    ScopedEnv env("NUMPIPE_MLE_PRESCREEN", off);
    CHECK_FALSE(mle::tuning_from_environment().prescreen);
  }
  for (const char* on : {"1", "2", "-1"}) {
    ScopedEnv env("NUMPIPE_MLE_PRESCREEN", on);
    CHECK(mle::tuning_from_environment().prescreen);
  }
}

TEST_CASE("mle tuning: NUMPIPE_MLE_ESTIMATE_LANES a power of two up to 32, else exit 2") {
  for (int lanes : {1, 2, 4, 8, 16, 32}) {
    ScopedEnv env("NUMPIPE_MLE_ESTIMATE_LANES", std::to_string(lanes).c_str());
    CHECK(mle::tuning_from_environment().estimate_lanes == lanes);
  }
  for (const char* bad : {"3", "64", "0", "", "x"}) {
    ScopedEnv env("NUMPIPE_MLE_ESTIMATE_LANES", bad);
    std::string message;
    try {
      mle::tuning_from_environment();
    } catch (const Error& e) {
      CHECK(e.code() == ExitCode::bad_input);
      message = e.what();
    }
    CHECK(message == std::string("NUMPIPE_MLE_ESTIMATE_LANES must be 1, 2, 4, 8, 16 or 32, got '") + bad + "'");
  }
}
