// price: validation, the grid and strike-independent tables, stream records.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "common/error.hpp"
#include "price.hpp"

namespace numpipe::price {

Precision parse_precision(const std::string& text) {
  if (text == "fp64") return Precision::fp64;
  if (text == "fp32") return Precision::fp32;
  fail_input("--precision must be fp64 or fp32, got '" + text + "'");
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
  const double dx = x_step(p);
  const double ind = std::floor(p.s0 / dx);
  if (!(ind >= 0 && ind <= static_cast<double>(p.num_x - 1)))
    fail_input("s0 falls outside the x grid (indX = floor(s0/dx) = " + num(ind) + " with numX = " +
               std::to_string(p.num_x) + "): 20*alpha*sqrt(t) must exceed 1, got " +
               num(20.0 * p.alpha * std::sqrt(p.t)));
}

Setup make_setup(const Params& p) {
  validate(p);
  Setup s;
  s.p = p;
  const std::int64_t nx = p.num_x, ny = p.num_y, nt = p.num_t;
  const double dx = x_step(p), dy = y_step(p), log_alpha = std::log(p.alpha);
  s.ind_x = static_cast<std::int64_t>(std::floor(p.s0 / dx));
  s.ind_y = ny / 2;
  s.time.resize(nt);
  s.pt.resize(nt);
  for (std::int64_t g = 0; g < nt; ++g) {
    s.time[g] = time_point(p.t, nt, g);
    s.pt[g] = std::exp(-p.nu * p.nu * s.time[g]);
  }
  s.dt_inv.resize(nt - 1);
  for (std::int64_t g = 0; g + 1 < nt; ++g) s.dt_inv[g] = 1.0 / (s.time[g + 1] - s.time[g]);
  s.x.resize(nx);
  s.px.resize(nx);
  for (std::int64_t i = 0; i < nx; ++i) {
    s.x[i] = x_point(dx, s.ind_x, p.s0, i);
    s.px[i] = std::exp(2.0 * p.beta * std::log(s.x[i]));
    if (!std::isfinite(s.px[i]))
      fail_input("the x grid reaches X[" + std::to_string(i) + "] = " + num(s.x[i]) +
                 " where X^(2*beta) is not finite (beta = " + num(p.beta) + ")");
  }
  s.y.resize(ny);
  s.py.resize(ny);
  for (std::int64_t j = 0; j < ny; ++j) {
    s.y[j] = y_point(dy, s.ind_y, log_alpha, j);
    s.py[j] = std::exp(2.0 * s.y[j]);
    if (!std::isfinite(s.py[j]) || s.py[j] == 0)
      fail_input("exp(2*Y) over- or underflows at Y[" + std::to_string(j) + "] = " + num(s.y[j]) +
                 ": nu*sqrt(t) is too large, got nu = " + num(p.nu) + ", t = " + num(p.t));
  }
  s.dxx.resize(3 * nx);
  for (std::int64_t i = 0; i < nx; ++i) dd_weights(s.x.data(), nx, i, &s.dxx[3 * i]);
  s.dyy.resize(3 * ny);
  for (std::int64_t j = 0; j < ny; ++j) dd_weights(s.y.data(), ny, j, &s.dyy[3 * j]);
  return s;
}

Method parse_method(const std::string& text) {
  if (text == "forward") return Method::forward;
  if (text == "adjoint") return Method::adjoint;
  fail_input("--method must be adjoint or forward, got '" + text + "'");
}
const char* method_name(Method m) { return m == Method::forward ? "forward" : "adjoint"; }

namespace {
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

json params_json(const Params& p) {
  return {{"outer", p.outer}, {"num_x", p.num_x}, {"num_y", p.num_y}, {"num_t", p.num_t},
          {"s0", p.s0},       {"t", p.t},         {"alpha", p.alpha}, {"nu", p.nu},
          {"beta", p.beta}};
}

Record make_problem_record(const Params& p, json attrs) {
  const double v[9] = {static_cast<double>(p.outer), static_cast<double>(p.num_x), static_cast<double>(p.num_y),
                       static_cast<double>(p.num_t), p.s0, p.t, p.alpha, p.nu, p.beta};
  attrs["kind"] = kInputKind;
  attrs["fields"] = {"outer", "num_x", "num_y", "num_t", "s0", "t", "alpha", "nu", "beta"};
  attrs["params"] = params_json(p);
  return Record::from<double>("problem", {9}, v, std::move(attrs));
}

namespace {
std::int64_t as_size(const char* name, double v) {
  if (!std::isfinite(v) || v != std::floor(v) || v < 0 || v > static_cast<double>(kMaxSide))
    fail_input(std::string("problem record: ") + name + " must be a whole number in [0, " +
               std::to_string(kMaxSide) + "], got " + num(v));
  return static_cast<std::int64_t>(v);
}
}  // namespace

Params params_from_record(const Record& r) {
  std::string kind = r.attrs.is_object() && r.attrs.contains("kind") && r.attrs["kind"].is_string()
                         ? r.attrs["kind"].get<std::string>()
                         : std::string("(none)");
  if (kind != kInputKind)
    fail_input("record '" + r.name + "' has kind '" + kind + "', expected '" + kInputKind +
               "' (make one with gen-input price)");
  if (r.dtype != DType::f8 || r.shape.size() != 1 || r.shape[0] != 9)
    fail_input("record '" + r.name + "' must be f8 [9], got " + dtype_name(r.dtype) + " " + shape_string(r.shape));
  const double* v = r.data<double>();
  Params p;
  p.outer = as_size("OUTER", v[0]);
  p.num_x = as_size("numX", v[1]);
  p.num_y = as_size("numY", v[2]);
  p.num_t = as_size("numT", v[3]);
  p.s0 = v[4];
  p.t = v[5];
  p.alpha = v[6];
  p.nu = v[7];
  p.beta = v[8];
  validate(p);
  return p;
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
