// The force coefficients, the Strouhal number and the surface pressure (coefficients.hpp).
#include "coefficients.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "bodies.hpp"
#include "common/error.hpp"
#include "common/parallel.hpp"

namespace numpipe::ns {

namespace {

double dot3(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

void normalise(double v[3]) {
  const double n = std::sqrt(dot3(v, v));
  for (int a = 0; a < 3; ++a) v[a] /= n;
}

// The periodogram's power at frequency f of the windowed, uniformly sampled series w
// (a direct Fourier sum: the zero-padded DFT's bin at f, evaluated where it is needed).
double power_at(const std::vector<double>& w, double dt, double f) {
  // e^{-i 2 pi f dt n} by a rotation per sample (its rounding grows like n eps: far below
  // a bin's width for any series a run writes)
  const double step = 2 * M_PI * f * dt, cs = std::cos(step), sn = std::sin(step);
  double re = 0, im = 0, zr = 1, zi = 0;
  for (std::size_t n = 0; n < w.size(); ++n) {
    re += w[n] * zr;
    im -= w[n] * zi;
    const double nr = zr * cs - zi * sn;
    zi = zr * sn + zi * cs;
    zr = nr;
  }
  return re * re + im * im;
}

}  // namespace

Reference make_reference(const Params& p, double area, std::optional<double> velocity, double density,
                         std::optional<double> length) {
  Reference r;
  r.two_d = p.n[2] == 1;
  const double stream_speed = std::sqrt(dot3(p.stream, p.stream));
  if (velocity) r.velocity = *velocity;
  else if (p.free_stream && stream_speed > 0) r.velocity = stream_speed;
  else
    fail_input("--ref-area: the state has no free stream to take the reference velocity from: give --ref-velocity");
  r.density = density;
  // 2-D: the force is over the box's z extent (one cell of it), the coefficient per unit span
  r.area = r.two_d ? area * p.box[2] : area;
  r.length = length ? *length : r.two_d ? area : std::sqrt(4 * area / M_PI);
  if (p.free_stream && stream_speed > 0)
    for (int a = 0; a < 3; ++a) r.drag[a] = p.stream[a] / stream_speed;
  // lift: +y without its part along the drag (+z when the stream runs along y)
  double lift[3] = {0, 1, 0};
  if (std::fabs(r.drag[1]) > 0.9) lift[1] = 0, lift[2] = 1;
  const double along = dot3(lift, r.drag);
  for (int a = 0; a < 3; ++a) r.lift[a] = lift[a] - along * r.drag[a];
  normalise(r.lift);
  r.side[0] = r.drag[1] * r.lift[2] - r.drag[2] * r.lift[1];
  r.side[1] = r.drag[2] * r.lift[0] - r.drag[0] * r.lift[2];
  r.side[2] = r.drag[0] * r.lift[1] - r.drag[1] * r.lift[0];
  return r;
}

int coefficient_columns(const Reference& r) { return r.two_d ? 3 : 4; }

namespace {
json reference_attrs(const Reference& r) {
  return {{"area", r.area},
          {"velocity", r.velocity},
          {"density", r.density},
          {"length", r.length},
          {"drag", {r.drag[0], r.drag[1], r.drag[2]}},
          {"lift", {r.lift[0], r.lift[1], r.lift[2]}},
          {"side", {r.side[0], r.side[1], r.side[2]}}};
}
}  // namespace

json coefficient_attrs(const Reference& r) {
  std::vector<std::string> names = {"t", "Cd", "Cl", "Cs"};
  names.resize(static_cast<std::size_t>(coefficient_columns(r)));
  return {{"kind", "ns.body_coefficients"},
          {"columns", names},
          {"reference", reference_attrs(r)},
          {"definition", "C = F . e / (rho_ref U^2 A / 2), e the drag, lift and side directions of attrs.reference"}};
}

json surface_pressure_attrs(const Reference& r) {
  return {{"kind", "ns.surface_pressure"},
          {"columns", {"body", "x", "y", "z", "angle", "Cp"}},
          {"reference", reference_attrs(r)},
          {"definition",
           "Cp = (p - p_inf) / (rho_ref U^2 / 2), p = c^2 (rho - 1), rho extrapolated to where a grid line crosses the "
           "surface; angle: degrees from the upstream stagnation point about the body's centre (2-D: signed toward the "
           "lift; 3-D: polar)"}};
}

std::vector<double> coefficient_table(const std::vector<double>& force_table, const Reference& r) {
  const std::size_t rows = force_table.size() / 4;
  const int cols = coefficient_columns(r);
  const double q = 0.5 * r.density * r.velocity * r.velocity * r.area;  // dynamic pressure times area
  const double* dirs[3] = {r.drag, r.lift, r.side};
  std::vector<double> out(rows * static_cast<std::size_t>(cols));
  for (std::size_t i = 0; i < rows; ++i) {
    const double* f = &force_table[i * 4 + 1];
    out[i * cols] = force_table[i * 4];
    for (int c = 1; c < cols; ++c) out[i * cols + c] = dot3(f, dirs[c - 1]) / q;
  }
  return out;
}

// Periodogram with a Hann window (Harris, Proc. IEEE 66 (1978) 51-83), zero-padded so
// that bins are 1/8 of the resolution, the highest refined by the vertex of the parabola
// through the log power of it and its two neighbours (Smith and Serra's quadratic
// interpolation of spectral peaks, PARSHL, ICMC 1987: exact for a Gaussian peak, a few
// thousandths of a bin for a Hann window's).
SpectralPeak dominant_frequency(const std::vector<double>& t, const std::vector<double>& x, double from) {
  SpectralPeak s;
  std::size_t i0 = 0;
  while (i0 < t.size() && t[i0] < from) ++i0;
  const long long n = static_cast<long long>(t.size() - i0);
  if (n < 16) {
    s.why = "fewer than 16 rows of the lift in the span analysed: run longer or with --diag-every/--diag-dt smaller";
    return s;
  }
  s.first = t[i0];
  s.last = t.back();
  s.samples = n;
  const double dt = (s.last - s.first) / static_cast<double>(n - 1);
  if (!(dt > 0)) {
    s.why = "the span analysed has no length";
    return s;
  }
  // linear resampling onto n uniform times (CFL runs' rows are not evenly spaced)
  std::vector<double> u(static_cast<std::size_t>(n));
  std::size_t k = i0;
  for (long long m = 0; m < n; ++m) {
    const double tm = m == n - 1 ? s.last : s.first + dt * static_cast<double>(m);
    while (k + 2 < t.size() && t[k + 1] < tm) ++k;
    const double w = t[k + 1] > t[k] ? (tm - t[k]) / (t[k + 1] - t[k]) : 0;
    u[static_cast<std::size_t>(m)] = x[k] + std::clamp(w, 0.0, 1.0) * (x[k + 1] - x[k]);
  }
  const double mean = std::accumulate(u.begin(), u.end(), 0.0) / static_cast<double>(n);
  for (long long m = 0; m < n; ++m)
    u[static_cast<std::size_t>(m)] =
        (u[static_cast<std::size_t>(m)] - mean) * 0.5 * (1 - std::cos(2 * M_PI * static_cast<double>(m) / static_cast<double>(n - 1)));
  const double span = static_cast<double>(n) * dt;
  s.resolution = 1 / span;
  // the unpadded bins 1 .. n/2 first, then the padded ones within a bin of the highest
  constexpr int kPad = 8;
  long long best = 1;
  double best_power = -1;
  for (long long b = 1; b <= n / 2; ++b) {
    const double pw = power_at(u, dt, static_cast<double>(b) / span);
    if (pw > best_power) best_power = pw, best = b;
  }
  const double df = s.resolution / kPad;
  const long long centre = best * kPad;
  std::vector<double> fine(2 * kPad + 1);
  for (int j = 0; j <= 2 * kPad; ++j) fine[static_cast<std::size_t>(j)] = power_at(u, dt, df * static_cast<double>(centre - kPad + j));
  int top = kPad;
  for (int j = 1; j < 2 * kPad; ++j)
    if (fine[static_cast<std::size_t>(j)] > fine[static_cast<std::size_t>(top)]) top = j;
  double offset = 0;
  const double a = std::log(fine[static_cast<std::size_t>(top - 1)]), b = std::log(fine[static_cast<std::size_t>(top)]),
               c = std::log(fine[static_cast<std::size_t>(top + 1)]);
  if (std::isfinite(a) && std::isfinite(b) && std::isfinite(c) && a - 2 * b + c < 0) offset = 0.5 * (a - c) / (a - 2 * b + c);
  s.frequency = df * (static_cast<double>(centre - kPad + top) + offset);
  if (!(s.frequency * span >= 2)) {
    s.why = "fewer than two periods of the lift's strongest frequency in the span analysed: run longer";
    return s;
  }
  s.found = true;
  return s;
}

Strouhal strouhal_from_lift(const std::vector<double>& coefficients, const Reference& r, double from) {
  const std::size_t cols = static_cast<std::size_t>(coefficient_columns(r)), rows = coefficients.size() / cols;
  std::vector<double> t(rows), cl(rows);
  for (std::size_t i = 0; i < rows; ++i) t[i] = coefficients[i * cols], cl[i] = coefficients[i * cols + 2];
  Strouhal s;
  s.peak = dominant_frequency(t, cl, from);
  s.value = s.peak.frequency * r.length / r.velocity;
  s.uncertainty = s.peak.resolution * r.length / r.velocity;
  return s;
}

json strouhal_attrs(const Strouhal& s) {
  if (!s.peak.found) return {{"value", nullptr}, {"why", s.peak.why}};
  return {{"value", s.value},
          {"uncertainty", s.uncertainty},
          {"frequency", s.peak.frequency},
          {"frequency_resolution", s.peak.resolution},
          {"span", {s.peak.first, s.peak.last}},
          {"samples", s.peak.samples},
          {"window", "hann"},
          {"method",
           "periodogram of Cl (mean removed, resampled linearly onto uniform times, Hann window, zero-padded 8x), "
           "the highest bin refined by a parabola through the log power (Smith and Serra 1987); uncertainty: "
           "one bin of the unpadded periodogram (1 / span) in St"}};
}

SurfaceProbe make_surface_probe(const Problem& pr) {
  const Params& p = pr.params;
  const Geometry g = make_geometry(p);
  SurfaceProbe probe;
  probe.crossings = build_ib_tables<double>(p, pr.bodies, g).crossings;
  probe.nodes.reserve(2 * probe.crossings.size());
  const long long si = g.si(), sj = g.sj();
  for (const Crossing& x : probe.crossings) {
    long long at[3] = {x.at / si - kGhost, x.at % si / sj - kGhost, x.at % sj - g.gk};
    const auto flat = [&](const long long idx[3]) {
      long long w[3];
      for (int a = 0; a < 3; ++a) w[a] = ((idx[a] % p.n[a]) + p.n[a]) % p.n[a];  // periodic wrap
      return (w[0] * p.n[1] + w[1]) * p.n[2] + w[2];
    };
    probe.nodes.push_back(flat(at));
    if (x.fluid_beyond >= 1) at[x.axis] += x.side == 0 ? 1 : -1;  // the line's next fluid node away from the surface
    probe.nodes.push_back(flat(at));
  }
  return probe;
}

namespace {
struct NodeValue {  // plain data, so that MPI can gather it
  long long index;  // into SurfaceProbe::nodes
  double rho;
};
}  // namespace

std::vector<double> probe_density(const Problem& pr, const SurfaceProbe& probe, const long long offset[3], const int n[3],
                                  const void* rho, bool fp32) {
  const Params& p = pr.params;
  std::vector<NodeValue> mine;
  for (std::size_t m = 0; m < probe.nodes.size(); ++m) {
    const long long node = probe.nodes[m];
    const long long gi = node / (p.n[1] * p.n[2]), gj = node / p.n[2] % p.n[1], gk = node % p.n[2];
    const long long li = gi - offset[0], lj = gj - offset[1], lk = gk - offset[2];
    if (li < 0 || lj < 0 || lk < 0 || li >= n[0] || lj >= n[1] || lk >= n[2]) continue;  // another rank's
    const std::size_t at = static_cast<std::size_t>((li * n[1] + lj) * n[2] + lk);
    mine.push_back({static_cast<long long>(m), fp32 ? double(static_cast<const float*>(rho)[at]) : static_cast<const double*>(rho)[at]});
  }
  const par::Group& world = par::world();
  if (world.distributed()) {
    mine = par::world().gather_concat(mine);
    if (!world.is_root()) return {};
  }
  // every node lies in exactly one block: each value comes once, whatever the rank count
  std::vector<double> out(probe.nodes.size(), 0.0);
  for (const NodeValue& v : mine) out[static_cast<std::size_t>(v.index)] = v.rho;
  return out;
}

std::vector<double> crossing_cp(const Problem& pr, const SurfaceProbe& probe, const std::vector<double>& rho,
                                const Reference& r) {
  const double c2 = pr.params.c * pr.params.c, q = 0.5 * r.density * r.velocity * r.velocity;
  std::vector<double> cp(probe.crossings.size());
  for (std::size_t m = 0; m < cp.size(); ++m) {
    const Crossing& x = probe.crossings[m];
    const double r0 = rho[2 * m];
    // the density on the surface: linear extrapolation from the line's two fluid nodes (as crossing_force)
    const double rs = x.fluid_beyond >= 1 ? r0 + (r0 - rho[2 * m + 1]) * x.e0 : r0;
    cp[m] = c2 * (rs - 1.0) / q;
  }
  return cp;
}

std::vector<double> pressure_coefficients(const SurfaceProbe& probe, const std::vector<double>& cp, const Reference& r) {
  // F_a = -sum p sigma dA over the crossings of the lines along a (model.hpp crossing_force),
  // so the coefficient along e is -sum Cp sigma dA e_a / A
  double f[3] = {0, 0, 0};
  for (std::size_t m = 0; m < cp.size(); ++m) {
    const Crossing& x = probe.crossings[m];
    f[x.axis] -= cp[m] * (x.side == 0 ? 1.0 : -1.0) * x.area;
  }
  const double* dirs[3] = {r.drag, r.lift, r.side};
  std::vector<double> out(static_cast<std::size_t>(coefficient_columns(r) - 1));
  for (std::size_t c = 0; c < out.size(); ++c) out[c] = dot3(f, dirs[c]) / r.area;
  return out;
}

std::vector<double> surface_rows(const Problem& pr, const SurfaceProbe& probe, const std::vector<double>& cp,
                                 const Reference& r) {
  const Params& p = pr.params;
  const Geometry g = make_geometry(p);
  const std::size_t nb = pr.bodies.list.size();
  struct Point {
    int body;
    double x[3], cp, angle;
    long long key;
  };
  std::vector<Point> pts;
  pts.reserve(probe.crossings.size());
  for (std::size_t m = 0; m < probe.crossings.size(); ++m) {
    const Crossing& x = probe.crossings[m];
    const long long node = probe.nodes[2 * m];
    const long long idx[3] = {node / (p.n[1] * p.n[2]), node / p.n[2] % p.n[1], node % p.n[2]};
    Point pt{};
    pt.body = x.body;
    pt.key = x.key;
    pt.cp = cp[m];
    for (int a = 0; a < 3; ++a) pt.x[a] = double(idx[a]) * g.h[a];
    pt.x[x.axis] += (x.side == 0 ? -1 : 1) * x.e0 * g.h[x.axis];
    pts.push_back(pt);
  }
  // each body's centre: the analytic one, or the mean of a mask's surface points
  std::vector<std::array<double, 3>> centre(nb, {0, 0, 0});
  std::vector<long long> count(nb, 0);
  for (const Point& pt : pts)
    for (int a = 0; a < 3; ++a) centre[static_cast<std::size_t>(pt.body)][a] += pt.x[a];
  for (const Point& pt : pts) ++count[static_cast<std::size_t>(pt.body)];
  for (std::size_t b = 0; b < nb; ++b) {
    const Body& body = pr.bodies.list[b];
    for (int a = 0; a < 3; ++a) {
      if (body.kind == Body::Kind::cylinder) centre[b][a] = a < 2 ? body.a[a] : 0;
      else if (body.kind == Body::Kind::sphere) centre[b][a] = body.a[a];
      else if (body.kind == Body::Kind::box) centre[b][a] = 0.5 * (body.a[a] + body.a[a + 3]);
      else if (count[b] > 0) centre[b][a] /= static_cast<double>(count[b]);
    }
  }
  for (Point& pt : pts) {
    const Body& body = pr.bodies.list[static_cast<std::size_t>(pt.body)];
    double d[3];
    for (int a = 0; a < 3; ++a) d[a] = pt.x[a] - centre[static_cast<std::size_t>(pt.body)][a];
    if (body.kind == Body::Kind::cylinder) d[2] = 0;
    const double along = -dot3(d, r.drag), across = dot3(d, r.lift);
    if (r.two_d || body.kind == Body::Kind::cylinder) {
      pt.angle = std::atan2(across, along) * 180 / M_PI;
    } else {
      const double len = std::sqrt(dot3(d, d));
      pt.angle = len > 0 ? std::acos(std::clamp(along / len, -1.0, 1.0)) * 180 / M_PI : 0;
    }
  }
  std::sort(pts.begin(), pts.end(), [](const Point& a, const Point& b) {
    if (a.body != b.body) return a.body < b.body;
    if (a.angle != b.angle) return a.angle < b.angle;
    return a.key < b.key;
  });
  std::vector<double> out;
  out.reserve(pts.size() * kSurfaceColumns);
  for (const Point& pt : pts) {
    const double row[kSurfaceColumns] = {double(pt.body), pt.x[0], pt.x[1], pt.x[2], pt.angle, pt.cp};
    out.insert(out.end(), row, row + kSurfaceColumns);
  }
  return out;
}

void SurfaceMean::add(const Problem& pr, const BlockFields& b, const Reference& r) {
  std::size_t f = 0;
  while (f < b.names.size() && b.names[f] != "rho") ++f;
  if (f == b.names.size()) fail_internal("SurfaceMean::add: the block's fields hold no rho");
  const std::vector<double> rho = probe_density(pr, probe, b.offset, b.n, b.data[f], b.fp32);
  if (!par::world().is_root()) return;
  const std::vector<double> cp = crossing_cp(pr, probe, rho, r);
  if (sum.empty()) sum.assign(cp.size(), 0.0);
  for (std::size_t m = 0; m < cp.size(); ++m) sum[m] += cp[m];
  if (rows == 0) first = b.t;
  last = b.t;
  ++rows;
}

std::vector<double> SurfaceMean::mean() const {
  std::vector<double> out(sum.size());
  for (std::size_t m = 0; m < sum.size(); ++m) out[m] = sum[m] / static_cast<double>(rows);
  return out;
}

json surface_mean_attrs(const SurfaceMean& m, const std::vector<double>& mean_cp, const Reference& r) {
  json a = surface_pressure_attrs(r);
  a["kind"] = "ns.surface_pressure_mean";
  a["definition"] = a["definition"].get<std::string>() +
                    "; the mean of Cp over the diagnostics rows of the window (attrs.window), each crossing's";
  a["window"] = {{"from", m.from}, {"first", m.first}, {"last", m.last}, {"rows", m.rows}};
  const std::vector<double> c = pressure_coefficients(m.probe, mean_cp, r);
  const char* names[3] = {"Cd", "Cl", "Cs"};
  json pc = json::object();
  for (std::size_t k = 0; k < c.size(); ++k) pc[names[k]] = c[k];
  a["pressure_coefficients"] = pc;
  return a;
}

json mean_coefficients(const std::vector<double>& coefficients, const Reference& r, double from) {
  const std::size_t cols = static_cast<std::size_t>(coefficient_columns(r)), rows = coefficients.size() / cols;
  std::vector<double> sum(cols, 0.0);
  long long count = 0;
  double first = 0, last = 0;
  for (std::size_t i = 0; i < rows; ++i) {
    const double* row = &coefficients[i * cols];
    if (!(row[0] >= from)) continue;
    if (count == 0) first = row[0];
    last = row[0];
    ++count;
    for (std::size_t c = 1; c < cols; ++c) sum[c] += row[c];
  }
  json a = {{"from", from}, {"rows", count}};
  a["first"] = count ? json(first) : json(nullptr);
  a["last"] = count ? json(last) : json(nullptr);
  const char* names[3] = {"Cd", "Cl", "Cs"};
  for (std::size_t c = 1; c < cols; ++c) a[names[c - 1]] = count ? json(sum[c] / static_cast<double>(count)) : json(nullptr);
  return a;
}

std::vector<double> surface_pressure(const Problem& pr, const Result& res, const Reference& r) {
  const SurfaceProbe probe = make_surface_probe(pr);
  const std::vector<double> rho = probe_density(pr, probe, res.block_offset, res.block_n, res.fields[kRho].data(), false);
  if (rho.empty() && !probe.nodes.empty()) return {};  // not rank 0
  return surface_rows(pr, probe, crossing_cp(pr, probe, rho, r), r);
}

}  // namespace numpipe::ns
