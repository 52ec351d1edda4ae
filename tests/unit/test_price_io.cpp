// price: the stream side (kernels/price/io.hpp, the records of price.hpp): the input
// filter, problems to records and back through a real stream, bad records refused by
// name, the output record of FinPar's strikes, and the work models of a solve.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/stream.hpp"
#include "kernels/price/detail/work.hpp"
#include "kernels/price/io.hpp"
#include "kernels/price/price.hpp"
#include "test_util.hpp"

using namespace numpipe;
using namespace numpipe::price;
using namespace numpipe::test;

namespace {

// A small FinPar-grid problem (x spans s0 +- 0.06 for these values).
Params small_params(std::int64_t outer) {
  Params p;
  p.outer = outer;
  p.num_x = 32;
  p.num_y = 16;
  p.num_t = 12;
  p.s0 = 0.03;
  p.t = 1.0;
  p.alpha = 0.2;
  p.nu = 0.6;
  p.beta = 0.5;
  return p;
}

// The records written to a stream and read back (the bytes a pipe would carry).
std::vector<Record> through_stream(const std::vector<Record>& records) {
  MemorySink sink;
  {
    StreamWriter w(sink);
    for (const Record& r : records) w.write(r);
    w.finish();
  }
  MemorySource src(sink.bytes.data(), sink.bytes.size());
  return StreamReader(src).read_all();
}


}  // namespace

TEST_CASE("price io: the input filter keeps problems and their parts, refuses another kind by name") {
  RecordHeader problem{"problem", DType::f8, {9}, {{"kind", "price.input"}}};
  CHECK(keep_input_record(problem));
  for (const char* part : {"strike", "maturity", "quotes"}) {
    RecordHeader h{part, DType::f8, {3}, json::object()};
    CHECK(keep_input_record(h));  // read_problems checks their kinds
  }
  RecordHeader fluid{"d", DType::f4, {8, 8}, {{"kind", "fluid.state"}}};
  const std::string m = bad_input([&] { keep_input_record(fluid); });
  CHECK(has(m, "'d'"));
  CHECK(has(m, "has kind 'fluid.state', expected 'price.input'"));
  RecordHeader none{"x", DType::f8, {3}, json::object()};
  CHECK(has(bad_input([&] { keep_input_record(none); }), "has kind '(none)'"));
}

TEST_CASE("price io: a problem with strikes, maturities, a put and a tolerance survives a stream") {
  Problem pr;
  pr.p = small_params(3);
  pr.user_strikes = true;
  pr.strikes = {0.02, 0.03, 0.045};
  pr.maturities = {0.25, 0.5, 1.0};
  pr.put = true;
  pr.tolerance = 1e-4;
  const std::vector<Record> written = problem_records(pr, json::object());
  REQUIRE(written.size() == 3);
  CHECK(written[0].name == "problem");
  CHECK(written[0].attrs["kind"] == "price.input");
  CHECK(written[1].name == "strike");
  CHECK(written[2].name == "maturity");
  const std::vector<Record> back_records = through_stream(written);
  const std::vector<Problem> back = read_problems(back_records);
  REQUIRE(back.size() == 1);
  const Problem& q = back[0];
  CHECK(q.p.outer == 3);
  CHECK(q.p.num_x == 32);
  CHECK(q.p.num_y == 16);
  CHECK(q.p.num_t == 12);
  CHECK(q.p.s0 == 0.03);
  CHECK(q.p.nu == 0.6);
  CHECK(q.user_strikes);
  CHECK(q.strikes == pr.strikes);
  CHECK(q.maturities == pr.maturities);
  CHECK(q.put);
  CHECK(q.tolerance == 1e-4);
  CHECK_FALSE(q.finpar());
  CHECK(q.source == &back_records[0]);
  // the contracts: every strike at every maturity, maturity-major
  const std::vector<Contract> c = q.contracts();
  REQUIRE(c.size() == 9);
  CHECK(c[4].maturity == 1);
  CHECK(c[4].strike == 0.03);
  CHECK(c[4].put);
}

