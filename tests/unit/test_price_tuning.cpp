// price: the CUDA backend's tuning knobs read from the environment (kernels/price/tuning.hpp,
// common/env.hpp): defaults, every accepted value, and the error for another.
#include <doctest/doctest.h>
#include <stdlib.h>

#include <string>

#include "common/error.hpp"
#include "kernels/price/tuning.hpp"
#include "test_util.hpp"

using namespace numpipe;
using numpipe::price::Tuning;
using namespace numpipe::test;

namespace {

// The bad-input message of the tuning read with NAME=VALUE (test_util.hpp's bad_input).
std::string input_error(const char* name, const char* value) {
  ScopedEnv env(name, value);
  return bad_input([] { price::tuning_from_environment(); });
}
}  // namespace

TEST_CASE("price tuning: the defaults where nothing is set") {
  unsetenv("NUMPIPE_PRICE_GRAPH");
  unsetenv("NUMPIPE_PRICE_FUSED");
  unsetenv("NUMPIPE_PRICE_CLUSTER");
  const Tuning t = price::tuning_from_environment();
  CHECK_FALSE(t.graph);
  CHECK(t.fused == Tuning::Fused::automatic);
  CHECK(t.cluster == 0);
}

TEST_CASE("price tuning: NUMPIPE_PRICE_GRAPH is on for 1 only") {
  {
    ScopedEnv env("NUMPIPE_PRICE_GRAPH", "1");
    CHECK(price::tuning_from_environment().graph);
  }
  for (const char* other : {"0", "", "yes", "11"}) {
    ScopedEnv env("NUMPIPE_PRICE_GRAPH", other);
    CHECK_FALSE(price::tuning_from_environment().graph);
  }
}

TEST_CASE("price tuning: NUMPIPE_PRICE_FUSED 0, 1, auto, empty") {
  const std::pair<const char*, Tuning::Fused> cases[] = {{"0", Tuning::Fused::off},
                                                         {"1", Tuning::Fused::required},
                                                         {"auto", Tuning::Fused::automatic},
                                                         {"", Tuning::Fused::automatic}};
  for (const auto& [value, fused] : cases) {
    ScopedEnv env("NUMPIPE_PRICE_FUSED", value);
    CHECK(price::tuning_from_environment().fused == fused);
  }
  CHECK(input_error("NUMPIPE_PRICE_FUSED", "yes") == "NUMPIPE_PRICE_FUSED must be 0, 1 or auto, got 'yes'");
  CHECK(input_error("NUMPIPE_PRICE_FUSED", "1 ") == "NUMPIPE_PRICE_FUSED must be 0, 1 or auto, got '1 '");
}

TEST_CASE("price tuning: NUMPIPE_PRICE_CLUSTER a power of two up to 16") {
  for (int cs : {1, 2, 4, 8, 16}) {
    ScopedEnv env("NUMPIPE_PRICE_CLUSTER", std::to_string(cs).c_str());
    CHECK(price::tuning_from_environment().cluster == cs);
  }
  {
    ScopedEnv env("NUMPIPE_PRICE_CLUSTER", "");
    CHECK(price::tuning_from_environment().cluster == 0);
  }
  for (const char* bad : {"3", "32", "0", "04", "x"})
    CHECK(input_error("NUMPIPE_PRICE_CLUSTER", bad) ==
          std::string("NUMPIPE_PRICE_CLUSTER must be 1, 2, 4, 8 or 16, got '") + bad + "'");
}
