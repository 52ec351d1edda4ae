// price: the LocVolCalib model and CPU backend against independent checks
// (kernels/price).
#include <doctest/doctest.h>
#include <omp.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "common/error.hpp"
#include "common/random.hpp"
#include "kernels/price/detail/backends.hpp"
#include "kernels/price/detail/grid.hpp"
#include "kernels/price/detail/work.hpp"
#include "kernels/price/model.hpp"
#include "kernels/price/io.hpp"
#include "kernels/price/price.hpp"

using namespace numpipe;
using namespace numpipe::price;

namespace {

Params finpar_large() {
  Params p;
  p.outer = 256;
  p.num_x = 256;
  p.num_y = 256;
  p.num_t = 64;
  p.s0 = 0.03;
  p.t = 5.0;
  p.alpha = 0.2;
  p.nu = 0.6;
  p.beta = 0.5;
  return p;
}

Params tiny(std::int64_t outer) {
  Params p = finpar_large();
  p.outer = outer;
  p.num_x = 21;
  p.num_y = 13;
  p.num_t = 9;
  return p;
}

// Message of the bad-input error thrown by f, "" if none.
template <class F>
std::string bad_input_message(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::bad_input);
    return e.what();
  }
  return "";
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

}  // namespace

TEST_CASE("dd_weights: exact second derivative of quadratics on a non-uniform grid") {
  std::vector<double> x = {0.0, 0.1, 0.25, 0.3, 0.7, 1.0};
  for (std::int64_t i = 1; i + 1 < static_cast<std::int64_t>(x.size()); ++i) {
    double w[3];
    dd_weights(x.data(), static_cast<std::int64_t>(x.size()), i, w);
    auto f = [](double v) { return 3.0 * v * v - 2.0 * v + 1.0; };  // f'' = 6
    double dd = w[0] * f(x[i - 1]) + w[1] * f(x[i]) + w[2] * f(x[i + 1]);
    CHECK(dd == doctest::Approx(6.0).epsilon(1e-9));
    CHECK(w[0] + w[1] + w[2] == doctest::Approx(0.0).scale(1e3));  // constants are annihilated
  }
  double w[3];
  dd_weights(x.data(), 6, 0, w);
  CHECK((w[0] == 0 && w[1] == 0 && w[2] == 0));
  dd_weights(x.data(), 6, 5, w);
  CHECK((w[0] == 0 && w[1] == 0 && w[2] == 0));
}

TEST_CASE("make_setup: FinPar's large grid") {
  Setup s = make_setup(finpar_large());
  // dx = 20*0.2*0.03*sqrt(5)/256; floor(0.03/dx) = floor(256/(4*sqrt 5)) = 28.
  CHECK(s.ind_x == 28);
  CHECK(s.ind_y == 128);
  CHECK(s.x[s.ind_x] == doctest::Approx(0.03).epsilon(1e-14));
  CHECK(s.y[s.ind_y] == doctest::Approx(std::log(0.2)).epsilon(1e-14));
  CHECK(s.time.front() == 0.0);
  CHECK(s.time.back() == 5.0);
  // the separable VarX equals the spec's exp(2*(beta*log X + Y - 0.5*nu^2*T)) to a few ulp
  for (std::int64_t i : {1, 28, 255})
    for (std::int64_t j : {0, 128, 255})
      for (std::int64_t g : {0, 31, 62}) {
        double direct = std::exp(2.0 * (0.5 * std::log(s.x[i]) + s.y[j] - 0.5 * 0.36 * s.time[g]));
        CHECK(var_x(s.px[i], s.py[j] * s.pt[g]) == doctest::Approx(direct).epsilon(1e-14));
      }
}

TEST_CASE("Thomas factors solve the y systems") {
  Setup s = make_setup(tiny(1));
  YTables<double> t = make_y_tables<double>(s);
  const std::int64_t n = s.p.num_y;
  Rng rng(7);
  for (std::int64_t g : {std::int64_t(0), s.p.num_t - 2}) {
    std::vector<double> r(n), z(n), u(n);
    for (auto& v : r) v = rng.uniform(-1, 1);
    double zp = 0, un = 0;
    for (std::int64_t j = 0; j < n; ++j) zp = z[j] = thomas_forward(r[j], t.beta[g * n + j], zp);
    for (std::int64_t j = n - 1; j >= 0; --j) un = u[j] = thomas_back(z[j], t.c[j], un, t.inv[g * n + j]);
    for (std::int64_t j = 0; j < n; ++j) {  // residual of a u[j-1] + b u[j] + c u[j+1] = r[j]
      double a = -0.5 * t.gy[3 * j], b = s.dt_inv[g] - 0.5 * t.gy[3 * j + 1], c = t.c[j];
      double lhs = b * u[j] + (j > 0 ? a * u[j - 1] : 0) + (j + 1 < n ? c * u[j + 1] : 0);
      CHECK(lhs == doctest::Approx(r[j]).epsilon(1e-12));
    }
  }
}