TEST_CASE("price io: a quote table survives a stream; FinPar's problem is one record") {
  Problem pr;
  pr.p = small_params(2);
  pr.quote_kind = QuoteKind::implied_vol;
  pr.quotes = {{0.025, 1.0, false, 0.21, 1.0}, {0.035, 1.0, true, 0.19, 0.5}};
  const std::vector<Problem> back = read_problems(through_stream(problem_records(pr, json::object())));
  REQUIRE(back.size() == 1);
  REQUIRE(back[0].list());
  CHECK(back[0].quote_kind == QuoteKind::implied_vol);
  REQUIRE(back[0].quotes.size() == 2);
  CHECK(back[0].quotes[1].strike == 0.035);
  CHECK(back[0].quotes[1].put);
  CHECK(back[0].quotes[1].quote == 0.19);
  CHECK(back[0].quotes[1].weight == 0.5);

  Problem finpar;
  finpar.p = small_params(4);
  const std::vector<Record> one = problem_records(finpar, json::object());
  CHECK(one.size() == 1);
  const std::vector<Problem> f = read_problems(through_stream(one));
  REQUIRE(f.size() == 1);
  CHECK(f[0].finpar());
  CHECK(f[0].strike(3) == strike_of(3));
}

TEST_CASE("price io: bad records are refused naming the record and the value") {
  const Params p = small_params(3);
  auto problem = [&](json attrs = json::object()) { return make_problem_record(p, std::move(attrs)); };
  auto f8 = [](const char* name, std::vector<double> v, Shape shape, json attrs) {
    return Record::from<double>(name, shape, v.data(), std::move(attrs));
  };
  auto strikes = [&](std::vector<double> v, const char* kind = "price.strikes") {
    const std::int64_t n = static_cast<std::int64_t>(v.size());
    return f8("strike", std::move(v), {n}, {{"kind", kind}});
  };
  // read_problems of records made on the spot (records move, they do not copy)
  auto read = [](auto... make) {
    std::vector<Record> records;
    (records.push_back(make()), ...);
    return bad_input([&] { read_problems(records); });
  };
  const std::vector<double> three = {0.02, 0.03, 0.04};
  CHECK(has(read([&] { return strikes(three); }), "record 'strike' comes before any problem record"));
  CHECK(has(read([&] { return problem(); }, [&] { return strikes(three); }, [&] { return strikes(three); }),
            "two strike records for one problem"));
  CHECK(has(read([&] { return problem(); }, [&] { return strikes({0.02, 0.03}); }),
            "record 'strike' holds 2 values, the problem's OUTER is 3"));
  CHECK(has(read([&] { return problem(); }, [&] { return strikes(three, "price.quotes"); }),
            "record 'strike' has kind 'price.quotes', expected 'price.strikes'"));
  CHECK(has(read([&] { return problem(); }, [&] { return strikes({0.02, 0.03, 5.0}); }), "lies beyond the x grid"));
  CHECK(has(read([&] { return problem(); }, [&] { return strikes({0.02, -0.03, 0.04}); }),
            "strike must be finite and > 0, got -0.03"));
  CHECK(!read([&] { return problem(); },
              [&] { return f8("maturity", {1.0, 0.5}, {2}, {{"kind", "price.maturities"}}); })
             .empty());  // not ascending
  CHECK(has(read([&] { return problem({{"option", "straddle"}}); }),
            "attrs option must be \"call\" or \"put\", got \"straddle\""));
  CHECK(has(read([&] { return problem({{"tolerance", -1}}); }), "attrs tolerance must be a number > 0, got -1"));
  Params one = p;
  one.outer = 1;
  auto problem1 = [&] { return make_problem_record(one, json::object()); };
  const json quotes_attrs = {{"kind", "price.quotes"}, {"quote_kind", "implied_vol"}};
  CHECK(has(read(problem1, [&] { return f8("quotes", {0.03, 1.0, 2.0, 0.2, 1.0}, {1, 5}, quotes_attrs); }),
            "quotes row 1: type must be +1 (call) or -1 (put), got 2"));
  CHECK(has(read(problem1, [&] { return f8("quotes", {0.03, 1.0, 1.0, 0.2}, {1, 4}, quotes_attrs); }),
            "record 'quotes' must be f8 [Q, 5], got f8 [1, 4]"));
  CHECK(has(read(problem1, [&] { return f8("quotes", {0.03, 1.0, 1.0, 0.2, 1.0}, {1, 5},
                                           {{"kind", "price.quotes"}, {"quote_kind", "vol"}}); }),
            "quote_kind must be price, implied_vol or none, got 'vol'"));
}

