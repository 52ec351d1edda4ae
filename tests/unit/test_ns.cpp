// ns-step units: stencils, boundary rules, conservation, analytic solutions and
// convergence order, determinism across thread counts (CPU backend).
#include <doctest/doctest.h>
#include <omp.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <vector>

#include "common/error.hpp"
#include "common/random.hpp"
#include "kernels/ns/cpu_impl.hpp"
#include "kernels/ns/ns.hpp"

using namespace numpipe::ns;

namespace {

constexpr double kTwoPi = 6.283185307179586;

std::size_t flat(const Params& p, long long i, long long j, long long k) {
  return static_cast<std::size_t>((i * p.n[1] + j) * p.n[2] + k);
}

Problem make_problem(long long nx, long long ny, long long nz, double box = kTwoPi) {
  Problem pr;
  Params& p = pr.params;
  p.n[0] = nx, p.n[1] = ny, p.n[2] = nz;
  for (double& b : p.box) b = box;
  const std::size_t n = static_cast<std::size_t>(nx * ny * nz);
  for (auto& f : pr.fields) f.assign(n, 0.0);
  std::fill(pr.fields[kRho].begin(), pr.fields[kRho].end(), 1.0);
  return pr;
}

// Smooth random state: a few random Fourier modes per variable (periodic-compatible).
void fill_smooth_random(Problem& pr, std::uint64_t seed, double amp) {
  numpipe::Rng rng(seed);
  const Params& p = pr.params;
  const Geometry g = make_geometry(p);
  for (int v = 0; v < kVars; ++v) {
    double coef[3][4];
    for (auto& row : coef)
      for (double& c : row) c = rng.uniform(-1, 1);
    for (long long i = 0; i < p.n[0]; ++i)
      for (long long j = 0; j < p.n[1]; ++j)
        for (long long k = 0; k < p.n[2]; ++k) {
          const double x = i * g.h[0] * kTwoPi / p.box[0], y = j * g.h[1] * kTwoPi / p.box[1], z = k * g.h[2] * kTwoPi / p.box[2];
          double val = 0;
          for (int m = 0; m < 3; ++m)
            val += coef[m][0] * std::sin((m + 1) * x + coef[m][1]) * std::cos((m + 1) * y + coef[m][2]) *
                   std::cos(m * z + coef[m][3]);
          pr.fields[v][flat(p, i, j, k)] = (v == kRho ? 1.0 + 0.01 * amp * val : amp * val);
        }
  }
}

double mass_of(const Result& r) { return r.diag.back().v[7]; }

}  // namespace

TEST_CASE("ns stencils are exact on polynomials of their order") {
  const double h = 0.37;
  auto poly = [](double x, int deg) { return std::pow(x, deg) + 0.5 * x - 2; };
  auto dpoly = [](double x, int deg) { return deg * std::pow(x, deg - 1) + 0.5; };
  auto d2poly = [](double x, int deg) { return deg * (deg - 1) * std::pow(x, deg - 2); };
  const double x0 = 0.8;
  auto s5 = [&](int deg, double* f) {
    for (int o = 0; o < 5; ++o) f[o] = poly(x0 + (o - 2) * h, deg);
  };
  double f[5];
  for (int deg = 2; deg <= 4; ++deg) {
    s5(deg, f);
    CHECK(d1<4>(f, 1 / (12 * h)) == doctest::Approx(dpoly(x0, deg)).epsilon(1e-12));
    CHECK(d2<4>(f, 1 / (12 * h * h)) == doctest::Approx(d2poly(x0, deg)).epsilon(1e-12));
  }
  s5(5, f);
  CHECK(d2<4>(f, 1 / (12 * h * h)) == doctest::Approx(d2poly(x0, 5)).epsilon(1e-11));
  for (int deg = 2; deg <= 3; ++deg) {
    s5(deg, f);
    CHECK(upwind<4>(1.0, f, 1 / (6 * h)) == doctest::Approx(dpoly(x0, deg)).epsilon(1e-12));
    CHECK(upwind<4>(-2.0, f, 1 / (6 * h)) == doctest::Approx(-2 * dpoly(x0, deg)).epsilon(1e-12));
  }
  s5(2, f);
  CHECK(d1<2>(f, 1 / (2 * h)) == doctest::Approx(dpoly(x0, 2)).epsilon(1e-12));
  CHECK(d2<2>(f, 1 / (h * h)) == doctest::Approx(d2poly(x0, 2)).epsilon(1e-12));
}

