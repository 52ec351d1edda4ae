// price: calibration by Levenberg-Marquardt (calibrate.hpp). The optimiser is Eigen's
// LevenbergMarquardt (unsupported/Eigen/LevenbergMarquardt: MINPACK's lmder, More
// 1978); this file supplies the residuals and their forward-difference Jacobian, and
// the start: Hagan's formula fitted to the quotes by the same optimiser.
#include "calibrate.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "black.hpp"
#include "common/error.hpp"
#include "common/strings.hpp"
#include "detail/backends.hpp"

#ifdef NUMPIPE_HAVE_EIGEN
#include <Eigen/Dense>
#include <unsupported/Eigen/LevenbergMarquardt>
#include <unsupported/Eigen/NumericalDiff>
#endif

namespace numpipe::price {

std::vector<std::string> parse_fit(const std::string& text) {
  if (text.empty()) fail_input("--fit names no parameter");
  std::vector<std::string> out;
  for (const std::string& item : split_fields(text)) {
    if (item != "alpha" && item != "nu" && item != "rho" && item != "beta")
      fail_input("--fit takes a comma list of alpha, nu, rho, beta; got '" + item + "' in '" + text + "'");
    if (std::find(out.begin(), out.end(), item) != out.end()) fail_input("--fit names " + item + " twice");
    out.push_back(item);
  }
  return out;
}

#ifndef NUMPIPE_HAVE_EIGEN

bool calibration_available() { return false; }

CalibrationResult calibrate(const Problem&, const CalibrationOptions&, const Engine&, const std::function<void(int)>&) {
  fail_resource("this build has no calibration: Eigen 3 (libeigen3-dev) was not found when it was built");
}

#else

bool calibration_available() { return true; }

namespace {

double param_of(const Params& p, const std::string& name) {
  return name == "alpha" ? p.alpha : name == "nu" ? p.nu : name == "rho" ? p.rho : p.beta;
}
void set_param(Params& p, const std::string& name, double v) {
  (name == "alpha" ? p.alpha : name == "nu" ? p.nu : name == "rho" ? p.rho : p.beta) = v;
}
// unbounded coordinates: log alpha, log nu, atanh rho, beta
double to_free(const std::string& name, double v) {
  return name == "alpha" || name == "nu" ? std::log(v) : name == "rho" ? std::atanh(v) : v;
}
double from_free(const std::string& name, double u) {
  return name == "alpha" || name == "nu" ? std::exp(u) : name == "rho" ? std::tanh(u) : u;
}
// d(value)/d(free coordinate)
double free_slope(const std::string& name, double v) {
  return name == "alpha" || name == "nu" ? v : name == "rho" ? 1 - v * v : 1;
}

constexpr double kInfeasible = 1e3;  // residual of every quote at an invalid trial point
constexpr double kStep = 1e-4;       // forward-difference step in the free coordinates

class Residuals {
 public:
  Residuals(const Problem& pr, const std::vector<std::string>& names, const Engine& engine,
            const std::function<void(int)>& progress)
      : pr_(pr), names_(names), engine_(engine), progress_(progress), contracts_(pr.contracts()) {
    const std::vector<double> ms = pr.maturities.empty() ? std::vector<double>{pr.p.t} : pr.maturities;
    for (const Quote& q : pr.quotes) {
      const double vol = pr.quote_kind == QuoteKind::implied_vol ? q.quote
                                                                 : implied_vol(q.quote, pr.p.s0, q.strike, q.maturity, q.put);
      target_.push_back(pr.quote_kind == QuoteKind::implied_vol ? black_price(pr.p.s0, q.strike, q.maturity, q.quote, q.put)
                                                                : q.quote);
      const double floor = 1e-3 * pr.p.s0 * std::sqrt(q.maturity);
      const double vega = std::isfinite(vol) && vol > 0 ? black_vega(pr.p.s0, q.strike, q.maturity, vol) : floor;
      scale_.push_back(q.weight / std::max(vega, floor));
      vol_.push_back(vol);
    }
  }
  std::size_t size() const { return target_.size(); }
  const std::vector<double>& targets() const { return target_; }

  Params params_at(const Eigen::VectorXd& u) const {
    Params p = pr_.p;
    for (std::size_t k = 0; k < names_.size(); ++k) set_param(p, names_[k], from_free(names_[k], u[k]));
    return p;
  }