TEST_CASE("price io: the record of FinPar's strikes carries the prices, the problem and the solve") {
  Problem pr;
  pr.p = small_params(3);
  const std::vector<Record> in = problem_records(pr, json::object());
  const std::vector<Problem> problems = read_problems(in);
  const Setup setup = make_setup(problems[0].p);
  Engine engine;
  engine.precision = Precision::fp32;
  engine.method = Method::forward;
  const std::vector<double> prices = {0.03, 0.029, 0.028};
  const Stamp stamp = [](json attrs, const json&) {
    attrs["stamped"] = true;
    return attrs;
  };
  const Record r = strike_prices_record(problems[0], setup, prices, engine, {{"devices", 2}}, stamp);
  CHECK(r.name == "price");
  CHECK(r.shape == Shape{3});
  CHECK(r.data<double>()[1] == 0.029);
  CHECK(r.attrs["kind"] == "price.output");
  CHECK(r.attrs["precision"] == "fp32");
  CHECK(r.attrs["method"] == "forward");
  CHECK(r.attrs["backend"] == "cpu");
  CHECK(r.attrs["devices"] == 2);
  CHECK(r.attrs["stamped"] == true);
  CHECK(r.attrs["ind_x"] == setup.ind_x);
  CHECK(r.attrs["params"]["num_x"] == 32);
}

TEST_CASE("price io: the work of a solve follows the two-pass traffic model") {
  const Params p = small_params(5);
  // forward: every strike's grid, 7 accesses of a value per grid point and step ("sweep")
  const double steps = double(p.num_t - 1), points = double(p.num_x) * double(p.num_y);
  const Work f64 = work_of_strikes(p, Precision::fp64, Method::forward);
  CHECK(f64.bytes == doctest::Approx(7.0 * 8 * 5 * points * steps).epsilon(1e-12));
  CHECK(f64.flops == flops_of(p));
  const Work f32 = work_of_strikes(p, Precision::fp32, Method::forward);
  CHECK(f32.bytes == doctest::Approx(f64.bytes / 2).epsilon(1e-12));
  // adjoint: one grid's pass, then a weight and a payoff (16 bytes) per strike and x point
  const Work adj = work_of_strikes(p, Precision::fp64, Method::adjoint);
  CHECK(adj.bytes == doctest::Approx(7.0 * 8 * points * steps + 16.0 * 5 * double(p.num_x)).epsilon(1e-12));
  CHECK(adj.flops == adjoint_flops_of(p));
  // contracts by the adjoint: a pass per functional, two with the mixed term
  Params mixed = p;
  mixed.rho = -0.3;
  const Work c0 = work_of_contracts(p, 10, 4, Precision::fp64, Method::adjoint);
  const Work c1 = work_of_contracts(mixed, 10, 4, Precision::fp64, Method::adjoint);
  const double payoffs = 16.0 * 10 * 4 * double(p.num_x);
  CHECK(c0.bytes - payoffs == doctest::Approx(4 * 7.0 * 8 * points * steps).epsilon(1e-12));
  CHECK(c1.bytes - payoffs == doctest::Approx(2 * (c0.bytes - payoffs)).epsilon(1e-12));
  CHECK(c0.flops == doctest::Approx(4 * adjoint_flops_of(p)));
  // contracts by the forward method: every contract's grid; no functional, no traffic
  const Work fw = work_of_contracts(p, 10, 4, Precision::fp64, Method::forward);
  CHECK(fw.bytes == doctest::Approx(7.0 * 8 * 10 * points * steps).epsilon(1e-12));
  CHECK(work_of_contracts(p, 10, 0, Precision::fp64, Method::forward).bytes == 0);
}