TEST_CASE("ns upwind advection: 3rd order (order 4) and 1st order (order 2)") {
  auto err = [](int order, double h, double u) {
    double f[5];
    for (int o = 0; o < 5; ++o) f[o] = std::sin(1.0 + (o - 2) * h);
    double d = order == 4 ? upwind<4>(u, f, 1 / (6 * h)) : upwind<2>(u, f, 1 / h);
    return std::fabs(d - u * std::cos(1.0));
  };
  for (double u : {1.0, -1.0}) {
    double p4 = std::log2(err(4, 0.04, u) / err(4, 0.02, u));
    double p2 = std::log2(err(2, 0.04, u) / err(2, 0.02, u));
    CHECK(p4 == doctest::Approx(3.0).epsilon(0.05));
    CHECK(p2 == doctest::Approx(1.0).epsilon(0.05));
  }
}

TEST_CASE("ns bc spec parsing") {
  Bc b[3];
  parse_bc("x=periodic,y=noslip,z=freeslip", b);
  CHECK(b[0] == Bc::periodic);
  CHECK(b[1] == Bc::noslip);
  CHECK(b[2] == Bc::freeslip);
  parse_bc("noflux", b);
  CHECK((b[0] == Bc::noflux && b[1] == Bc::noflux && b[2] == Bc::noflux));
  parse_bc("y=noslip", b);
  CHECK((b[0] == Bc::periodic && b[1] == Bc::noslip && b[2] == Bc::periodic));
  CHECK_THROWS_WITH_AS(parse_bc("x=sticky", b), doctest::Contains("got 'sticky'"), numpipe::Error);
  CHECK_THROWS_WITH_AS(parse_bc("x=noslip,x=periodic", b), doctest::Contains("twice"), numpipe::Error);
  CHECK_THROWS_WITH_AS(parse_bc("w=noslip", b), doctest::Contains("AXIS=KIND"), numpipe::Error);
  CHECK(bc_spec(b) == "x=periodic,y=noslip,z=periodic");
}

TEST_CASE("ns ghost rules: the defining symmetry of each boundary condition") {
  // One axis per kind in turn; random interior values.
  for (Bc bc : {Bc::noslip, Bc::freeslip, Bc::noflux, Bc::periodic}) {
    for (int axis = 0; axis < 3; ++axis) {
      Params p;
      p.n[0] = 7, p.n[1] = 6, p.n[2] = 8;
      p.bc[axis] = bc;
      const Geometry g = make_geometry(p);
      std::vector<std::vector<double>> f(kVars, std::vector<double>(static_cast<std::size_t>(g.padded()), std::nan("")));
      numpipe::Rng rng(3);
      for (int v = 0; v < kVars; ++v)
        for (int i = 0; i < g.n[0]; ++i)
          for (int j = 0; j < g.n[1]; ++j)
            for (int k = 0; k < g.n[2]; ++k) f[v][g.at(i, j, k)] = pinned_point(g, i, j, k, v) ? 0.0 : rng.uniform(-1, 1);
      double* fp[kVars] = {f[0].data(), f[1].data(), f[2].data(), f[3].data()};
      cpu::fill_ghosts<double>(g, fp);
      const int n = g.n[axis];
      auto at = [&](int idx, int u, int w) {
        int id[3];
        const int b = axis == 0 ? 1 : 0, c = axis == 2 ? 1 : 2;
        id[axis] = idx, id[b] = u, id[c] = w;
        return g.at(id[0], id[1], id[2]);
      };
      const int b = axis == 0 ? 1 : 0, c = axis == 2 ? 1 : 2;
      for (int v = 0; v < kVars; ++v)
        for (int u = 0; u < g.n[b]; ++u)
          for (int w = 0; w < g.n[c]; ++w) {
            double s[5], e[5];
            for (int o = 0; o < 5; ++o) {
              s[o] = f[v][at(o - 2, u, w)];
              e[o] = f[v][at(n - 3 + o, u, w)];
            }
            if (bc == Bc::periodic) {
              CHECK(f[v][at(-1, u, w)] == f[v][at(n - 1, u, w)]);
              CHECK(f[v][at(-2, u, w)] == f[v][at(n - 2, u, w)]);
              CHECK(f[v][at(n, u, w)] == f[v][at(0, u, w)]);
              CHECK(f[v][at(n + 1, u, w)] == f[v][at(1, u, w)]);
              continue;
            }
            const int parity = wall_parity(bc, axis, v);
            if (parity < 0) {
              // odd: zero on the wall, ghosts the inverted mirror image
              CHECK(s[2] == 0.0);
              CHECK(e[2] == 0.0);
              CHECK(s[0] == -s[4]);
              CHECK(s[1] == -s[3]);
              CHECK(e[4] == -e[0]);
              CHECK(e[3] == -e[1]);
            } else {
              // even: the normal first derivative at the wall node vanishes exactly
              CHECK(d1<4>(s, 1.0) == 0.0);
              CHECK(d1<2>(s, 1.0) == 0.0);
              CHECK(d1<4>(e, 1.0) == 0.0);
            }
          }
      // the parities themselves
      if (bc == Bc::noslip) CHECK((wall_parity(bc, axis, kVx) < 0 && wall_parity(bc, axis, kVy) < 0 && wall_parity(bc, axis, kVz) < 0));
      if (bc == Bc::freeslip)
        for (int cpt = 0; cpt < 3; ++cpt) CHECK((wall_parity(bc, axis, kVx + cpt) < 0) == (cpt == axis));
      if (bc == Bc::noflux)
        for (int v = 0; v < kVars; ++v) CHECK(wall_parity(bc, axis, v) > 0);
      CHECK(wall_parity(bc, axis, kRho) > 0);
    }
  }
}

