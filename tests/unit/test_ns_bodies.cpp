// ns-step units for bodies and the free stream (CPU backend): body specs, the
// immersed boundary's ghost rule (exact on linear profiles, second order in a
// channel whose walls lie between nodes), the force integral, determinism across
// thread counts, and the fringe's reflection of an acoustic pulse.
#include <doctest/doctest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "common/error.hpp"
#include "kernels/ns/bodies.hpp"
#include "kernels/ns/cpu_impl.hpp"
#include "kernels/ns/ns.hpp"

using namespace numpipe::ns;

namespace {

std::size_t flat(const Params& p, long long i, long long j, long long k) {
  return static_cast<std::size_t>((i * p.n[1] + j) * p.n[2] + k);
}

Problem at_rest(long long nx, long long ny, long long nz, double lx, double ly, double lz) {
  Problem pr;
  Params& p = pr.params;
  p.n[0] = nx, p.n[1] = ny, p.n[2] = nz;
  p.box[0] = lx, p.box[1] = ly, p.box[2] = lz;
  const std::size_t n = static_cast<std::size_t>(nx * ny * nz);
  for (auto& f : pr.fields) f.assign(n, 0.0);
  std::fill(pr.fields[kRho].begin(), pr.fields[kRho].end(), 1.0);
  return pr;
}

}  // namespace

TEST_CASE("ns body specs: the three kinds parse, bad ones are refused naming the spec") {
  Body c = parse_body("cylinder:1.5,2,0.5");
  CHECK(c.kind == Body::Kind::cylinder);
  CHECK(c.a[0] == 1.5);
  CHECK(c.a[2] == 0.5);
  Body s = parse_body("sphere:1,2,3,0.25");
  CHECK(s.kind == Body::Kind::sphere);
  CHECK(s.a[3] == 0.25);
  Body b = parse_body("box:0,0,0,1,2,3");
  CHECK(b.kind == Body::Kind::box);
  CHECK(b.a[5] == 3);
  for (const char* bad : {"cylinder:1,2", "sphere:1,2,3,-1", "box:1,0,0,0,1,1", "cone:1,2,3", "sphere", "sphere:1,2,x,1",
                          "cylinder:1,2,3,4"}) {
    bool refused = false;
    try {
      parse_body(bad);
    } catch (const numpipe::Error& e) {
      refused = e.code() == numpipe::ExitCode::bad_input && std::string(e.what()).find(bad) != std::string::npos;
    }
    CHECK_MESSAGE(refused, bad);
  }
}

TEST_CASE("ns IB ghost rule: exact on linear profiles, on either side, for any surface position") {
  for (double d0 : {0.05, 0.3, 0.5, 0.77, 1.0, 1.4, 1.999}) {
    for (int side = 0; side < 2; ++side) {
      // u = a (x - xs) vanishes on the surface xs; rho = r0 + g x
      const double xs = side == 0 ? -d0 : d0, a[3] = {0.7, -1.3, 0.4}, r0 = 1.01, gr = -0.02;
      PointStencil<double> p{}, exact{};
      for (int ax = 0; ax < 3; ++ax)
        for (int o = 0; o < 5; ++o) {
          const double x = ax == 1 ? o - 2 : 0;
          p.s[ax][kRho][o] = exact.s[ax][kRho][o] = r0 + gr * x;
          for (int c = 0; c < 3; ++c) p.s[ax][kVx + c][o] = exact.s[ax][kVx + c][o] = a[c] * (x - (ax == 1 ? xs : 0));
        }
      // along y the solid nodes hold rubbish that the rule must replace
      for (int o = 0; o < 5; ++o) {
        const bool solid = side == 0 ? o - 2 <= -d0 : o - 2 >= d0;
        if (solid)
          for (int v = 0; v < kVars; ++v) p.s[1][v][o] = 99;
      }
      IbPoint<double> ib{};
      ib.dist[1][side] = d0;
      apply_ib(p, ib);
      for (int v = 0; v < kVars; ++v)
        for (int o = 0; o < 5; ++o)
          CHECK_MESSAGE(std::fabs(p.s[1][v][o] - exact.s[1][v][o]) < 1e-12, "d0 ", d0, " side ", side, " var ", v, " node ", o);
    }
  }
}