TEST_CASE("validate: bad parameters are refused with the value") {
  auto with = [](auto change) {
    Params p = finpar_large();
    change(p);
    return bad_input_message([&] { validate(p); });
  };
  CHECK(with([](Params& p) { p.num_x = 2; }).find("numX must be in [3") != std::string::npos);
  CHECK(with([](Params& p) { p.num_y = 1; }).find("numY must be in [3") != std::string::npos);
  CHECK(with([](Params& p) { p.num_t = 1; }).find("numT must be in [2") != std::string::npos);
  CHECK(with([](Params& p) { p.outer = 0; }).find("OUTER") != std::string::npos);
  CHECK(with([](Params& p) { p.s0 = -0.03; }).find("s0 must be finite and > 0, got -0.03") != std::string::npos);
  CHECK(with([](Params& p) { p.t = 0; }).find("t must be finite and > 0, got 0") != std::string::npos);
  CHECK(with([](Params& p) { p.alpha = NAN; }).find("alpha must be finite") != std::string::npos);
  CHECK(with([](Params& p) { p.nu = INFINITY; }).find("nu must be finite") != std::string::npos);
  CHECK(with([](Params& p) { p.beta = NAN; }).find("beta must be finite") != std::string::npos);
  CHECK(with([](Params& p) { p.alpha = 0.01; }).find("s0 falls outside the x grid") != std::string::npos);
  CHECK(with([](Params& p) { p.num_x = 1 << 15; p.num_y = 1 << 15; }).find("numX*numY") != std::string::npos);
  CHECK(with([](Params&) {}).empty());
}

TEST_CASE("problem records: round trip and refusals") {
  Params p = finpar_large();
  Record r = make_problem_record(p, json::object());
  Params q = params_from_record(r);
  CHECK(q.outer == 256);
  CHECK(q.num_t == 64);
  CHECK(q.beta == 0.5);
  CHECK(r.attrs["kind"] == "price.input");

  Record wrong = make_problem_record(p, json::object());
  wrong.attrs["kind"] = "fluid.input";
  CHECK(bad_input_message([&] { params_from_record(wrong); }).find("kind 'fluid.input'") != std::string::npos);
  Record frac = make_problem_record(p, json::object());
  frac.data<double>()[1] = 12.5;
  CHECK(bad_input_message([&] { params_from_record(frac); }).find("numX must be a whole number") != std::string::npos);
  double eight[8] = {};
  Record shape = Record::from<double>("problem", {8}, eight, {{"kind", "price.input"}});
  CHECK(bad_input_message([&] { params_from_record(shape); }).find("must be f8 [9]") != std::string::npos);
  Record bad_nu = make_problem_record(p, json::object());
  bad_nu.data<double>()[7] = -0.6;
  CHECK(bad_input_message([&] { params_from_record(bad_nu); }).find("nu must be finite and > 0") != std::string::npos);
}

TEST_CASE("CPU: strike 0 prices the underlying (a linear payoff is preserved)") {
  // With strike 0 the payoff is X, linear in x and constant in y: every DD applied to
  // it vanishes, so each step returns X again and the price is X[indX] = s0.
  Setup s = make_setup(tiny(1));
  std::vector<double> v = solve_cpu(s, Precision::fp64);
  CHECK(v[0] == doctest::Approx(s.x[s.ind_x]).epsilon(1e-12));
  CHECK(s.x[s.ind_x] == doctest::Approx(0.03).epsilon(1e-12));
}

TEST_CASE("CPU: prices fall with the strike and stay above the intrinsic value") {
  Setup s = make_setup(tiny(40));
  std::vector<double> v = solve_cpu(s, Precision::fp64);
  for (std::size_t o = 1; o < v.size(); ++o) {
    CHECK(v[o] < v[o - 1]);
    CHECK(v[o] >= std::max(0.03 - strike_of(static_cast<std::int64_t>(o)), 0.0) - 1e-12);
  }
}

TEST_CASE("CPU: the same bits for any thread count, on both parallel paths") {
  const int saved = omp_get_max_threads();
  for (std::int64_t outer : {1, 2, 5}) {  // 1, 2: a team on one strike; 5: strikes over threads
    Setup s = make_setup(tiny(outer));
    omp_set_num_threads(1);
    std::vector<double> ref = solve_cpu(s, Precision::fp64);
    for (int threads : {2, 3, 4}) {
      omp_set_num_threads(threads);
      CHECK(same_bits(solve_cpu(s, Precision::fp64), ref));
    }
  }
  omp_set_num_threads(saved);
}

TEST_CASE("CPU: fp32 agrees with fp64 to single-precision accuracy") {
  Params p = tiny(8);
  p.num_x = 64;
  p.num_y = 32;
  p.num_t = 16;
  Setup s = make_setup(p);
  std::vector<double> d = solve_cpu(s, Precision::fp64), f = solve_cpu(s, Precision::fp32);
  for (std::size_t o = 0; o < d.size(); ++o) CHECK(f[o] == doctest::Approx(d[o]).epsilon(1e-4));
}