  // Model prices at several points (NaN-free; an empty vector for an infeasible
  // point), in one batched pass on CUDA.
  std::vector<std::vector<double>> prices(const std::vector<Eigen::VectorXd>& points) {
    std::vector<std::vector<double>> out(points.size());
    std::vector<Setup> setups;
    std::vector<std::size_t> which;
    for (std::size_t k = 0; k < points.size(); ++k) {
      Problem trial = pr_;
      trial.p = params_at(points[k]);
      try {
        check_contracts(trial, [](std::size_t) { return std::string(); }, false);  // strikes inside the trial grid
        setups.push_back(make_setup(trial.p, pr_.maturities));
        which.push_back(k);
      } catch (const Error& e) {
        if (e.code() != ExitCode::bad_input) throw;
      }
    }
    double seconds = 0;
    std::vector<std::vector<double>> values = evaluate_points(setups, contracts_, engine_, &seconds, [&](int done) {
      if (progress_) progress_(evaluations_ + done);
    });
    device_seconds_ += seconds;
    evaluations_ += static_cast<int>(setups.size());
    for (std::size_t k = 0; k < setups.size(); ++k) out[which[k]] = std::move(values[k]);
    return out;
  }

  void residuals_of(const std::vector<double>& model, Eigen::VectorXd& f) const {
    f.resize(static_cast<Eigen::Index>(size()));
    for (std::size_t q = 0; q < size(); ++q)
      f[q] = model.empty() || !std::isfinite(model[q]) ? kInfeasible : scale_[q] * (model[q] - target_[q]);
  }

  // f at u; with `jacobian`, also the forward-difference Jacobian there (batched).
  // Points already evaluated with their Jacobian are answered from memory.
  void eval(const Eigen::VectorXd& u, Eigen::VectorXd& f, Eigen::MatrixXd* jacobian) {
    for (const Memo& m : memo_)
      if (m.u.size() == u.size() && m.u == u) {
        f = m.f;
        if (jacobian) *jacobian = m.j;
        last_model_ = m.model;
        return;
      }
    std::vector<Eigen::VectorXd> points = {u};
    if (jacobian) add_jacobian_points(u, points);
    const auto model = prices(points);
    residuals_of(model[0], f);
    last_model_ = model[0];
    if (jacobian) *jacobian = remember(u, f, model);
  }

  // Whether the fit should start at b rather than at a: b's sum of squares is the
  // smaller. a with its Jacobian (remembered for the fit) and b are priced in one pass.
  bool second_is_better(const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
    std::vector<Eigen::VectorXd> points = {a};
    add_jacobian_points(a, points);
    points.push_back(b);
    const auto model = prices(points);
    Eigen::VectorXd fa, fb;
    residuals_of(model[0], fa);
    residuals_of(model.back(), fb);
    remember(a, fa, model);
    return fb.squaredNorm() < fa.squaredNorm();
  }

  // The quotes' Black implied volatilities (NaN where a quoted price has none).
  const std::vector<double>& quote_vols() const { return vol_; }

  int evaluations() const { return evaluations_; }
  double device_seconds() const { return device_seconds_; }
  const std::vector<double>& last_model() const { return last_model_; }

 private:
  static void add_jacobian_points(const Eigen::VectorXd& u, std::vector<Eigen::VectorXd>& points) {
    for (Eigen::Index k = 0; k < u.size(); ++k) {
      Eigen::VectorXd v = u;
      v[k] += kStep;
      points.push_back(v);
    }
  }
  // The forward-difference Jacobian at u from model[1..n] (the points after u's),
  // remembered with f and u's prices.
  Eigen::MatrixXd remember(const Eigen::VectorXd& u, const Eigen::VectorXd& f, const std::vector<std::vector<double>>& model) {
    Eigen::MatrixXd j(f.size(), u.size());
    for (Eigen::Index k = 0; k < u.size(); ++k) {
      Eigen::VectorXd fk;
      residuals_of(model[static_cast<std::size_t>(k) + 1], fk);
      j.col(k) = (fk - f) / kStep;
    }
    memo_.push_back({u, f, j, model[0]});
    return j;
  }

