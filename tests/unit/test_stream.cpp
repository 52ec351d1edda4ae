#include <doctest/doctest.h>

#include "common/stream.hpp"

using namespace numpipe;

TEST_CASE("a record round-trips through memory") {
  std::vector<double> v = {1.5, -2.25, 3.0};
  MemorySink sink;
  {
    StreamWriter w(sink);
    w.write("x", {3}, v.data(), {{"kind", "test"}});
    w.finish();
  }
  MemorySource src(sink.bytes.data(), sink.bytes.size());
  StreamReader r(src);
  auto recs = r.read_all();
  REQUIRE(recs.size() == 1);
  CHECK(recs[0].name == "x");
  CHECK(recs[0].attrs["kind"] == "test");
  CHECK(recs[0].data<double>()[1] == -2.25);
}
