// price: validation, the grid and strike-independent tables, stream records.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "common/error.hpp"
#include "common/strings.hpp"
#include "detail/backends.hpp"
#include "detail/grid.hpp"
#include "detail/work.hpp"
#include "price.hpp"

namespace numpipe::price {

Precision parse_precision(const std::string& text) {
  return value_of_word<Precision>("--precision", text, {{"fp64", Precision::fp64}, {"fp32", Precision::fp32}});
}
const char* precision_name(Precision p) { return p == Precision::fp64 ? "fp64" : "fp32"; }

namespace {
// Shortest decimal that reads back as v.
std::string num(double v) {
  for (int digits = 6; digits <= 17; ++digits) {
    std::ostringstream os;
    os.precision(digits);
    os << v;
    if (std::stod(os.str()) == v || !std::isfinite(v)) return os.str();
  }
  return std::to_string(v);
}
void need_positive(const char* name, double v) {
  if (!std::isfinite(v) || v <= 0) fail_input(std::string(name) + " must be finite and > 0, got " + num(v));
}
void need_range(const char* name, std::int64_t v, std::int64_t lo) {
  if (v < lo || v > kMaxSide)
    fail_input(std::string(name) + " must be in [" + std::to_string(lo) + ", " + std::to_string(kMaxSide) +
               "], got " + std::to_string(v));
}
}  // namespace

void validate(const Params& p) {
  need_range("OUTER (strikes)", p.outer, 1);
  need_range("numX", p.num_x, 3);
  need_range("numY", p.num_y, 3);
  need_range("numT", p.num_t, 2);
  if (p.num_x * p.num_y > kMaxGridPoints)
    fail_input("numX*numY must be at most " + std::to_string(kMaxGridPoints) + ", got " +
               std::to_string(p.num_x) + "*" + std::to_string(p.num_y));
  need_positive("s0", p.s0);
  need_positive("t", p.t);
  need_positive("alpha", p.alpha);
  need_positive("nu", p.nu);
  if (!std::isfinite(p.beta)) fail_input("beta must be finite, got " + num(p.beta));
  if (!(p.rho > -1 && p.rho < 1)) fail_input("rho must be in (-1, 1), got " + num(p.rho));
  if (p.grid == GridKind::sinh) return;  // s0 is a node of the sinh grid by construction
  const double dx = x_step(p);
  const double ind = std::floor(p.s0 / dx);
  if (!(ind >= 0 && ind <= static_cast<double>(p.num_x - 1)))
    fail_input("s0 falls outside the x grid (indX = floor(s0/dx) = " + num(ind) + " with numX = " +
               std::to_string(p.num_x) + "): 20*alpha*sqrt(t) must exceed 1, got " +
               num(20.0 * p.alpha * std::sqrt(p.t)));
}

namespace {
// One step to each of the segments, the rest in proportion to weight[m] / total
// (largest remainder; ties to the earlier segment).
std::vector<std::int64_t> deal_steps(std::int64_t steps, const std::vector<double>& weight, double total) {
  const std::int64_t m_count = static_cast<std::int64_t>(weight.size());
  std::vector<std::int64_t> n(m_count, 1);
  std::vector<double> rest(m_count);
  const std::int64_t spare = steps - m_count;
  std::int64_t dealt = 0;
  for (std::int64_t m = 0; m < m_count; ++m) {
    const double share = static_cast<double>(spare) * weight[m] / total;
    const std::int64_t whole = static_cast<std::int64_t>(std::floor(share));
    n[m] += whole;
    dealt += whole;
    rest[m] = share - static_cast<double>(whole);
  }
  for (std::int64_t left = spare - dealt; left > 0; --left) {
    std::int64_t best = 0;
    for (std::int64_t m = 1; m < m_count; ++m)
      if (rest[m] > rest[best]) best = m;
    ++n[best];
    rest[best] = -1;
  }
  return n;
}

void check_maturities(const Params& p, const std::vector<double>& maturities) {
  double prev = 0;
  for (std::size_t m = 0; m < maturities.size(); ++m) {
    const double tm = maturities[m];
    if (!std::isfinite(tm) || tm <= prev)
      fail_input("maturity " + std::to_string(m) + " = " + num(tm) +
                 (m == 0 ? " must be finite and > 0" : " must exceed the previous one, " + num(prev)));
    prev = tm;
  }
  if (maturities.back() != p.t)
    fail_input("the longest maturity " + num(maturities.back()) + " must equal the grid's t = " + num(p.t));
  if (p.num_t - 1 < static_cast<std::int64_t>(maturities.size()))
    fail_input("numT = " + std::to_string(p.num_t) + " gives " + std::to_string(p.num_t - 1) + " time steps for " +
               std::to_string(maturities.size()) + " maturities: at least one step each is needed");
}

// The sinh grid's time axis: the steps dealt to the segments [T_{m-1}, T_m] in
// proportion to (T_m - T_{m-1})^(1/4) (at least one each, the rest by the largest
// remainder), so that a short first maturity gets the steps its payoff's kink needs;
// within a segment graded quadratically towards its maturity, t = T_m - L (1 - k/n)^2
// ... read backwards from the payoff, the first steps are L/n^2, L 3/n^2, ...: small steps
// where the payoff's kink has not yet been smoothed, which damps the Crank-Nicolson
// type step's undamped high frequencies there and keeps it second order (time-step
// grading for non-smooth data; Tavella and Randall 2000, ch. 5).
std::vector<double> graded_time_grid(const Params& p, const std::vector<double>& ms, std::vector<std::int64_t>* levels) {
  check_maturities(p, ms);
  const std::int64_t steps = p.num_t - 1, m_count = static_cast<std::int64_t>(ms.size());
  std::vector<double> weight(m_count);
  double total = 0;
  for (std::int64_t m = 0; m < m_count; ++m) total += weight[m] = std::sqrt(std::sqrt(ms[m] - (m ? ms[m - 1] : 0.0)));
  const std::vector<std::int64_t> n = deal_steps(steps, weight, total);
  std::vector<double> time(p.num_t);
  if (levels) levels->assign(m_count, 0);
  std::int64_t g = 0;
  time[0] = 0;
  for (std::int64_t m = 0; m < m_count; ++m) {
    const double a = m ? ms[m - 1] : 0.0, b = ms[m];
    for (std::int64_t k = 1; k <= n[m]; ++k) {
      const double back = 1.0 - static_cast<double>(k) / static_cast<double>(n[m]);
      time[g + k] = k == n[m] ? b : b - (b - a) * back * back;
    }
    g += n[m];
    if (levels) (*levels)[m] = g;
  }
  return time;
}
}  // namespace

void size_for_tolerance(Params& p, double tolerance, bool set_x, bool set_y, bool set_t) {
  if (!(tolerance > 0 && tolerance <= 1e-2))
    fail_input("--tolerance must be in (0, 0.01] (absolute price error per unit of s0), got " + num(tolerance));
  // Measured (s0 1, alpha 0.25, beta 0.7, nu 0.5, rho -0.4, strikes 0.8-1.25, T 0.25
  // and 5): the error in x and y is about 2e-5 on 128 x 64 points, in time about 1e-5
  // at T = 0.25 near the money with 72 sqrt(t) steps (the shortest maturity's kink
  // dominates), so 96 sqrt(t); each direction gets half the tolerance, and the error falls
  // as the square of the points.
  const double scale = std::sqrt(1e-5 / tolerance);
  auto multiple_of_8 = [](double v) { return static_cast<std::int64_t>(8.0 * std::ceil(v / 8.0)); };
  if (set_x) p.num_x = std::clamp<std::int64_t>(multiple_of_8(256.0 * scale), 32, 8192);
  if (set_y) p.num_y = std::clamp<std::int64_t>(multiple_of_8(128.0 * scale), 16, 4096);
  if (set_t) p.num_t = std::clamp<std::int64_t>(static_cast<std::int64_t>(std::ceil(96.0 * std::sqrt(p.t) * scale)), 8, 100000) + 1;
}

Params coarser_by_two(const Params& p, std::size_t maturities) {
  Params c = p;
  c.num_x = std::max<std::int64_t>(5, (p.num_x + 1) / 2);
  c.num_y = std::max<std::int64_t>(5, (p.num_y + 1) / 2);
  c.num_t = std::max<std::int64_t>(static_cast<std::int64_t>(maturities) + 1, (p.num_t - 1) / 2 + 1);
  return c;
}

std::vector<double> time_grid(const Params& p, const std::vector<double>& maturities, std::vector<std::int64_t>* levels) {
  const std::int64_t nt = p.num_t, steps = nt - 1;
  std::vector<double> time(nt);
  if (p.grid == GridKind::sinh) return graded_time_grid(p, maturities.empty() ? std::vector<double>{p.t} : maturities, levels);
  if (maturities.size() <= 1) {
    if (maturities.size() == 1 && maturities[0] != p.t)
      fail_input("the maturity " + num(maturities[0]) + " must equal the grid's t = " + num(p.t));
    for (std::int64_t g = 0; g < nt; ++g) time[g] = time_point(p.t, nt, g);
    if (levels) *levels = {steps};
    return time;
  }
  const std::int64_t m_count = static_cast<std::int64_t>(maturities.size());
  check_maturities(p, maturities);
  // one step per segment, the rest in proportion to the lengths
  std::vector<double> lengths(m_count);
  for (std::int64_t m = 0; m < m_count; ++m) lengths[m] = maturities[m] - (m ? maturities[m - 1] : 0.0);
  const std::vector<std::int64_t> n = deal_steps(steps, lengths, p.t);
  if (levels) levels->assign(m_count, 0);
  std::int64_t g = 0;
  time[0] = 0;
  for (std::int64_t m = 0; m < m_count; ++m) {
    const double a = m ? maturities[m - 1] : 0.0, b = maturities[m];
    for (std::int64_t k = 1; k <= n[m]; ++k)
      time[g + k] = k == n[m] ? b : a + (b - a) * static_cast<double>(k) / static_cast<double>(n[m]);
    g += n[m];
    if (levels) (*levels)[m] = g;
  }
  if (g != steps) fail_internal("time grid: dealt " + std::to_string(g) + " of " + std::to_string(steps) + " steps");
  return time;
}

Axis x_axis(const Params& p, double t_min) {
  Axis a;
  const std::int64_t n = p.num_x;
  a.points.resize(n);
  if (p.grid == GridKind::finpar) {
    const double dx = x_step(p);
    a.ind = static_cast<std::int64_t>(std::floor(p.s0 / dx));
    for (std::int64_t i = 0; i < n; ++i) a.points[i] = x_point(dx, a.ind, p.s0, i);
    return a;
  }
  // From 0 (a node: SABR's absorbing boundary F = 0) to about s0 exp(5 sigma sqrt(t)),
  // sigma = alpha s0^(beta-1) the spot's relative volatility, at least 4 s0; concentrated
  // about s0 (a node) with width sigma sqrt(t_min) s0, the shortest maturity's spread.
  const double sigma = p.alpha * std::pow(p.s0, p.beta - 1.0);
  const double x_max = p.s0 * std::max(4.0, std::exp(std::min(5.0 * sigma * std::sqrt(p.t), 6.0)));
  const double c = p.s0 * std::clamp(sigma * std::sqrt(t_min), 0.02, 0.5);
  const double xi_lo = std::asinh(p.s0 / c), xi_hi = std::asinh((x_max - p.s0) / c);
  a.ind = std::clamp<std::int64_t>(std::llround(static_cast<double>(n - 1) * xi_lo / (xi_lo + xi_hi)), 1, n - 2);
  const double d_xi = xi_lo / static_cast<double>(a.ind);
  for (std::int64_t i = 0; i < n; ++i) a.points[i] = sinh_point(p.s0, c, d_xi, a.ind, i);
  a.points[0] = 0.0;
  return a;
}

Axis y_axis(const Params& p, double t_min) {
  Axis a;
  const std::int64_t n = p.num_y;
  a.points.resize(n);
  a.ind = n / 2;
  const double log_alpha = std::log(p.alpha);
  if (p.grid == GridKind::finpar) {
    const double dy = y_step(p);
    for (std::int64_t j = 0; j < n; ++j) a.points[j] = y_point(dy, a.ind, log_alpha, j);
    return a;
  }
  // Y is a Brownian motion of volatility nu from log alpha: 5 standard deviations at t
  // on the longer side (FinPar's width), concentrated about log alpha with width
  // nu sqrt(t_min), at least half the longest maturity's standard deviation.
  const double sd = p.nu * std::sqrt(p.t);
  const double c = std::max(p.nu * std::sqrt(t_min), 0.5 * sd);
  const double xi_half = std::asinh(5.0 * sd / c);
  const double d_xi = xi_half / static_cast<double>(std::max<std::int64_t>(a.ind, n - 1 - a.ind));
  for (std::int64_t j = 0; j < n; ++j) a.points[j] = sinh_point(log_alpha, c, d_xi, a.ind, j);
  return a;
}

Setup make_setup(const Params& p, const std::vector<double>& maturities) {
  validate(p);
  Setup s;
  s.p = p;
  const std::int64_t nx = p.num_x, ny = p.num_y, nt = p.num_t;
  s.time = time_grid(p, maturities, &s.levels);
  s.maturities = maturities.empty() ? std::vector<double>{p.t} : maturities;
  const double t_min = s.maturities.front();
  Axis ax = x_axis(p, t_min), ay = y_axis(p, t_min);
  s.ind_x = ax.ind;
  s.ind_y = ay.ind;
  s.x = std::move(ax.points);
  s.y = std::move(ay.points);
  // VarX's time factor exp(-nu^2 t): FinPar's at the step's earlier level (first order
  // in time when nu > 0); the sinh grid's at the step's midpoint, which keeps the
  // Douglas / Craig-Sneyd step second order with time-dependent coefficients.
  s.pt.resize(nt);
  for (std::int64_t g = 0; g < nt; ++g) {
    const double tg = p.grid == GridKind::sinh && g + 1 < nt ? 0.5 * (s.time[g] + s.time[g + 1]) : s.time[g];
    s.pt[g] = std::exp(-p.nu * p.nu * tg);
  }
  s.dt_inv.resize(nt - 1);
  for (std::int64_t g = 0; g + 1 < nt; ++g) s.dt_inv[g] = 1.0 / (s.time[g + 1] - s.time[g]);
  s.px.resize(nx);
  for (std::int64_t i = 0; i < nx; ++i) {
    // X = 0 (the sinh grid's absorbing node: no diffusion there) has X^(2 beta) = 0
    s.px[i] = s.x[i] == 0.0 ? (p.beta > 0 ? 0.0 : 1.0) : std::exp(2.0 * p.beta * std::log(s.x[i]));
    if (!std::isfinite(s.px[i]))
      fail_input("the x grid reaches X[" + std::to_string(i) + "] = " + num(s.x[i]) +
                 " where X^(2*beta) is not finite (beta = " + num(p.beta) + ")");
  }
  s.py.resize(ny);
  for (std::int64_t j = 0; j < ny; ++j) {
    s.py[j] = std::exp(2.0 * s.y[j]);
    if (!std::isfinite(s.py[j]) || s.py[j] == 0)
      fail_input("exp(2*Y) over- or underflows at Y[" + std::to_string(j) + "] = " + num(s.y[j]) +
                 ": nu*sqrt(t) is too large, got nu = " + num(p.nu) + ", t = " + num(p.t));
  }
  s.dxx.resize(3 * nx);
  for (std::int64_t i = 0; i < nx; ++i) dd_weights(s.x.data(), nx, i, &s.dxx[3 * i]);
  s.dyy.resize(3 * ny);
  for (std::int64_t j = 0; j < ny; ++j) dd_weights(s.y.data(), ny, j, &s.dyy[3 * j]);
  s.half_cell.assign(nx, 0.0);
  for (std::int64_t i = 1; i + 1 < nx; ++i) s.half_cell[i] = 0.5 * std::min(s.x[i] - s.x[i - 1], s.x[i + 1] - s.x[i]);
  s.sx.resize(nx);
  s.dx1.resize(3 * nx);
  for (std::int64_t i = 0; i < nx; ++i) {
    s.sx[i] = std::sqrt(s.px[i]);
    d_weights_interior(s.x.data(), nx, i, &s.dx1[3 * i]);
  }
  s.dy1.resize(3 * ny);
  for (std::int64_t j = 0; j < ny; ++j) d_weights_interior(s.y.data(), ny, j, &s.dy1[3 * j]);
  return s;
}

std::vector<Functional> functionals_of(const Setup& s, bool greeks) {
  std::vector<Functional> out;
  out.push_back({"price", {s.ind_x}, {s.ind_y}, {1.0}});
  if (!greeks) return out;
  const std::int64_t ix = s.ind_x, iy = s.ind_y;
  if (ix < 1 || ix + 1 >= s.p.num_x)
    fail_input("--greeks: the spot lies on the x grid's edge (indX = " + std::to_string(ix) + " of numX = " +
               std::to_string(s.p.num_x) + "): widen the grid (larger numX)");
  if (iy < 1 || iy + 1 >= s.p.num_y)
    fail_input("--greeks: numY = " + std::to_string(s.p.num_y) + " leaves the start of Y on the grid's edge");
  double d[3], dd[3], dy[3];
  d_weights_interior(s.x.data(), s.p.num_x, ix, d);
  dd_weights(s.x.data(), s.p.num_x, ix, dd);
  d_weights_interior(s.y.data(), s.p.num_y, iy, dy);
  out.push_back({"delta", {ix - 1, ix, ix + 1}, {iy, iy, iy}, {d[0], d[1], d[2]}});
  out.push_back({"gamma", {ix - 1, ix, ix + 1}, {iy, iy, iy}, {dd[0], dd[1], dd[2]}});
  out.push_back({"vega", {ix, ix, ix}, {iy - 1, iy, iy + 1}, {dy[0] / s.p.alpha, dy[1] / s.p.alpha, dy[2] / s.p.alpha}});
  return out;
}

Method parse_method(const std::string& text) {
  return value_of_word<Method>("--method", text, {{"adjoint", Method::adjoint}, {"forward", Method::forward}});
}
const char* method_name(Method m) { return m == Method::forward ? "forward" : "adjoint"; }

namespace {
template <class Real>
double weighted_payoff(const Setup& s, const double* weights, double strike, bool put, bool smooth) {
  double sum = 0;
  for (std::int64_t i = 0; i < s.p.num_x; ++i)
    sum += weights[i] * static_cast<double>(Real(payoff_cell(s.x[i], smooth ? s.half_cell[i] : 0.0, strike, put)));
  return sum;
}

template <class Real>
std::vector<double> weighted_payoffs(const Setup& s, const std::vector<double>& weights, StrikeRange range) {
  std::vector<double> out(range.last - range.first);
  for (std::int64_t o = range.first; o < range.last; ++o) {
    const double strike = strike_of(o);
    double sum = 0;
    for (std::int64_t i = 0; i < s.p.num_x; ++i)
      sum += weights[i] * static_cast<double>(Real(std::max(s.x[i] - strike, 0.0)));
    out[o - range.first] = sum;
  }
  return out;
}
}  // namespace

std::vector<double> prices_from_weights(const Setup& s, Precision precision, const std::vector<double>& weights,
                                        StrikeRange range) {
  check_range(s, range);
  if (static_cast<std::int64_t>(weights.size()) != s.p.num_x)
    fail_internal("adjoint weights: " + std::to_string(weights.size()) + " values for numX = " +
                  std::to_string(s.p.num_x));
  return precision == Precision::fp64 ? weighted_payoffs<double>(s, weights, range)
                                      : weighted_payoffs<float>(s, weights, range);
}

double contract_value(const Setup& s, Precision precision, const double* weights, double strike, bool put,
                      bool smooth) {
  return precision == Precision::fp64 ? weighted_payoff<double>(s, weights, strike, put, smooth)
                                      : weighted_payoff<float>(s, weights, strike, put, smooth);
}

BoundsReport check_bounds(const Setup& s, const std::vector<Contract>& contracts, const double* prices, double slack) {
  BoundsReport r;
  for (std::size_t c = 0; c < contracts.size(); ++c) {
    const Contract& k = contracts[c];
    const double low = k.put ? std::max(k.strike - s.p.s0, 0.0) : std::max(s.p.s0 - k.strike, 0.0);
    const double high = k.put ? k.strike : s.p.s0;
    const double excess = std::max(low - prices[c], prices[c] - high);
    if (!(excess > slack)) continue;
    if (r.violations++ == 0)
      r.first = std::string(k.put ? "put" : "call") + " strike " + num(k.strike) + ", maturity " +
                num(s.maturities[k.maturity]) + ", price " + num(prices[c]);
    r.largest = std::max(r.largest, excess);
  }
  return r;
}

double flops_of(const Params& p) {
  // Per strike, time step and grid point, counted from the formulas in model.hpp
  // (a fused multiply-add counts 2, a division 1): explicit x 16, explicit y 6,
  // implicit x 14 (factor 6, forward 2, back 3, right side 3), implicit y 5.
  return 41.0 * static_cast<double>(p.outer) * static_cast<double>(p.num_x) * static_cast<double>(p.num_y) *
         static_cast<double>(p.num_t - 1);
}

double adjoint_flops_of(const Params& p) {
  return 53.0 * static_cast<double>(p.num_x) * static_cast<double>(p.num_y) * static_cast<double>(p.num_t - 1) +
         2.0 * static_cast<double>(p.outer) * static_cast<double>(p.num_x);
}

double cuda_bytes_of(const Params& p, Precision precision, const std::string& kernel) {
  const double accesses = kernel == "sweep" ? 7.0 : 5.25;
  const double value = precision == Precision::fp64 ? 8.0 : 4.0;
  return accesses * value * static_cast<double>(p.outer) * static_cast<double>(p.num_x) *
         static_cast<double>(p.num_y) * static_cast<double>(p.num_t - 1);
}

void check_range(const Setup& s, StrikeRange range) {
  if (range.first < 0 || range.first > range.last || range.last > s.p.outer)
    fail_internal("strike range [" + std::to_string(range.first) + ", " + std::to_string(range.last) +
                  ") outside [0, " + std::to_string(s.p.outer) + ")");
}

}  // namespace numpipe::price
