#include <doctest/doctest.h>
#include "common/random.hpp"
TEST_CASE("rng uniform in [0,1)") { numpipe::Rng r(1); for (int i = 0; i < 1000; ++i) { double u = r.uniform(); CHECK(u >= 0.0); CHECK(u < 1.0); } }