TEST_CASE("ns IB ghost rule: ghost values err by O(h^2) on a curved profile") {
  // u = (x - xs) + (x - xs)^2 / L sampled at spacing h; the ghost two nodes in errs
  // by about h^2 / L: halving h divides the error by 4
  auto ghost_error = [](double h) {
    const double d0 = 0.37, L = 1.0;
    PointStencil<double> p{};
    for (int o = 0; o < 5; ++o) {
      const double x = (o - 2 + d0) * h;  // distance from the surface at -d0
      for (int v = 0; v < kVars; ++v) p.s[1][v][o] = v == kRho ? 1.0 : x + x * x / L;
    }
    IbPoint<double> ib{};
    ib.dist[1][0] = d0;
    apply_ib(p, ib);
    const double x = (-2 + d0) * h;  // node -2, inside
    return std::fabs(p.s[1][kVx][0] - (x + x * x / L));
  };
  const double e1 = ghost_error(0.1), e2 = ghost_error(0.05);
  CHECK(e1 > 0);
  CHECK(std::log2(e1 / e2) == doctest::Approx(2.0).epsilon(0.05));
}

TEST_CASE("ns IB channel: plane Poiseuille flow between walls off the nodes converges at second order") {
  // Two box bodies make walls at y = y0 and y = y1 = y0 + 0.6 (between nodes); a body
  // force f drives u(y) = f / (2 nu) (y - y0)(y1 - y). Steady state on three grids;
  // the error's constant depends on where the walls cut the cells, so each grid's error
  // is the largest over four positions of the walls.
  double force_err[3] = {0, 0, 0};  // per grid
  auto error_at = [&force_err](int ny, double theta) {
    const double hy0 = 1.0 / (ny - 1), y0 = (std::floor(0.2 / hy0) + theta) * hy0, y1 = y0 + 0.6, re = 2.0, f = 1.0;
    Problem pr = at_rest(1, ny, 1, 1.0, 1.0, 1.0);
    Params& p = pr.params;
    p.re = re;
    p.c = 4;
    p.force[0] = f;
    p.bc[1] = Bc::noslip;  // the bodies reach beyond the box's walls along y
    pr.bodies.list.push_back(parse_body("box:-1,-0.5,-1,2," + std::to_string(y0) + ",2"));
    pr.bodies.list.push_back(parse_body("box:-1," + std::to_string(y1) + ",-1,2,1.5,2"));
    RunOptions o;
    o.cfl = 0.5;
    o.steps = 0;
    const Geometry g = make_geometry(p);
    const double nu = 1.0 / re, hy = g.h[1];
    const double dt = std::min(0.5 * hy / p.c, 0.1 * hy * hy / nu);
    o.dt = dt;
    o.steps = static_cast<int>(std::ceil(1.2 / dt));  // H^2 / nu = 0.72: the slowest mode decays by e^-16
    Result r = solve_cpu(pr, o);
    // the walls' shear balances the body force on the fluid between them: F = f H Lx Lz
    const double fx = r.forces.back().f[0] + r.forces.back().f[3];
    double& fe = force_err[ny > 40 ? 2 : ny > 20 ? 1 : 0];
    fe = std::max(fe, std::fabs(fx / (f * (y1 - y0)) - 1));
    double err = 0, peak = 0;
    for (int j = 0; j < ny; ++j) {
      const double y = j * hy;
      if (y <= y0 || y >= y1) continue;
      const double u = f / (2 * nu) * (y - y0) * (y1 - y);
      err = std::max(err, std::fabs(r.fields[kVx][flat(p, 0, j, 0)] - u));
      peak = std::max(peak, u);
    }
    return err / peak;
  };
  omp_set_num_threads(1);  // small grids, many steps
  double e1 = 0, e2 = 0, e3 = 0;  // h = 1/12, 1/24, 1/48
  for (double theta : {0.1, 0.35, 0.6, 0.85}) {
    e1 = std::max(e1, error_at(13, theta));
    e2 = std::max(e2, error_at(25, theta));
    e3 = std::max(e3, error_at(49, theta));
  }
  omp_set_num_threads(2);
  MESSAGE("Poiseuille between IB walls: max error / peak ", e1, " ", e2, " ", e3, ": order ", std::log2(e1 / e2), " ",
          std::log2(e2 / e3));
  // the wall shear comes from the velocity next to the wall over distances of h: an
  // O(h^2) velocity gives it at first order
  MESSAGE("the walls' viscous force against the body force: largest relative error per grid ", force_err[0], " ",
          force_err[1], " ", force_err[2]);
  CHECK(force_err[2] < 0.03);
  CHECK(force_err[2] < 0.5 * force_err[0]);
  CHECK(e3 < 5e-3);
  CHECK(std::log2(e2 / e3) > 1.7);
  CHECK(std::log2(e1 / e2) > 1.5);
}