TEST_CASE("ns Taylor-Green 2-D: kinetic energy decays as exp(-4 nu k^2 t)") {
  // v = (sin x cos y, -cos x sin y) e^{-2 nu t} in a 2 pi box (k = 1): the mean
  // kinetic energy <|v|^2/2> is 1/4 exp(-4 nu t). Weakly compressible at Mach 0.05.
  Problem pr = make_problem(64, 64, 1);
  Params& p = pr.params;
  p.re = 100;
  p.c = 20;
  const Geometry g = make_geometry(p);
  for (long long i = 0; i < 64; ++i)
    for (long long j = 0; j < 64; ++j) {
      const double x = i * g.h[0], y = j * g.h[1];
      pr.fields[kVx][flat(p, i, j, 0)] = std::sin(x) * std::cos(y);
      pr.fields[kVy][flat(p, i, j, 0)] = -std::cos(x) * std::sin(y);
      pr.fields[kRho][flat(p, i, j, 0)] = 1 + 0.25 * (std::cos(2 * x) + std::cos(2 * y)) / (p.c * p.c);
    }
  RunOptions o;
  o.steps = 400;
  o.cfl = 0.5;
  Result r = solve_cpu(pr, o);
  const double t = r.t, nu = 1 / p.re;
  CHECK(r.diag.front().v[2] == doctest::Approx(0.25).epsilon(1e-12));
  const double rel = r.diag.back().v[2] / (0.25 * std::exp(-4 * nu * t)) - 1;
  MESSAGE("Taylor-Green t=" << t << " relative KE error " << rel);
  CHECK(t > 0.9);
  CHECK(std::fabs(rel) < 1e-3);
  // a viscosity wrong by 10% would be caught
  CHECK(std::fabs(std::exp(-4 * 1.1 * nu * t) / std::exp(-4 * nu * t) - 1) > 2e-3);
}

namespace {
// Linear acoustic-viscous plane wave along k = (1,1,1): rho = 1 + R cos(k.x), v = e V sin(k.x),
// R' = -K V, V' = c^2 K R - nu K^2 V (the linearised equations; the advection term is
// O(V^2) and negligible at amplitude 1e-6). Returns the max error of rho at time t.
double acoustic_error(int n, int order) {
  Problem pr = make_problem(n, n, n);
  Params& p = pr.params;
  p.c = 1;
  p.re = 100;
  const double R0 = 1e-6, K = std::sqrt(3.0), nu = 1 / p.re;
  const Geometry g = make_geometry(p);
  for (long long i = 0; i < n; ++i)
    for (long long j = 0; j < n; ++j)
      for (long long k = 0; k < n; ++k) pr.fields[kRho][flat(p, i, j, k)] = 1 + R0 * std::cos((i + j + k) * g.h[0]);
  RunOptions o;
  o.order = order;
  o.dt = 0.004;
  o.steps = 100;
  Result r = solve_cpu(pr, o);
  // exact: eigen-decomposition of [[0, -K], [c^2 K, -nu K^2]]
  using C = std::complex<double>;
  const double tr = -nu * K * K, det = p.c * p.c * K * K;
  const C disc = std::sqrt(C(tr * tr - 4 * det));
  const C l1 = (tr + disc) / 2.0, l2 = (tr - disc) / 2.0;
  // R(t) = a e^{l1 t} + b e^{l2 t}, R(0) = R0, R'(0) = -K V0 = 0
  const C a = R0 * l2 / (l2 - l1), b = -R0 * l1 / (l2 - l1);
  const double Rt = std::real(a * std::exp(l1 * r.t) + b * std::exp(l2 * r.t));
  double err = 0;
  for (long long i = 0; i < n; ++i)
    for (long long j = 0; j < n; ++j)
      for (long long k = 0; k < n; ++k)
        err = std::max(err, std::fabs(r.fields[kRho][flat(p, i, j, k)] - 1 - Rt * std::cos((i + j + k) * g.h[0])));
  return err / R0;
}
}  // namespace

