// ns-step CUDA backend against the CPU reference (ctest label gpu; exit 77 without a device).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "common/device.hpp"
#include "common/random.hpp"
#include "kernels/ns/ns.hpp"

using namespace numpipe::ns;

namespace {

void require_device() {
  if (numpipe::cuda_device_count() == 0) {
    MESSAGE("SKIP: no CUDA device");
    std::exit(77);
  }
}

Problem random_problem(long long nx, long long ny, long long nz, const char* bc, std::uint64_t seed) {
  Problem pr;
  Params& p = pr.params;
  p.n[0] = nx, p.n[1] = ny, p.n[2] = nz;
  parse_bc(bc, p.bc);
  p.re = 200;
  p.c = 5;
  p.kol_amp = 0.3;
  p.force[2] = 0.1;
  const Geometry g = make_geometry(p);
  numpipe::Rng rng(seed);
  double cf[4][3];
  for (auto& r : cf)
    for (double& x : r) x = rng.uniform(-1, 1);
  for (auto& f : pr.fields) f.resize(static_cast<std::size_t>(nx * ny * nz));
  for (long long i = 0; i < nx; ++i)
    for (long long j = 0; j < ny; ++j)
      for (long long k = 0; k < nz; ++k) {
        const double x = i * g.h[0], y = j * g.h[1], z = k * g.h[2];
        const std::size_t s = static_cast<std::size_t>((i * ny + j) * nz + k);
        for (int v = 0; v < kVars; ++v) {
          double val = cf[v][0] * std::sin(x + cf[v][1]) * std::cos(2 * y - cf[v][2]) * std::cos(z + cf[v][0]) + 0.2 * rng.uniform(-1, 1);
          pr.fields[v][s] = v == kRho ? 1 + 0.01 * val : val;
        }
      }
  return pr;
}

double max_rel_diff(const Result& a, const Result& b) {
  double worst = 0;
  for (int v = 0; v < kVars; ++v) {
    double scale = 0, d = 0;
    for (std::size_t i = 0; i < a.fields[v].size(); ++i) {
      scale = std::max(scale, std::fabs(a.fields[v][i]));
      d = std::max(d, std::fabs(a.fields[v][i] - b.fields[v][i]));
    }
    if (scale > 0) worst = std::max(worst, d / scale);
  }
  return worst;
}

// A free stream past bodies: the sphere and box of the CPU units, or a 2-D cylinder
// (one z point: the flat kernel).
Problem body_problem(bool two_d) {
  Problem pr = random_problem(two_d ? 61 : 41, two_d ? 37 : 23, two_d ? 1 : 19, "x=periodic,y=freeslip,z=periodic", 9);
  Params& p = pr.params;
  p.box[0] = 4.1, p.box[1] = 2.3, p.box[2] = two_d ? 1.0 : 1.9;
  p.re = 80;
  p.c = 5;
  p.kol_amp = 0;
  p.force[2] = 0;
  p.free_stream = true;
  p.stream[0] = 1;
  p.stream[1] = 0.1;
  p.fringe_axis = 0;
  p.fringe_length = 1;
  p.fringe_strength = 30;
  for (std::size_t i = 0; i < pr.fields[kVx].size(); ++i) pr.fields[kVx][i] += 1, pr.fields[kVy][i] *= 0.1;
  if (two_d) {
    pr.bodies.list.push_back(parse_body("cylinder:1.3,1.1,0.33"));
  } else {
    pr.bodies.list.push_back(parse_body("sphere:1.2,1.1,0.9,0.37"));
    pr.bodies.list.push_back(parse_body("box:2.2,0.3,0.2,2.6,0.9,1.1"));
  }
  return pr;
}

}  // namespace

