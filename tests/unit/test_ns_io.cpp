// ns-step's run in the stream (kernels/ns/io.hpp): the state's records read into a
// Problem, the refusals of bad states, the force tables and the work model.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "common/error.hpp"
#include "kernels/ns/io.hpp"

using namespace numpipe;
using namespace numpipe::ns;

namespace {

std::vector<Record> state(std::int64_t n, double rho_value) {
  std::vector<Record> records;
  const json attrs = {{"kind", "ns.state"}, {"box", {1.0, 2.0, 3.0}}, {"re", 100.0}, {"c", 10.0},
                      {"bc", "x=periodic,y=periodic,z=periodic"}, {"t", 0.25}, {"step", 7}};
  for (int v = 0; v < kVars; ++v) {
    std::vector<double> values(static_cast<std::size_t>(n * n * n), v == 0 ? rho_value : 0.5 * v);
    records.push_back(Record::from(kVarNames[v], Shape{n, n, n}, values.data(), attrs));
  }
  return records;
}

}  // namespace

TEST_CASE("read_state: the parameters, time and step come from rho's attrs; the payloads go") {
  auto records = state(4, 1.0);
  json input_attrs;
  const Problem pr = read_state(records, input_attrs);
  CHECK(pr.params.n[0] == 4);
  CHECK(pr.params.box[2] == 3.0);
  CHECK(pr.params.re == 100.0);
  CHECK(pr.params.c == 10.0);
  CHECK(pr.t0 == 0.25);
  CHECK(pr.step0 == 7);
  CHECK(pr.fields[2][5] == 1.0);
  CHECK(input_attrs["kind"] == "ns.state");
  CHECK(records[0].payload.size() == 0);
}

TEST_CASE("read_state refuses a missing field and a second state") {
  auto records = state(4, 1.0);
  records.pop_back();
  json attrs;
  CHECK_THROWS_AS(read_state(records, attrs), Error);
  auto twice = state(4, 1.0);
  auto more = state(4, 1.0);
  twice.push_back(std::move(more[0]));
  CHECK_THROWS_AS(read_state(twice, attrs), Error);
}

TEST_CASE("require_positive_density refuses rho <= 0 and NaN") {
  for (double bad : {0.0, -1.0, std::numeric_limits<double>::quiet_NaN()}) {
    auto records = state(4, 1.0);
    json attrs;
    Problem pr = read_state(records, attrs);
    pr.fields[0][9] = bad;
    CHECK_THROWS_AS(require_positive_density(pr), Error);
  }
  auto records = state(4, 1.0);
  json attrs;
  CHECK_NOTHROW(require_positive_density(read_state(records, attrs)));
}

TEST_CASE("body force tables: the total sums the bodies in order; one body's its own columns") {
  std::vector<ForceRow> rows(2);
  rows[0].t = 0.5;
  rows[0].f = {1, 2, 3, 10, 20, 30};
  rows[1].t = 1.5;
  rows[1].f = {-1, 0.25, 4, 1, 1, 1};
  const std::vector<double> total = body_force_total(rows, 2);
  CHECK(total == std::vector<double>{0.5, 11, 22, 33, 1.5, 0, 1.25, 5});
  CHECK(body_force_of(rows, 1) == std::vector<double>{0.5, 10, 20, 30, 1.5, 1, 1, 1});
  CHECK(body_force_of(rows, 0) == std::vector<double>{0.5, 1, 2, 3, 1.5, -1, 0.25, 4});
}

TEST_CASE("first_non_finite_point names the point in the whole grid") {
  Result res;
  res.block_offset[0] = 8;
  for (int a = 0; a < 3; ++a) res.block_n[a] = 2;
  for (auto& f : res.fields) f.assign(8, 1.0);
  CHECK(first_non_finite_point(res).empty());
  res.fields[2][5] = std::numeric_limits<double>::infinity();  // i=1, j=0, k=1
  CHECK(first_non_finite_point(res).rfind("vy[9, 0, 1] is ", 0) == 0);
}

TEST_CASE("work model: flops per point and sub-step by order; bytes per step") {
  CHECK(flops_per_point_substep(4) == 190);
  CHECK(flops_per_point_substep(2) == 120);
  CHECK(bytes_per_step(1000, false) == 3 * 1000 * 128.0);
  CHECK(bytes_per_step(1000, true) == 3 * 1000 * 64.0);
}
