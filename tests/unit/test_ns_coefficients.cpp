// ns-step's post-processing of the forces (kernels/ns/coefficients.hpp): the force
// coefficients against their definition, the dominant frequency of a noisy sinusoid
// sampled unevenly (the Strouhal number's method), and the surface pressure of states
// whose surface density is known exactly.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "common/error.hpp"
#include "kernels/ns/bodies.hpp"
#include "kernels/ns/coefficients.hpp"

using namespace numpipe::ns;

namespace {

// Gaussian noise from the generator's raw bits (Box-Muller), the same on every library.
struct Noise {
  std::mt19937_64 gen{12345};
  double uniform() { return (static_cast<double>(gen() >> 11) + 0.5) / 9007199254740992.0; }
  double normal() { return std::sqrt(-2 * std::log(uniform())) * std::cos(2 * M_PI * uniform()); }
};

Params stream_params(double ux, double uy, long long nz) {
  Params p;
  p.n[0] = 64, p.n[1] = 32, p.n[2] = nz;
  p.box[0] = 8, p.box[1] = 4, p.box[2] = 2;
  p.free_stream = true;
  p.stream[0] = ux, p.stream[1] = uy;
  return p;
}

}  // namespace

TEST_CASE("ns coefficients: C = F . e / (rho U^2 A / 2) along the stream and across it") {
  // a stream at 45 degrees in x-y, speed 2; 3-D
  const Params p = stream_params(std::sqrt(2.0), std::sqrt(2.0), 16);
  const Reference r = make_reference(p, 0.5, std::nullopt, 1.5, std::nullopt);
  CHECK(r.velocity == doctest::Approx(2).epsilon(1e-15));
  CHECK(r.length == doctest::Approx(std::sqrt(4 * 0.5 / M_PI)));
  CHECK(coefficient_columns(r) == 4);
  const double q = 0.5 * 1.5 * 4 * 0.5;
  // a force of 3 along the stream, 1 across it toward +y, 0.25 along z
  const double fd = 3, fl = 1, fz = 0.25, s = std::sqrt(0.5);
  const std::vector<double> force = {0.7, fd * s - fl * s, fd * s + fl * s, fz};
  const std::vector<double> c = coefficient_table(force, r);
  REQUIRE(c.size() == 4);
  CHECK(c[0] == 0.7);
  CHECK(c[1] == doctest::Approx(fd / q).epsilon(1e-14));
  CHECK(c[2] == doctest::Approx(fl / q).epsilon(1e-14));
  CHECK(c[3] == doctest::Approx(fz / q).epsilon(1e-14));
  // 2-D: the area is a length, the force over the box's z extent
  const Params p2 = stream_params(1, 0, 1);
  const Reference r2 = make_reference(p2, 0.5, 2.0, 1.0, std::nullopt);
  CHECK(coefficient_columns(r2) == 3);
  CHECK(r2.area == 0.5 * 2);
  CHECK(r2.length == 0.5);
  const std::vector<double> c2 = coefficient_table({1, 4, -2, 0}, r2);
  CHECK(c2[1] == doctest::Approx(4 / (0.5 * 4 * 1.0)));
  CHECK(c2[2] == doctest::Approx(-2 / (0.5 * 4 * 1.0)));
  // no free stream and no --ref-velocity: refused
  Params still = p2;
  still.free_stream = false;
  CHECK_THROWS_AS(make_reference(still, 1, std::nullopt, 1, std::nullopt), numpipe::Error);
}

TEST_CASE("ns Strouhal: the dominant frequency of a noisy sinusoid sampled unevenly, within a tenth of a bin") {
  Noise noise;
  for (double f : {0.1653, 0.2, 0.4127}) {
    std::vector<double> t, x;
    double tt = 0;
    while (tt < 80) {
      t.push_back(tt);
      x.push_back(0.3 + 0.8 * std::sin(2 * M_PI * f * tt + 0.4) + 0.2 * noise.normal());
      tt += 0.05 + 0.04 * noise.uniform();  // CFL-like uneven steps
    }
    const SpectralPeak s = dominant_frequency(t, x, 20);
    REQUIRE(s.found);
    CHECK(s.first >= 20);
    CHECK(s.resolution == doctest::Approx(1 / (s.last - s.first)).epsilon(0.01));
    CHECK(std::fabs(s.frequency - f) < 0.1 * s.resolution);
  }
  // noise-free, midway between two padded bins (15.0625 bins of 1/60.06): the interpolation finds it within a hundredth of a bin
  std::vector<double> t, x;
  for (int i = 0; i <= 1000; ++i) t.push_back(0.06 * i), x.push_back(std::cos(2 * M_PI * 0.25079 * t.back()));
  const SpectralPeak s = dominant_frequency(t, x, 0);
  REQUIRE(s.found);
  CHECK(std::fabs(s.frequency - 0.25079) < 0.01 * s.resolution);
  // St = f L / U
  Params p = stream_params(2, 0, 1);
  const Reference r = make_reference(p, 0.5, std::nullopt, 1, std::nullopt);
  std::vector<double> table;
  for (std::size_t i = 0; i < t.size(); ++i) table.insert(table.end(), {t[i], 1.3, x[i]});
  const Strouhal st = strouhal_from_lift(table, r, 0);
  CHECK(st.value == doctest::Approx(s.frequency * 0.5 / 2));
  CHECK(st.uncertainty == doctest::Approx(s.resolution * 0.5 / 2));
}