TEST_CASE("ns observed order of accuracy: about 4 with --order 4, 2 with --order 2") {
  const double e16 = acoustic_error(16, 4), e32 = acoustic_error(32, 4);
  const double p4 = std::log2(e16 / e32);
  const double f16 = acoustic_error(16, 2), f32 = acoustic_error(32, 2);
  const double p2 = std::log2(f16 / f32);
  MESSAGE("order 4: errors " << e16 << " " << e32 << " observed order " << p4);
  MESSAGE("order 2: errors " << f16 << " " << f32 << " observed order " << p2);
  CHECK(p4 > 3.7);
  CHECK(p4 < 4.3);
  CHECK(p2 > 1.8);
  CHECK(p2 < 2.2);
}

TEST_CASE("ns acoustic pulse travels at the speed of sound") {
  // A plane Gaussian pulse in rho splits into two halves moving at +-c (d'Alembert).
  const int n = 256;
  Problem pr = make_problem(n, 1, 1, 1.0);
  Params& p = pr.params;
  p.c = 2;
  p.re = 1e6;
  const double sigma = 1.0 / 32, A = 1e-4;
  const Geometry g = make_geometry(p);
  auto pulse = [&](double x) {
    double best = 0;  // periodic images
    for (int m = -1; m <= 1; ++m) best += std::exp(-std::pow(x - 0.5 + m, 2) / (2 * sigma * sigma));
    return best;
  };
  for (int i = 0; i < n; ++i) pr.fields[kRho][static_cast<std::size_t>(i)] = 1 + A * pulse(i * g.h[0]);
  RunOptions o;
  o.dt = 0.125 / 250;  // t = 0.125: the halves travel 0.25
  o.steps = 250;
  Result r = solve_cpu(pr, o);
  double m0 = 0, m1 = 0, err = 0;
  for (int i = 0; i < n; ++i) {
    const double x = i * g.h[0], d = r.fields[kRho][static_cast<std::size_t>(i)] - 1;
    if (x > 0.5) m0 += d, m1 += d * x;
    const double exact = 0.5 * A * (pulse(x - p.c * r.t) + pulse(x + p.c * r.t));
    err = std::max(err, std::fabs(d - exact));
  }
  const double speed = (m1 / m0 - 0.5) / r.t;
  MESSAGE("acoustic pulse: speed " << speed << " (c = " << p.c << "), max error vs d'Alembert " << err / A);
  CHECK(speed == doctest::Approx(p.c).epsilon(2e-3));
  CHECK(err / A < 2e-3);
}

TEST_CASE("ns mass is conserved with periodic, no-slip and free-slip boundaries") {
  for (const char* spec : {"periodic", "x=noslip,y=freeslip,z=periodic", "x=freeslip,y=periodic,z=noslip", "noslip"}) {
    Problem pr = make_problem(12, 10, 9);
    parse_bc(spec, pr.params.bc);
    pr.params.re = 50;
    fill_smooth_random(pr, 11, 0.5);
    RunOptions o;
    o.steps = 20;
    o.cfl = 0.4;
    Result r = solve_cpu(pr, o);
    const double m0 = r.diag.front().v[7], m1 = mass_of(r);
    INFO("bc " << spec << " mass " << m0 << " -> " << m1);
    CHECK(std::fabs(m1 / m0 - 1) < 1e-13);
    // and something did happen
    double change = 0;
    for (std::size_t i = 0; i < r.fields[kRho].size(); ++i) change = std::max(change, std::fabs(r.fields[kRho][i] - pr.fields[kRho][i]));
    CHECK(change > 1e-6);
  }
}