TEST_CASE("ns IB force: a sphere in a linear pressure field feels minus the gradient times its volume") {
  // rho = 1 + G x / c^2 at rest: F = -integral p n dA = -G V (Archimedes), from the
  // crossings' sum; the steps = 0 diagnostics row carries it
  const int n = 40;
  Problem pr = at_rest(n, n, n, 1.0, 1.0, 1.0);
  Params& p = pr.params;
  p.c = 2;
  p.re = 100;
  const double G = 0.3, R = 0.3;
  const Geometry g = make_geometry(p);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      for (int k = 0; k < n; ++k) pr.fields[kRho][flat(p, i, j, k)] = 1 + G * i * g.h[0] / (p.c * p.c);
  pr.bodies.list.push_back(parse_body("sphere:0.5,0.49,0.51," + std::to_string(R)));
  RunOptions o;
  o.steps = 0;
  Result r = solve_cpu(pr, o);
  REQUIRE(r.forces.size() == 1);
  const double want = -G * 4.0 / 3.0 * M_PI * R * R * R;
  MESSAGE("sphere R = 12 h in a pressure gradient: Fx ", r.forces[0].f[0], " against ", want);
  CHECK(r.forces[0].f[0] == doctest::Approx(want).epsilon(0.01));
  CHECK(std::fabs(r.forces[0].f[1]) < 1e-3 * std::fabs(want));
  CHECK(std::fabs(r.forces[0].f[2]) < 1e-3 * std::fabs(want));
}

TEST_CASE("ns bodies and free stream: a uniform stream without bodies stays exact; bodies at rest stay at rest") {
  Problem pr = at_rest(24, 16, 8, 3.0, 2.0, 1.0);
  Params& p = pr.params;
  p.free_stream = true;
  p.stream[0] = 0.25, p.stream[1] = -0.125, p.stream[2] = 0.0625;  // binary fractions: a uniform field's stencils are exactly zero
  p.fringe_axis = 0;
  p.fringe_length = 0.75;
  p.fringe_strength = default_fringe_strength(p, p.fringe_length);
  for (int c = 0; c < 3; ++c) std::fill(pr.fields[kVx + c].begin(), pr.fields[kVx + c].end(), p.stream[c]);
  RunOptions o;
  o.steps = 5;
  Result r = solve_cpu(pr, o);
  for (int v = 0; v < kVars; ++v)
    for (std::size_t i = 0; i < r.fields[v].size(); ++i) REQUIRE(r.fields[v][i] == pr.fields[v][i]);
  // at rest with a body: nothing moves, and the force is zero
  Problem rest = at_rest(24, 16, 8, 3.0, 2.0, 1.0);
  rest.bodies.list.push_back(parse_body("sphere:1.5,1,0.5,0.3"));
  Result q = solve_cpu(rest, o);
  for (int v = 0; v < kVars; ++v)
    for (std::size_t i = 0; i < q.fields[v].size(); ++i) REQUIRE(q.fields[v][i] == rest.fields[v][i]);
  for (const ForceRow& row : q.forces)
    for (double f : row.f) CHECK(f == 0);
}