  const Problem& pr_;
  std::vector<std::string> names_;
  Engine engine_;
  std::function<void(int)> progress_;
  std::vector<Contract> contracts_;
  std::vector<double> target_, scale_, vol_, last_model_;
  struct Memo {
    Eigen::VectorXd u, f;
    Eigen::MatrixXd j;
    std::vector<double> model;
  };
  std::vector<Memo> memo_;
  int evaluations_ = 0;
  double device_seconds_ = 0;
};

// Eigen's functor. On CUDA a function evaluation also prices the Jacobian's points
// (one batched pass costs about what one point does), cached for df.
struct Functor : Eigen::DenseFunctor<double> {
  Functor(Residuals& r, int inputs, bool speculate)
      : Eigen::DenseFunctor<double>(inputs, static_cast<int>(r.size())), res(r), speculate(speculate) {}
  int operator()(const InputType& x, ValueType& f) {
    if (speculate) {
      res.eval(x, f, &cached_jacobian);
      cached_x = x;
    } else {
      res.eval(x, f, nullptr);
    }
    return 0;
  }
  int df(const InputType& x, JacobianType& j) {
    if (speculate && cached_x.size() == x.size() && cached_x == x) {
      j = cached_jacobian;
      return 0;
    }
    ValueType f;
    const int before = res.evaluations();
    res.eval(x, f, &j);
    return res.evaluations() - before;
  }
  Residuals& res;
  bool speculate;
  Eigen::VectorXd cached_x;
  Eigen::MatrixXd cached_jacobian;
};

// Hagan's formula's residuals, weight_q (sigma_Hagan - sigma_q) over the used quotes
// with an implied volatility, in the fit's free coordinates (its Jacobian by Eigen's
// NumericalDiff: the formula costs nanoseconds).
struct HaganResiduals : Eigen::DenseFunctor<double> {
  HaganResiduals(const Problem& pr, const std::vector<std::string>& names, const std::vector<double>& vols,
                 const std::vector<bool>& used)
      : Eigen::DenseFunctor<double>(static_cast<int>(names.size()), static_cast<int>(vols.size())),
        pr(pr), names(names), vols(vols), used(used) {}
  int operator()(const InputType& u, ValueType& f) const {
    Params p = pr.p;
    for (std::size_t k = 0; k < names.size(); ++k) set_param(p, names[k], from_free(names[k], u[static_cast<Eigen::Index>(k)]));
    f.resize(static_cast<Eigen::Index>(vols.size()));
    for (std::size_t q = 0; q < vols.size(); ++q) {
      const Quote& quote = pr.quotes[q];
      const double model = hagan_implied_vol(p.s0, quote.strike, quote.maturity, p.alpha, p.beta, p.rho, p.nu);
      f[static_cast<Eigen::Index>(q)] = !std::isfinite(vols[q]) || !used[q] ? 0.0
                                        : std::isfinite(model)  ? quote.weight * (model - vols[q])
                                                                : kInfeasible;
    }
    return 0;
  }
  const Problem& pr;
  const std::vector<std::string>& names;
  const std::vector<double>& vols;
  const std::vector<bool>& used;
};

// The free parameters that fit Hagan's formula to the quotes' implied volatilities,
// from u; false when that fit gives no finite point. The formula is first order in
// the expiry, so it is fitted to the quotes that expire within a year (the shortest
// maturity's where fewer than the free parameters do): with 5 maturities to 5 years
// (alpha 0.25, nu 0.5, rho -0.4) that point was (0.2501, 0.501, -0.385), the fit to
// every quote (0.255, 0.317, -0.586).
bool hagan_start(const Problem& pr, const std::vector<std::string>& names, const std::vector<double>& vols,
                 Eigen::VectorXd& u) {
  constexpr double kShortExpiry = 1.0;
  double shortest = std::numeric_limits<double>::infinity();
  for (const Quote& q : pr.quotes) shortest = std::min(shortest, q.maturity);
  auto usable = [&](double within) {
    std::vector<bool> used(pr.quotes.size());
    for (std::size_t q = 0; q < used.size(); ++q) used[q] = std::isfinite(vols[q]) && pr.quotes[q].maturity <= within;
    return used;
  };
  auto too_few = [&](const std::vector<bool>& used) {
    return static_cast<std::size_t>(std::count(used.begin(), used.end(), true)) < names.size();
  };
  std::vector<bool> used = usable(kShortExpiry);
  if (too_few(used)) used = usable(shortest);
  if (too_few(used)) return false;
  HaganResiduals functor(pr, names, vols, used);
  Eigen::NumericalDiff<HaganResiduals> differenced(functor);
  Eigen::LevenbergMarquardt<Eigen::NumericalDiff<HaganResiduals>> lm(differenced);
  lm.setMaxfev(2000);
  lm.setXtol(1e-10);
  lm.setFtol(1e-12);
  Eigen::VectorXd v = u;
  lm.minimize(v);
  Eigen::VectorXd f;
  functor(v, f);
  if (!v.allFinite() || !f.allFinite()) return false;
  for (Eigen::Index q = 0; q < f.size(); ++q)
    if (f[q] == kInfeasible) return false;
  u = v;
  return true;
}

const char* status_text(Eigen::LevenbergMarquardtSpace::Status s) {
  using namespace Eigen::LevenbergMarquardtSpace;
  switch (s) {
    case RelativeReductionTooSmall: return "converged: the relative reduction of the sum of squares fell below ftol";
    case RelativeErrorTooSmall: return "converged: the relative change of the parameters fell below xtol";
    case RelativeErrorAndReductionTooSmall: return "converged: both the parameters and the sum of squares settled";
    case CosinusTooSmall: return "converged: the residuals are orthogonal to the Jacobian's columns";
    case FtolTooSmall: return "converged: no further reduction of the sum of squares is possible";
    case XtolTooSmall: return "converged: no further improvement of the parameters is possible";
    case GtolTooSmall: return "converged: the gradient vanishes";
    case TooManyFunctionEvaluation: return "did not converge: the limit of pricing passes was reached";
    case ImproperInputParameters: return "did not converge: the Jacobian could not be factored (improper input)";
    case UserAsked: return "did not converge: stopped";
    default: return "did not converge";
  }
}

// The coarse level of a two-level fit: the grid coarser by kCoarseFactor in x, y and
// time (the error of the second-order scheme falls kCoarseFactor^2 = 36 times from it
// to the given grid); none (false) when the given grid is not the sinh grid of the
// user's contracts or too small for a coarser one to help.
constexpr double kCoarseFactor = 6;
constexpr int kMaxCorrections = 4;  // passes of the given grid before falling back to its own fit
constexpr std::int64_t kTwoLevelMinX = 128;
bool coarse_level(const Problem& pr, Problem& coarse) {
  if (pr.p.grid != GridKind::sinh || pr.p.num_x < kTwoLevelMinX) return false;
  coarse = pr;
  auto by_factor = [](std::int64_t n, std::int64_t least) {
    return std::max<std::int64_t>(least, static_cast<std::int64_t>(8.0 * std::ceil(static_cast<double>(n) / kCoarseFactor / 8.0)));
  };
  const std::int64_t steps = std::max<std::int64_t>(static_cast<std::int64_t>(pr.maturities.size()) * 4,
                                                    static_cast<std::int64_t>(std::ceil(static_cast<double>(pr.p.num_t - 1) / kCoarseFactor)));
  coarse.p.num_x = by_factor(pr.p.num_x, 24);
  coarse.p.num_y = by_factor(pr.p.num_y, 16);
  coarse.p.num_t = steps + 1;
  return true;
}

// Levenberg-Marquardt on res's grid from u (updated in place), the accepted iterates
// logged; the optimiser's status.
Eigen::LevenbergMarquardtSpace::Status run_lm(Residuals& res, Eigen::VectorXd& u, const CalibrationOptions& options,
                                              const Engine& engine, const std::function<void(const Eigen::VectorXd&, double)>& log_point) {
  Functor functor(res, static_cast<int>(u.size()), engine.cuda && engine.method == Method::adjoint);
  Eigen::LevenbergMarquardt<Functor> lm(functor);
  lm.setMaxfev(options.max_evaluations);
  lm.setXtol(options.xtol);
  lm.setFtol(options.ftol);
  Eigen::LevenbergMarquardtSpace::Status status = lm.minimizeInit(u);
  if (status == Eigen::LevenbergMarquardtSpace::ImproperInputParameters) return status;
  log_point(u, lm.fnorm());
  Eigen::Index last = 0;
  do {
    status = lm.minimizeOneStep(u);
    if (lm.iterations() != last) {  // a step was accepted (Eigen counts from 1)
      last = lm.iterations();
      log_point(u, lm.fnorm());
    }
  } while (status == Eigen::LevenbergMarquardtSpace::Running);
  return status;
}

// The Gauss-Newton step -(J^T J)^-1 J^T f (least squares by a column-pivoting QR).
Eigen::VectorXd gauss_newton_step(const Eigen::MatrixXd& j, const Eigen::VectorXd& f) {
  return -j.colPivHouseholderQr().solve(f);
}

}  // namespace

CalibrationResult calibrate(const Problem& pr, const CalibrationOptions& options, const Engine& engine,
                            const std::function<void(int)>& progress) {
  if (!pr.list() || pr.quote_kind == QuoteKind::none)
    fail_input("--calibrate needs a quote table with prices or implied volatilities (gen-input price --from-text FILE)");
  const std::size_t n = options.fit.size();
  if (pr.quotes.size() < n)
    fail_input("--calibrate: " + std::to_string(pr.quotes.size()) + " quotes cannot determine " + std::to_string(n) +
               " parameters");
  make_setup(pr.p, pr.maturities);  // the start must give a valid grid (bad input says why)
  // Two levels (a defect correction, e.g. Deuflhard, Newton Methods for Nonlinear
  // Problems, 2004, sec. 4.1): the fit is made on a grid 6 times coarser (each pass
  // about 200 times cheaper), then corrected on the given grid by Gauss-Newton steps
  // with the coarse grid's Jacobian, each one pass of the given grid: the Jacobian's
  // discretisation error of a few per cent only slows the correction's convergence, its
  // fixed point is the given grid's fit. The two fits also measure the parameters'
  // discretisation error: it falls as the price error does (36 times from the coarse
  // grid), so the given grid's share is |fine - coarse| / 35.
  Problem coarse;
  const bool two_levels = options.two_levels && coarse_level(pr, coarse);
  const Problem& first = two_levels ? coarse : pr;
  Residuals res(first, options.fit, engine, progress);
  CalibrationResult out;
  out.names = options.fit;
  Eigen::VectorXd u(static_cast<Eigen::Index>(n));
  for (std::size_t k = 0; k < n; ++k) {
    out.start.push_back(param_of(pr.p, options.fit[k]));
    u[k] = to_free(options.fit[k], out.start.back());
  }
  // Hagan's formula fitted to the quotes first (microseconds); the PDE fit starts from
  // that point or from the given one, whichever the model fits better (one pass)
  out.started_from = "given";
  if (options.hagan_start) {
    Eigen::VectorXd uh = u;
    if (hagan_start(pr, options.fit, res.quote_vols(), uh) && uh != u) {
      for (std::size_t k = 0; k < n; ++k) out.hagan_values.push_back(from_free(options.fit[k], uh[static_cast<Eigen::Index>(k)]));
      if (!res.second_is_better(uh, u)) {
        u = uh;
        out.started_from = "hagan";
      }
    }
  }
  const double q = static_cast<double>(res.size());
  int evaluations_before = 0;  // the passes of the levels before the current one
  auto log_point = [&](const Eigen::VectorXd& at, double fnorm, int evaluations) {
    CalibrationIteration it;
    it.iteration = static_cast<int>(out.log.size());
    it.evaluations = evaluations;
    it.rms = fnorm / std::sqrt(q);
    for (std::size_t k = 0; k < n; ++k) it.values.push_back(from_free(options.fit[k], at[static_cast<Eigen::Index>(k)]));
    out.log.push_back(it);
  };
  Eigen::LevenbergMarquardtSpace::Status status =
      run_lm(res, u, options, engine, [&](const Eigen::VectorXd& at, double fnorm) { log_point(at, fnorm, res.evaluations()); });
  using namespace Eigen::LevenbergMarquardtSpace;
  auto lm_converged = [](Status s) {
    return s != TooManyFunctionEvaluation && s != ImproperInputParameters && s != UserAsked && s != Running && s != NotStarted;
  };
  out.converged = lm_converged(status);
  out.status = status_text(status);
  Eigen::VectorXd f;
  Eigen::MatrixXd j;
  res.eval(u, f, &j);  // the Jacobian there (remembered: no pass when the fit ended there)
  out.evaluations = res.evaluations();
  std::vector<double> model = res.last_model();
  Residuals fine(pr, options.fit, engine, [&](int done) {
    if (progress) progress(evaluations_before + done);
  });
  if (two_levels && out.converged) {
    out.coarse_evaluations = res.evaluations();
    out.coarse_grid = {coarse.p.num_x, coarse.p.num_y, coarse.p.num_t};
    const Eigen::VectorXd coarse_fit = u;
    for (std::size_t k = 0; k < n; ++k) out.coarse_values.push_back(from_free(options.fit[k], u[static_cast<Eigen::Index>(k)]));
    evaluations_before = res.evaluations();
    // Gauss-Newton on the given grid with the coarse Jacobian, updated by Broyden's
    // rank-one formula along each step (Broyden 1965); stopped when the next step is
    // below the parameters' discretisation share (converging further would not make the
    // fit more accurate) or below xtol
    const double error_ratio = std::pow(static_cast<double>(pr.p.num_x) / static_cast<double>(coarse.p.num_x), 2);
    Eigen::VectorXd fu;
    fine.eval(u, fu, nullptr);
    bool settled = false;
    for (int step = 0; step < kMaxCorrections && !settled; ++step) {
      const Eigen::VectorXd d = gauss_newton_step(j, fu);
      log_point(u, fu.norm(), evaluations_before + fine.evaluations());
      const Eigen::VectorXd share = (u - coarse_fit).cwiseAbs() / (error_ratio - 1);
      settled = step > 0 && ((d.cwiseAbs() - share).maxCoeff() <= 0 || d.norm() <= options.xtol * (options.xtol + u.norm()));
      if (settled) break;
      Eigen::VectorXd fv;
      fine.eval(u + d, fv, nullptr);
      j += (fv - fu - j * d) * d.transpose() / d.squaredNorm();
      u += d;
      fu = fv;
    }
    f = fu;
    model = fine.last_model();
    out.evaluations = evaluations_before + fine.evaluations();
    if (!settled) {
      // the correction did not settle: the fit on the given grid from where it got
      evaluations_before = out.evaluations;
      Residuals again(pr, options.fit, engine, [&](int done) {
        if (progress) progress(evaluations_before + done);
      });
      status = run_lm(again, u, options, engine,
                      [&](const Eigen::VectorXd& at, double fnorm) { log_point(at, fnorm, evaluations_before + again.evaluations()); });
      out.converged = lm_converged(status);
      out.status = status_text(status);
      again.eval(u, f, &j);
      out.evaluations = evaluations_before + again.evaluations();
      out.device_seconds += again.device_seconds();
      model = again.last_model();
    } else {
      out.status = "converged: the coarse grid's fit corrected on the given grid to within its discretisation error";
    }
    for (std::size_t k = 0; k < n; ++k) {
      const double v = from_free(options.fit[k], u[static_cast<Eigen::Index>(k)]);
      out.discretisation_error.push_back(std::abs(v - out.coarse_values[k]) / (error_ratio - 1));
    }
  }
  out.device_seconds += res.device_seconds() + fine.device_seconds();
  // the grid the reported prices come from: the given one, except after a coarse fit
  // that stopped early (params says so)
  out.fitted = res.params_at(u);
  if (!out.coarse_grid.empty()) {
    out.fitted.num_x = pr.p.num_x;
    out.fitted.num_y = pr.p.num_y;
    out.fitted.num_t = pr.p.num_t;
  }
  for (std::size_t k = 0; k < n; ++k) out.values.push_back(param_of(out.fitted, options.fit[k]));
  out.rms = f.norm() / std::sqrt(q);
  for (std::size_t k = 0; k < res.size(); ++k) {
    const Quote& qt = pr.quotes[k];
    const double price = model.empty() ? std::nan("") : model[k];
    const double vol = implied_vol(price, pr.p.s0, qt.strike, qt.maturity, qt.put);
    out.model_price.push_back(price);
    out.model_vol.push_back(vol);
    out.residual.push_back(pr.quote_kind == QuoteKind::implied_vol ? vol - qt.quote : price - qt.quote);
  }
  // standard errors: s^2 (J^T J)^-1 in the free coordinates, s^2 = RSS / (Q - P),
  // mapped to the parameters by the coordinates' slopes
  out.standard_error.assign(n, std::nan(""));
  if (res.size() > n) {
    const Eigen::MatrixXd jtj = j.transpose() * j;
    Eigen::FullPivLU<Eigen::MatrixXd> lu(jtj);
    if (lu.isInvertible()) {
      const Eigen::MatrixXd cov = lu.inverse() * (f.squaredNorm() / (q - static_cast<double>(n)));
      for (std::size_t k = 0; k < n; ++k)
        out.standard_error[k] = free_slope(options.fit[k], out.values[k]) * std::sqrt(std::max(0.0, cov(k, k)));
    }
  }
  return out;
}

#endif  // NUMPIPE_HAVE_EIGEN

}  // namespace numpipe::price