TEST_CASE("ns Strouhal: too short a span or too few rows says why, no value") {
  std::vector<double> t, x;
  for (int i = 0; i < 100; ++i) t.push_back(0.1 * i), x.push_back(std::sin(2 * M_PI * 0.15 * t.back()));
  const SpectralPeak s = dominant_frequency(t, x, 0);  // 1.5 periods in 10
  CHECK_FALSE(s.found);
  CHECK(s.why.find("two periods") != std::string::npos);
  const SpectralPeak few = dominant_frequency(t, x, 9);
  CHECK_FALSE(few.found);
  CHECK(few.why.find("16 rows") != std::string::npos);
  Strouhal none;
  none.peak = s;
  CHECK(strouhal_attrs(none)["value"].is_null());
}

TEST_CASE("ns surface pressure: a density linear in x gives Cp = c^2 a x_s / q on the cylinder's surface") {
  Problem pr;
  Params& p = pr.params;
  p = stream_params(1, 0, 1);
  p.c = 3;
  pr.bodies.list.push_back(parse_body("cylinder:4.02,2.03,0.7"));
  const std::size_t n = static_cast<std::size_t>(p.n[0] * p.n[1] * p.n[2]);
  Result res;
  for (auto& f : res.fields) f.assign(n, 0.0);
  for (int d = 0; d < 3; ++d) res.block_n[d] = static_cast<int>(p.n[d]);
  const double a = 0.01, h = 8.0 / 64;
  for (long long i = 0; i < p.n[0]; ++i)
    for (long long j = 0; j < p.n[1]; ++j) res.fields[kRho][static_cast<std::size_t>(i * p.n[1] + j)] = 1 + a * (i * h - 4);
  const Reference r = make_reference(p, 1.4, 1.5, 1, std::nullopt);
  const std::vector<double> sp = surface_pressure(pr, res, r);
  const std::size_t rows = sp.size() / kSurfaceColumns;
  REQUIRE(rows > 20);
  const double q = 0.5 * 1.5 * 1.5;
  double last_angle = -181;
  for (std::size_t i = 0; i < rows; ++i) {
    const double* row = &sp[i * kSurfaceColumns];
    CHECK(row[0] == 0);
    const double dx = row[1] - 4.02, dy = row[2] - 2.03;
    CHECK(std::hypot(dx, dy) == doctest::Approx(0.7).epsilon(1e-9));  // on the surface
    CHECK(row[5] == doctest::Approx(9 * a * (row[1] - 4) / q).epsilon(1e-9));
    // angle from the upstream point (-x), toward +y positive; rows in increasing angle
    CHECK(row[4] == doctest::Approx(std::atan2(dy, -dx) * 180 / M_PI).epsilon(1e-12));
    CHECK(row[4] >= last_angle);
    last_angle = row[4];
  }
}

TEST_CASE("ns surface pressure: the pressure force of a uniform gradient is -grad p times the volume (divergence theorem)") {
  Problem pr;
  Params& p = pr.params;
  p = stream_params(1, 0, 1);
  p.c = 3;
  const double radius = 0.7;
  pr.bodies.list.push_back(parse_body("cylinder:4.02,2.03,0.7"));
  const Reference r = make_reference(p, 2 * radius, 1.5, 1, std::nullopt);
  const SurfaceProbe probe = make_surface_probe(pr);
  REQUIRE(probe.nodes.size() == 2 * probe.crossings.size());
  // rho = 1 + a (x - 4): p = c^2 a (x - 4), the force -c^2 a pi R^2 Lz along x, none across
  const double a = 0.01, h = 8.0 / 64;
  std::vector<double> rho(probe.nodes.size());
  for (std::size_t m = 0; m < rho.size(); ++m) rho[m] = 1 + a * (double(probe.nodes[m] / (p.n[1] * p.n[2])) * h - 4);
  const std::vector<double> cp = crossing_cp(pr, probe, rho, r);
  const std::vector<double> c = pressure_coefficients(probe, cp, r);
  REQUIRE(c.size() == 2);
  const double q = 0.5 * 1.5 * 1.5;
  CHECK(c[0] == doctest::Approx(-9 * a * M_PI * radius * radius / (q * 2 * radius)).epsilon(0.02));
  CHECK(std::fabs(c[1]) < 1e-12);
  // a uniform pressure pushes no way at all on a closed surface
  const std::vector<double> uniform = pressure_coefficients(probe, std::vector<double>(cp.size(), 0.37), r);
  CHECK(std::fabs(uniform[0]) < 1e-12);
  CHECK(std::fabs(uniform[1]) < 1e-12);
  // the rows are those of surface_rows, one per crossing
  CHECK(surface_rows(pr, probe, cp, r).size() == cp.size() * kSurfaceColumns);
}