TEST_CASE("ns CUDA agrees with the CPU within 1e-12 (fp64, 10 steps, every boundary kind, odd sizes)") {
  require_device();
  struct Case {
    long long n[3];
    const char* bc;
    int order, chunk;
    double dt;
  };
  const Case cases[] = {
      {{37, 19, 45}, "x=noslip,y=freeslip,z=noflux", 4, 5, 0},
      {{33, 17, 70}, "periodic", 4, 0, 0.002},
      {{24, 40, 9}, "x=freeslip,y=noslip,z=periodic", 2, 7, 0},
      {{40, 40, 1}, "x=periodic,y=noflux,z=periodic", 4, 16, 0},
      {{16, 16, 16}, "noslip", 4, 3, 0},
  };
  for (const Case& c : cases) {
    Problem pr = random_problem(c.n[0], c.n[1], c.n[2], c.bc, 17);
    RunOptions o;
    o.steps = 10;
    o.order = c.order;
    o.chunk = c.chunk;
    o.dt = c.dt;
    o.cfl = 0.4;
    o.diag_every = 5;
    Result cpu = solve_cpu(pr, o);
    // every sub-step kernel variant (the ring kernels 6 and 7 write the ghosts themselves)
    for (int kernel = 0; kernel <= 7; ++kernel) {
      o.kernel = kernel;
      Result other = solve_cuda(pr, o);
      const double d = max_rel_diff(cpu, other);
      INFO("case " << c.n[0] << "x" << c.n[1] << "x" << c.n[2] << " " << c.bc << " order " << c.order << " kernel " << kernel
                   << ": max rel diff " << d);
      CHECK(d < 1e-12);
    }
    o.kernel = RunOptions{}.kernel;
    Result gpu = solve_cuda(pr, o);
    const double d = max_rel_diff(cpu, gpu);
    INFO("case " << c.n[0] << "x" << c.n[1] << "x" << c.n[2] << " " << c.bc << " order " << c.order << ": max rel diff " << d);
    CHECK(d < 1e-12);
    CHECK(cpu.t == doctest::Approx(gpu.t).epsilon(1e-14));
    REQUIRE(cpu.diag.size() == gpu.diag.size());
    for (std::size_t r = 0; r < cpu.diag.size(); ++r)
      for (int col = 2; col < kDiagColumns; ++col)
        CHECK(gpu.diag[r].v[col] == doctest::Approx(cpu.diag[r].v[col]).epsilon(1e-11).scale(1e-9));
    // run to run: the same bits
    Result again = solve_cuda(pr, o);
    for (int v = 0; v < kVars; ++v)
      CHECK(std::memcmp(again.fields[v].data(), gpu.fields[v].data(), gpu.fields[v].size() * sizeof(double)) == 0);
  }
}

TEST_CASE("ns CUDA with bodies and a free stream agrees with the CPU within 1e-12; forces and snapshots too") {
  require_device();
  for (bool two_d : {false, true}) {
    Problem pr = body_problem(two_d);
    RunOptions o;
    o.steps = 12;
    o.cfl = 0.4;
    o.diag_every = 4;
    o.snapshot_every = 6;
    o.snapshot_fields = {"vx", "vorticity_z", "vorticity_magnitude", "q_criterion"};
    std::vector<std::vector<double>> snaps_cpu, snaps_gpu;
    auto keep = [](std::vector<std::vector<double>>& into) {
      return [&into](const BlockFields& b) {
        const std::size_t n = static_cast<std::size_t>(b.n[0]) * b.n[1] * b.n[2];
        for (const void* d : b.data) into.emplace_back(static_cast<const double*>(d), static_cast<const double*>(d) + n);
      };
    };
    o.on_snapshot = keep(snaps_cpu);
    Result cpu = solve_cpu(pr, o);
    o.on_snapshot = keep(snaps_gpu);
    for (int kernel : two_d ? std::vector<int>{4} : std::vector<int>{4, 2, 5, 7, 8}) {
      o.kernel = kernel;
      snaps_gpu.clear();
      Result gpu = solve_cuda(pr, o);
      const double d = max_rel_diff(cpu, gpu);
      INFO((two_d ? "2-D cylinder" : "3-D sphere and box") << " kernel " << kernel << ": max rel diff " << d);
      CHECK(d < 1e-12);
      REQUIRE(cpu.forces.size() == gpu.forces.size());
      for (std::size_t r = 0; r < cpu.forces.size(); ++r)
        for (std::size_t c = 0; c < cpu.forces[r].f.size(); ++c)
          CHECK(gpu.forces[r].f[c] == doctest::Approx(cpu.forces[r].f[c]).epsilon(1e-11).scale(1e-9));
      REQUIRE(snaps_cpu.size() == snaps_gpu.size());
      for (std::size_t f = 0; f < snaps_cpu.size(); ++f) {
        double scale = 0, diff = 0;
        for (std::size_t i = 0; i < snaps_cpu[f].size(); ++i) {
          scale = std::max(scale, std::fabs(snaps_cpu[f][i]));
          diff = std::max(diff, std::fabs(snaps_cpu[f][i] - snaps_gpu[f][i]));
        }
        CHECK(diff <= 1e-11 * scale);
      }
      Result again = solve_cuda(pr, o);
      for (int v = 0; v < kVars; ++v)
        CHECK(std::memcmp(again.fields[v].data(), gpu.fields[v].data(), gpu.fields[v].size() * sizeof(double)) == 0);
      for (std::size_t r = 0; r < gpu.forces.size(); ++r) CHECK(again.forces[r].f == gpu.forces[r].f);
    }
    CHECK(cpu.forces.back().f[0] > 0);  // drag
  }
}