TEST_CASE("ns no-slip: velocity vanishes on the walls; free-slip: normal velocity vanishes, plug flow is exact") {
  {
    Problem pr = make_problem(10, 12, 8);
    parse_bc("x=noslip,y=freeslip,z=periodic", pr.params.bc);
    fill_smooth_random(pr, 5, 0.5);
    RunOptions o;
    o.steps = 10;
    Result r = solve_cpu(pr, o);
    const Params& p = pr.params;
    double wall_x = 0, wall_y_normal = 0, wall_y_tangential = 0;
    for (long long j = 0; j < p.n[1]; ++j)
      for (long long k = 0; k < p.n[2]; ++k)
        for (int v = kVx; v <= kVz; ++v)
          for (long long i : {0LL, p.n[0] - 1}) wall_x = std::max(wall_x, std::fabs(r.fields[v][flat(p, i, j, k)]));
    for (long long i = 1; i < p.n[0] - 1; ++i)
      for (long long k = 0; k < p.n[2]; ++k)
        for (long long j : {0LL, p.n[1] - 1}) {
          wall_y_normal = std::max(wall_y_normal, std::fabs(r.fields[kVy][flat(p, i, j, k)]));
          wall_y_tangential = std::max(wall_y_tangential, std::fabs(r.fields[kVx][flat(p, i, j, k)]));
        }
    CHECK(wall_x == 0.0);
    CHECK(wall_y_normal == 0.0);
    CHECK(wall_y_tangential > 1e-3);  // free-slip lets the tangential velocity slide
  }
  // A uniform tangential stream between free-slip walls is an exact steady solution;
  // between no-slip walls it is braked at the walls.
  for (Bc bc : {Bc::freeslip, Bc::noslip}) {
    Problem pr = make_problem(8, 16, 8);
    pr.params.bc[1] = bc;
    pr.params.re = 10;
    std::fill(pr.fields[kVx].begin(), pr.fields[kVx].end(), 0.3);
    RunOptions o;
    o.steps = 10;
    Result r = solve_cpu(pr, o);
    double dev = 0;
    for (std::size_t i = 0; i < r.fields[kVx].size(); ++i) dev = std::max(dev, std::fabs(r.fields[kVx][i] - 0.3));
    if (bc == Bc::freeslip) CHECK(dev < 1e-15);
    else CHECK(dev >= 0.3);  // the wall nodes are at rest
  }
}

TEST_CASE("ns no-flux: zero normal gradient of every variable at the wall, wall values free") {
  Problem pr = make_problem(9, 8, 8);
  parse_bc("x=noflux", pr.params.bc);
  fill_smooth_random(pr, 7, 0.5);
  RunOptions o;
  o.steps = 5;
  Result r = solve_cpu(pr, o);
  const Params& p = pr.params;
  const Geometry g = make_geometry(p);
  std::vector<std::vector<double>> f(kVars, std::vector<double>(static_cast<std::size_t>(g.padded())));
  for (int v = 0; v < kVars; ++v)
    for (int i = 0; i < g.n[0]; ++i)
      for (int j = 0; j < g.n[1]; ++j)
        for (int k = 0; k < g.n[2]; ++k) f[v][g.at(i, j, k)] = r.fields[v][flat(p, i, j, k)];
  double* fp[kVars] = {f[0].data(), f[1].data(), f[2].data(), f[3].data()};
  cpu::fill_ghosts<double>(g, fp);
  double wall_v = 0;
  for (int v = 0; v < kVars; ++v)
    for (int j = 0; j < g.n[1]; ++j)
      for (int k = 0; k < g.n[2]; ++k)
        for (int i : {0, g.n[0] - 1}) {
          double s[5];
          for (int o2 = 0; o2 < 5; ++o2) s[o2] = f[v][g.at(i + o2 - 2, j, k)];
          CHECK(d1<4>(s, 1.0) == 0.0);
          if (v != kRho) wall_v = std::max(wall_v, std::fabs(s[2]));
        }
  CHECK(wall_v > 1e-3);
}