TEST_CASE("ns bodies: same bits for any thread count; solid nodes at rest; no-slip near the surface") {
  Problem pr = at_rest(40, 24, 12, 4.0, 2.4, 1.2);
  Params& p = pr.params;
  p.re = 60;
  p.c = 5;
  p.free_stream = true;
  p.stream[0] = 1;
  p.fringe_axis = 0;
  p.fringe_length = 1;
  p.fringe_strength = default_fringe_strength(p, 1);
  std::fill(pr.fields[kVx].begin(), pr.fields[kVx].end(), 1.0);
  pr.bodies.list.push_back(parse_body("sphere:1.2,1.2,0.6,0.35"));
  pr.bodies.list.push_back(parse_body("box:2,0.4,-1,2.3,0.9,3"));
  RunOptions o;
  o.steps = 6;
  o.diag_every = 2;
  std::vector<Result> rs;
  for (int threads : {1, 2, 3}) {
    omp_set_num_threads(threads);
    rs.push_back(solve_cpu(pr, o));
  }
  omp_set_num_threads(2);
  for (int t = 1; t < 3; ++t) {
    for (int v = 0; v < kVars; ++v) CHECK(std::memcmp(rs[0].fields[v].data(), rs[t].fields[v].data(), rs[0].fields[v].size() * 8) == 0);
    REQUIRE(rs[t].forces.size() == rs[0].forces.size());
    for (std::size_t k = 0; k < rs[0].forces.size(); ++k) CHECK(rs[0].forces[k].f == rs[t].forces[k].f);
  }
  REQUIRE(rs[0].forces.size() == 4);  // start, steps 2, 4, 6
  CHECK(rs[0].forces.back().f.size() == 6);
  CHECK(rs[0].forces.back().f[0] > 0);  // drag on the sphere
  CHECK(rs[0].forces.back().f[3] > 0);  // and on the box
  double solid_speed = 0;
  for (int i = 0; i < 40; ++i)
    for (int j = 0; j < 24; ++j)
      for (int k = 0; k < 12; ++k)
        if (solid_node(p, pr.bodies, i, j, k))
          for (int c = 0; c < 3; ++c) solid_speed = std::max(solid_speed, std::fabs(rs[0].fields[kVx + c][flat(p, i, j, k)]));
  CHECK(solid_speed == 0);
}

TEST_CASE("ns fringe: an acoustic pulse leaves through the outflow with little reflection") {
  // A plane Gaussian pulse in a stream of Mach 0.1 along a periodic x with the fringe
  // on its last eighth: both halves of the pulse run into the fringe (the upstream
  // half through the inflow face, wrapped); afterwards whatever stays in the physical
  // part of the domain is the reflected (or transmitted) sound: its peak over the
  // incident half's amplitude is the reflection coefficient.
  const int n = 512;
  const double L = 16, c = 10, U = 1, A = 1e-3, sigma = 0.25;
  Problem pr = at_rest(n, 1, 1, L, 1, 1);
  Params& p = pr.params;
  p.c = c;
  p.re = 1e4;
  p.free_stream = true;
  p.stream[0] = U;
  p.fringe_axis = 0;
  p.fringe_length = L / 8;
  p.fringe_strength = default_fringe_strength(p, p.fringe_length);
  const Geometry g = make_geometry(p);
  for (int i = 0; i < n; ++i) {
    const double x = i * g.h[0] - 0.45 * L;
    pr.fields[kRho][static_cast<std::size_t>(i)] = 1 + A * std::exp(-x * x / (2 * sigma * sigma));
    pr.fields[kVx][static_cast<std::size_t>(i)] = U;
  }
  RunOptions o;
  o.dt = 0.4 * g.h[0] / (c + U);
  omp_set_num_threads(1);
  // the slower (upstream) half reaches the fringe's far end after 0.55 L / (c - U);
  // then measure over one more crossing of the domain
  const double t_in = (0.45 * L + p.fringe_length) / (c - U), t_end = t_in + (L - p.fringe_length) / (c + U);
  double worst = 0;
  double t = 0;
  Problem cur = pr;
  const int chunk = 50;
  while (t < t_end) {
    o.steps = chunk;
    Result r = solve_cpu(cur, o);
    t = r.t;
    cur.fields = r.fields;
    cur.t0 = r.t;
    if (t < t_in) continue;
    for (int i = 0; i < n; ++i) {
      const double x = i * g.h[0];
      if (x >= L - p.fringe_length) continue;
      worst = std::max(worst, std::fabs(r.fields[kRho][static_cast<std::size_t>(i)] - 1));
    }
  }
  omp_set_num_threads(2);
  const double reflection = worst / (A / 2);
  MESSAGE("fringe reflection coefficient (pulse width ", sigma, " = ", sigma / g.h[0], " h, fringe ", p.fringe_length,
          ", rate ", p.fringe_strength, "): ", reflection);
  CHECK(reflection < 5e-3);
}