TEST_CASE("ns CUDA fp32 agrees with the CPU fp32 and fp64") {
  require_device();
  Problem pr = random_problem(30, 20, 50, "x=noslip,y=periodic,z=freeslip", 5);
  RunOptions o;
  o.steps = 10;
  o.fp32 = true;
  Result cpu32 = solve_cpu(pr, o), gpu32 = solve_cuda(pr, o);
  o.fp32 = false;
  Result cpu64 = solve_cpu(pr, o);
  CHECK(max_rel_diff(cpu32, gpu32) < 1e-5);
  CHECK(max_rel_diff(cpu64, gpu32) < 1e-4);
  // the cp.async kernels in fp32 (5: Q; 6, 7: the ring, whose tile in bytes differs from
  // fp64), on rows of a multiple of 4 values (16-byte copies) and of an odd length
  for (long long nz : {52LL, 47LL}) {
    Problem p2 = random_problem(30, 20, nz, "x=noslip,y=periodic,z=freeslip", 6);
    o.fp32 = true;
    o.kernel = RunOptions{}.kernel;
    Result ref = solve_cpu(p2, o);
    for (int kernel = 5; kernel <= 7; ++kernel) {
      o.kernel = kernel;
      const double d = max_rel_diff(ref, solve_cuda(p2, o));
      INFO("fp32 nz " << nz << " kernel " << kernel << ": max rel diff " << d);
      CHECK(d < 1e-5);
    }
  }
}

TEST_CASE("ns CUDA: 3-D Taylor-Green vortex at Re=1600 on 128^3, dissipation rate vs the reference DNS") {
  // Brachet et al. (1983), DeBonis (2013, NASA/TM-2013-217850): V0 = L = 1, box 2 pi,
  // Re = 1600; the spectral DNS dissipation rate -dE/dt peaks near t = 9 at about 0.0127.
  // Here at Mach 0.1 (c = 10) on 128^3; -dE/dt includes the numerical dissipation of
  // the upwind advection, 2 nu <|omega|^2/2> only the resolved viscous part.
  require_device();
  const int n = 128;
  Problem pr;
  Params& p = pr.params;
  for (int a = 0; a < 3; ++a) p.n[a] = n;
  p.re = 1600;
  p.c = 10;
  const Geometry g = make_geometry(p);
  for (auto& f : pr.fields) f.resize(static_cast<std::size_t>(n) * n * n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      for (int k = 0; k < n; ++k) {
        const double x = i * g.h[0], y = j * g.h[1], z = k * g.h[2];
        const std::size_t s = (static_cast<std::size_t>(i) * n + j) * n + k;
        pr.fields[kVx][s] = std::sin(x) * std::cos(y) * std::cos(z);
        pr.fields[kVy][s] = -std::cos(x) * std::sin(y) * std::cos(z);
        pr.fields[kVz][s] = 0;
        pr.fields[kRho][s] = 1 + (std::cos(2 * x) + std::cos(2 * y)) * (std::cos(2 * z) + 2) / 16 / (p.c * p.c);
      }
  RunOptions o;
  o.dt = 0.002;
  o.steps = 5000;  // t = 10
  o.diag_every = 50;
  Result r = solve_cuda(pr, o);
  double peak = 0, t_peak = 0, peak_ens = 0, t_peak_ens = 0;
  for (std::size_t d = 1; d < r.diag.size(); ++d) {
    const double eps = -(r.diag[d].v[2] - r.diag[d - 1].v[2]) / (r.diag[d].v[1] - r.diag[d - 1].v[1]);
    const double tm = 0.5 * (r.diag[d].v[1] + r.diag[d - 1].v[1]);
    if (eps > peak) peak = eps, t_peak = tm;
    if (r.diag[d].v[4] > peak_ens) peak_ens = r.diag[d].v[4], t_peak_ens = r.diag[d].v[1];
    if (d % 10 == 0) MESSAGE("TGV t=" << r.diag[d].v[1] << " E=" << r.diag[d].v[2] << " -dE/dt=" << eps << " 2nu*Omega=" << r.diag[d].v[4]);
  }
  MESSAGE("TGV 128^3: peak -dE/dt " << peak << " at t=" << t_peak << "; peak 2 nu Omega " << peak_ens << " at t=" << t_peak_ens
                                    << " (reference DNS: 0.0127 near t=9)");
  CHECK(r.diag.front().v[2] == doctest::Approx(0.125).epsilon(1e-6));
  CHECK(peak > 0.0100);
  CHECK(peak < 0.0145);
  CHECK(t_peak > 7.5);
  CHECK(t_peak < 10.0);
  CHECK(std::fabs(r.diag.back().v[7] / r.diag.front().v[7] - 1) < 1e-12);  // mass
}