TEST_CASE("ns periodic: translation invariance (a rolled input gives the rolled output, bit for bit)") {
  Problem pr = make_problem(12, 10, 8);
  fill_smooth_random(pr, 9, 0.8);
  Problem rolled = pr;
  const Params& p = pr.params;
  const long long s[3] = {3, 7, 5};
  for (int v = 0; v < kVars; ++v)
    for (long long i = 0; i < p.n[0]; ++i)
      for (long long j = 0; j < p.n[1]; ++j)
        for (long long k = 0; k < p.n[2]; ++k)
          rolled.fields[v][flat(p, (i + s[0]) % p.n[0], (j + s[1]) % p.n[1], (k + s[2]) % p.n[2])] = pr.fields[v][flat(p, i, j, k)];
  RunOptions o;
  o.steps = 6;
  o.dt = 0.01;
  Result a = solve_cpu(pr, o), b = solve_cpu(rolled, o);
  bool same = true;
  for (int v = 0; v < kVars; ++v)
    for (long long i = 0; i < p.n[0]; ++i)
      for (long long j = 0; j < p.n[1]; ++j)
        for (long long k = 0; k < p.n[2]; ++k)
          same = same && a.fields[v][flat(p, i, j, k)] == b.fields[v][flat(p, (i + s[0]) % p.n[0], (j + s[1]) % p.n[1], (k + s[2]) % p.n[2])];
  CHECK(same);
  CHECK(a.diag.back().v[2] == doctest::Approx(b.diag.back().v[2]).epsilon(1e-13));
}

TEST_CASE("ns CPU backend: same bits for any thread count") {
  Problem pr = make_problem(11, 9, 13);
  parse_bc("x=noslip,y=periodic,z=freeslip", pr.params.bc);
  fill_smooth_random(pr, 21, 0.7);
  RunOptions o;
  o.steps = 4;
  o.diag_every = 2;
  const int saved = omp_get_max_threads();
  std::vector<Result> runs;
  for (int t : {1, 2, 3}) {
    omp_set_num_threads(t);
    runs.push_back(solve_cpu(pr, o));
  }
  omp_set_num_threads(saved);
  for (std::size_t r = 1; r < runs.size(); ++r) {
    for (int v = 0; v < kVars; ++v)
      CHECK(std::memcmp(runs[r].fields[v].data(), runs[0].fields[v].data(), runs[0].fields[v].size() * sizeof(double)) == 0);
    REQUIRE(runs[r].diag.size() == runs[0].diag.size());
    for (std::size_t d = 0; d < runs[0].diag.size(); ++d)
      CHECK(std::memcmp(runs[r].diag[d].v, runs[0].diag[d].v, sizeof(runs[0].diag[d].v)) == 0);
  }
}

TEST_CASE("ns fp32 agrees with fp64") {
  Problem pr = make_problem(16, 16, 16);
  fill_smooth_random(pr, 4, 0.5);
  RunOptions o;
  o.steps = 5;
  Result a = solve_cpu(pr, o);
  o.fp32 = true;
  Result b = solve_cpu(pr, o);
  double err = 0, scale = 0;
  for (int v = kVx; v <= kVz; ++v)
    for (std::size_t i = 0; i < a.fields[v].size(); ++i) {
      err = std::max(err, std::fabs(a.fields[v][i] - b.fields[v][i]));
      scale = std::max(scale, std::fabs(a.fields[v][i]));
    }
  CHECK(err / scale < 1e-5);
  CHECK(err > 0);
}

TEST_CASE("ns validation refuses bad problems with the value") {
  Problem pr = make_problem(8, 8, 8);
  RunOptions o;
  pr.params.n[0] = 0;
  CHECK_THROWS_WITH_AS(validate(pr, o), doctest::Contains("nx must be at least 1, got 0"), numpipe::Error);
  pr = make_problem(4, 8, 8);
  pr.params.bc[0] = Bc::noslip;
  CHECK_THROWS_WITH_AS(validate(pr, o), doctest::Contains("at least 5 with noslip walls, got 4"), numpipe::Error);
  pr = make_problem(8, 8, 8);
  pr.fields[kVy][17] = std::nan("");
  CHECK_THROWS_WITH_AS(validate(pr, o), doctest::Contains("field vy is not finite at flat index 17"), numpipe::Error);
  pr = make_problem(8, 8, 8);
  pr.params.re = -1;
  CHECK_THROWS_WITH_AS(validate(pr, o), doctest::Contains("Reynolds number"), numpipe::Error);
  pr = make_problem(8, 8, 8);
  o.order = 3;
  CHECK_THROWS_WITH_AS(validate(pr, o), doctest::Contains("--order must be 2 or 4, got 3"), numpipe::Error);
}