TEST_CASE("CPU: FinPar's medium data set, strikes 0 and 52, to the 6 printed digits") {
  // FinPar's medium.output.data prints 0.03 and 0.0151536 (share/ref/finpar-locvolcalib).
  Params p = finpar_large();
  p.outer = 53;
  p.num_y = 32;
  Setup s = make_setup(p);
  std::vector<double> v = solve_cpu(s, Precision::fp64);
  CHECK(std::fabs(v[0] - 0.03) <= 0.5e-6);
  CHECK(std::fabs(v[52] - 0.0151536) <= 0.5e-7);
}

TEST_CASE("work and traffic models") {
  Params p = finpar_large();
  CHECK(flops_of(p) == doctest::Approx(41.0 * 256 * 256 * 256 * 63));
  CHECK(cuda_bytes_of(p, Precision::fp64, "chunk") == doctest::Approx(5.25 * 8 * 256.0 * 256 * 256 * 63));
  CHECK(cuda_bytes_of(p, Precision::fp32, "chunk") == doctest::Approx(5.25 * 4 * 256.0 * 256 * 256 * 63));
  CHECK(cuda_bytes_of(p, Precision::fp64, "sweep") == doctest::Approx(7.0 * 8 * 256.0 * 256 * 256 * 63));
}

TEST_CASE("CPU: the tabulated x pivots give the same bits as recomputing them per strike") {
  Params p = tiny(3);
  p.num_t = 12;
  Setup s = make_setup(p);
  for (Precision prec : {Precision::fp64, Precision::fp32}) {
    std::vector<double> tabled = solve_cpu(s, prec), recomputed = solve_cpu(s, prec, 1);
    CHECK(same_bits(tabled, recomputed));
  }
}

TEST_CASE("adjoint: the same prices as rolling every strike back, on odd and minimal grids") {
  // The adjoint weights are the transposed steps applied to the unit vector at
  // (indX, indY); if any transposed operator (either solve, E^T, G^T, an edge) were
  // wrong, the prices would differ far beyond rounding.
  struct Shape {
    std::int64_t nx, ny, nt;
  };
  for (Shape sh : {Shape{21, 13, 9}, Shape{37, 45, 7}, Shape{3, 3, 2}, Shape{64, 5, 4}, Shape{5, 70, 12}}) {
    Params p = tiny(30);
    p.num_x = sh.nx;
    p.num_y = sh.ny;
    p.num_t = sh.nt;
    CAPTURE(sh.nx);
    CAPTURE(sh.ny);
    CAPTURE(sh.nt);
    Setup s = make_setup(p);
    const std::vector<double> forward = solve_cpu(s, Precision::fp64);
    const std::vector<double> adjoint = solve_cpu_adjoint(s, Precision::fp64, StrikeRange{0, p.outer});
    REQUIRE(adjoint.size() == forward.size());
    for (std::size_t o = 0; o < forward.size(); ++o)
      CHECK(std::fabs(adjoint[o] - forward[o]) <= 1e-12 * std::fabs(forward[o]) + 1e-17);
  }
}

TEST_CASE("adjoint: FinPar's medium data set, and a range's prices equal the whole problem's bits") {
  Params p = finpar_large();
  p.outer = 128;
  p.num_x = 256;
  p.num_y = 32;
  p.num_t = 64;
  Setup s = make_setup(p);
  const std::vector<double> whole = solve_cpu_adjoint(s, Precision::fp64, StrikeRange{0, 128});
  const std::vector<double> forward = solve_cpu(s, Precision::fp64);
  for (std::size_t o = 0; o < whole.size(); ++o) CHECK(whole[o] == doctest::Approx(forward[o]).epsilon(1e-12));
  const std::vector<double> part = solve_cpu_adjoint(s, Precision::fp64, StrikeRange{40, 77});
  CHECK(same_bits(part, std::vector<double>(whole.begin() + 40, whole.begin() + 77)));
  // fp32 to single-precision accuracy
  const std::vector<double> f = solve_cpu_adjoint(s, Precision::fp32, StrikeRange{0, 128});
  for (std::size_t o = 0; o < whole.size(); ++o) CHECK(f[o] == doctest::Approx(whole[o]).epsilon(1e-4));
}

TEST_CASE("adjoint: the same bits for any thread count") {
  const int saved = omp_get_max_threads();
  Setup s = make_setup(tiny(7));
  omp_set_num_threads(1);
  const std::vector<double> ref = adjoint_weights_cpu(s, Precision::fp64);
  for (int threads : {2, 3, 4}) {
    omp_set_num_threads(threads);
    CHECK(adjoint_weights_cpu(s, Precision::fp64) == ref);
  }
  omp_set_num_threads(saved);
}

TEST_CASE("adjoint: weights and prices refuse a mismatched weight vector") {
  Setup s = make_setup(tiny(3));
  CHECK_THROWS_AS(prices_from_weights(s, Precision::fp64, std::vector<double>(5, 1.0), StrikeRange{0, 3}), Error);
  CHECK(parse_method("forward") == Method::forward);
  CHECK(parse_method("adjoint") == Method::adjoint);
  CHECK(bad_input_message([] { parse_method("backward"); }).find("--method must be adjoint or forward") !=
        std::string::npos);
}
