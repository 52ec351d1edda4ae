// mle, internal: the searches of one window (inference.hpp's estimate_window: the
// refined optimum, the theta interval) and estimate_window's body; host and device.
#pragma once
#include <cmath>
#include <cstdint>

#include "common/hd.hpp"
#include "../inference.hpp"
#include "window_math.hpp"

namespace numpipe::mle {

namespace detail {

struct State {
  double theta, p1, p2, s_l, s_r, ll;
  WindowSums sums;
};

// The profile at (t, p1, p2): sums, optimal scales, log-likelihood.
NUMPIPE_HD_OUTLINE State profile_state(const double* x, std::int64_t n, double scale, double t, double p1, double p2,
                                      bool all) {
  State st;
  st.theta = t;
  st.p1 = p1;
  st.p2 = p2;
  st.sums = window_sums(x, n, scale, t, p1, p2, all);
  const Fit2 f = profile2(st.sums.l.A0, st.sums.r.A0, shape_const(p1), shape_const(p2), static_cast<double>(n));
  st.ll = f.loglik;
  st.s_l = f.s_l;
  st.s_r = f.s_r;
  return st;
}

// The free coordinates of a step: theta (when smooth), p (tied) or p1 and p2.
struct Free {
  int idx[3];
  int m;
};

// Profile gradient and Hessian in the free coordinates: the full derivatives at
// the optimal scales (the scales' gradient is 0 there) with the scales
// eliminated: Hff - Hfs Hss^-1 Hsf. One shape: p1 and p2 tied (summed).
NUMPIPE_HD_INLINE void profile_derivatives(const State& st, double n, bool two, const Free& fr, double* gf,
                                           double (*Hf)[kParams]) {
  double g[kParams], H[kParams][kParams];
  loglik_derivatives(st.sums, st.p1, st.p2, st.s_l, st.s_r, n, g, H);
  // tie p2 to p1 with one shape
  if (!two) {
    g[kP1] += g[kP2];
    for (int j = 0; j < kParams; ++j) H[kP1][j] += H[kP2][j];
    for (int i = 0; i < kParams; ++i) H[i][kP1] += H[i][kP2];
  }
  // Hss^-1 (2x2)
  const double a = H[kSl][kSl], b = H[kSl][kSr], d = H[kSr][kSr], det = a * d - b * b;
  for (int i = 0; i < fr.m; ++i) {
    const int fi = fr.idx[i];
    gf[i] = g[fi];
    for (int j = 0; j < fr.m; ++j) {
      const int fj = fr.idx[j];
      const double ui = H[fi][kSl], vi = H[fi][kSr], uj = H[kSl][fj], vj = H[kSr][fj];
      // [ui vi] Hss^-1 [uj vj]^T with Hss^-1 = [d -b; -b a] / det
      const double corr = (ui * (d * uj - b * vj) + vi * (-b * uj + a * vj)) / det;
      Hf[i][j] = H[fi][fj] - corr;
    }
  }
}

// The profile's slope and curvature in theta alone (scales eliminated, shapes
// held): profile_derivatives with theta free, computing only the entries of
// loglik_derivatives it uses (theta's and the scales'), by the same operations
// in the same order, so the same bits; it needs no digamma or trigamma (the
// shapes' derivatives), which made up most of a theta step's work beside its
// pass over the window.
NUMPIPE_HD_INLINE void theta_slope(const State& st, double n, double* G, double* H) {
  const double sl = st.s_l, sr = st.s_r;
  const double gam0 = exp(lgamma(1.0 + 1.0 / st.p1)), gam1 = exp(lgamma(1.0 + 1.0 / st.p2));
  const double D = sl * gam0 + sr * gam1;
  // -n log D (loglik_derivatives' first loop; theta's entries of D's derivatives are 0)
  double gt = 0, Htt = 0, Hts[2] = {0, 0}, Hll = 0, Hlr = 0, Hrr = 0;
  gt -= n * 0.0 / D;
  Htt -= n * (0.0 / D - 0.0 * 0.0 / (D * D));
  Hts[0] -= n * (0.0 / D - 0.0 * gam0 / (D * D));
  Hts[1] -= n * (0.0 / D - 0.0 * gam1 / (D * D));
  Hll -= n * (0.0 / D - gam0 * gam0 / (D * D));
  Hlr -= n * (0.0 / D - gam0 * gam1 / (D * D));
  Hrr -= n * (0.0 / D - gam1 * gam1 / (D * D));
  // the sums' terms
  for (int side = 0; side < 2; ++side) {
    const SideSums& q = side == 0 ? st.sums.l : st.sums.r;
    const double p = side == 0 ? st.p1 : st.p2, sc = side == 0 ? sl : sr, sg = side == 0 ? 1.0 : -1.0;
    const double ls = log(sc), f = exp(-p * ls);
    const double Tt = sg * p * f * q.B0;
    const double Ttt = p * (p - 1.0) * f * q.C0;
    const double Tts = -sg * p * p * f * q.B0 / sc;
    const double Tss = p * (p + 1.0) * f * q.A0 / (sc * sc);
    gt -= Tt;
    Htt -= Ttt;
    Hts[side] -= Tts;
    (side == 0 ? Hll : Hrr) -= Tss;
  }
  // profile_derivatives' elimination of the scales
  const double a = Hll, b = Hlr, d = Hrr, det = a * d - b * b;
  const double ui = Hts[0], vi = Hts[1], uj = Hts[0], vj = Hts[1];
  const double corr = (ui * (d * uj - b * vj) + vi * (-b * uj + a * vj)) / det;
  *G = gt;
  *H = Htt - corr;
}

// The root of the profile's slope in the bracket [a, b] (G(a) dir > 0 >= G(b) dir,
// with their curvatures H): shrunk by Newton steps from its end with the smaller
// slope where they land inside and at least halve it, else by halving; towards
// an end on a data point by halving the logarithm of the distance from it (the
// root may be within a few ulps of the point). It stops when the bracket is 4
// ulps of theta plus tol_abs wide: where the slope's rounding cannot move the
// root further, so the result is the same on any machine to that width.
NUMPIPE_HD_OUTLINE State bracket_root(const double* x, std::int64_t n, double scale, State a, double Ga, double Ha,
                                     State b, double Gb, double Hb, double dir, double tol_abs, int* passes) {
  const double nd = static_cast<double>(n);
  for (int k = 0; k < 200; ++k) {
    const double tl = fmin(a.theta, b.theta), th = fmax(a.theta, b.theta), w = th - tl;
    if (w <= 0x1p-50 * (fabs(a.theta) + fabs(b.theta)) + tol_abs) break;
    const bool from_a = fabs(Ga) <= fabs(Gb);
    const double te = from_a ? a.theta : b.theta, Ge = from_a ? Ga : Gb, He = from_a ? Ha : Hb;
    double c = He < 0 && finite(He) ? te - Ge / He : NAN;
    if (!(c > tl && c < th && fabs(c - te) <= 0.5 * w)) {
      const double inner = dir > 0 ? a.sums.above : a.sums.below;  // a data point inside the bracket
      if (inner > tl && inner < th) {
        c = inner;
      } else if (a.sums.zero > 0 || b.sums.zero > 0) {
        const bool at_a = a.sums.zero > 0;
        const double y = at_a ? a.theta : b.theta, toward = at_a ? dir : -dir;
        const double dmin = fmax(0x1p-52 * fabs(y), tol_abs);
        c = y + toward * sqrt(dmin * w);
        if (!(c > tl && c < th)) c = 0.5 * (a.theta + b.theta);
      } else {
        c = 0.5 * (a.theta + b.theta);
      }
    }
    const State sc = profile_state(x, n, scale, c, a.p1, a.p2, true);
    ++*passes;
    double Gc = 0, Hc = 0;
    theta_slope(sc, nd, &Gc, &Hc);
    if (!finite(sc.ll) || !finite(Gc)) break;
    if (Gc == 0) return sc;
    if (Gc * dir > 0) {
      a = sc;
      Ga = Gc;
      Ha = Hc;
    } else {
      b = sc;
      Gb = Gc;
      Hb = Hc;
    }
  }
  return fabs(Ga) <= fabs(Gb) ? a : b;
}

// Two maxima of the profile whose log-likelihoods differ by less than
// kTieMargin (|loglik| + n) count as tied, and the smaller theta is taken: the
// backends' log-likelihoods of one point differ by about 1e-13 of that, so an
// exact tie (symmetric or repeated data) is decided the same way on both.
inline constexpr double kTieMargin = 1e-10;

// c replaces r as theta's maximum: higher by more than the margin, or tied and
// at a smaller theta.
NUMPIPE_HD_INLINE bool better_maximum(const State& c, const State& r, double n) {
  if (!finite(c.ll)) return false;
  const double margin = kTieMargin * (fabs(r.ll) + n);
  if (c.ll > r.ll + margin) return true;
  return !(c.ll < r.ll - margin) && c.theta < r.theta;
}

// The maximum next to the data point y at one end e of a bracket whose other
// maximum r is known. toward: the direction from e into the bracket; Ge, He: the
// slope and curvature at e, where y's own term has slope 0. Leaving y by u, the
// m points at y, m |theta - y|^q / s^q (q, s: the shape and scale of y's side),
// take m q s^-q u^(q-1) off the slope g = Ge toward, so for 1 <= q < 2, which
// bends within u* = (g s^q / (m q))^(1/(q-1)) of y, the profile has a maximum there, about
// g u* (1 - 1/q) above its value at y (at y itself when q = 1 and g < q s^-q).
// The search: a probe at sqrt(u* |r - y|) from y, past that maximum and before
// r's, then bracket_root between y and the probe. False when there is no such
// maximum apart from r, or it cannot be higher than r (its value at y plus twice
// that gain, below r's less the margin): the two are never compared then.
NUMPIPE_HD_OUTLINE bool end_maximum(const double* x, std::int64_t n, double scale, const State& e, double Ge,
                                   double He, double toward, double dir, const State& r, double tol_abs, int* passes,
                                   State* out) {
  const double nd = static_cast<double>(n);
  const bool left = toward > 0;  // y lies left of the thetas inside the bracket
  const double q = left ? e.p1 : e.p2, s = left ? e.s_l : e.s_r, g = Ge * toward;
  if (!(e.sums.zero > 0) || !(q >= 1 && q < 2) || !(s > 0) || !(g > 0) || !finite(e.ll)) return false;
  const double lr = log(g) + q * log(s) - log(q * static_cast<double>(e.sums.zero));  // log u*^(q-1), m points at y
  double u;
  if (q == 1) {
    if (!(lr < 0)) return false;
    u = 0;
  } else {
    u = exp(lr / (q - 1));
  }
  // r is that maximum (or there is none before r) when it lies within 4 u* of y
  // or within 4 widths of the search (bracket_root's) of y
  const double dist = fabs(r.theta - e.theta), width = 0x1p-50 * (fabs(e.theta) + fabs(r.theta)) + tol_abs;
  if (!(u < 0.25 * dist) || !(dist > 4.0 * width)) return false;
  const double margin = kTieMargin * (fabs(r.ll) + nd);
  if (e.ll + 2.0 * g * u + margin < r.ll) return false;
  if (u <= width) {  // at y to the search's width
    *out = e;
    return true;
  }
  const double tq = e.theta + toward * sqrt(u * dist);
  const State sq = profile_state(x, n, scale, tq, e.p1, e.p2, true);
  ++*passes;
  double Gq = 0, Hq = 0;
  theta_slope(sq, nd, &Gq, &Hq);
  if (!finite(sq.ll) || !(Gq * toward < 0)) return false;  // the profile still rises there: no maximum near y
  *out = toward == dir ? bracket_root(x, n, scale, e, Ge, He, sq, Gq, Hq, dir, tol_abs, passes)
                       : bracket_root(x, n, scale, sq, Gq, Hq, e, Ge, He, dir, tol_abs, passes);
  return fabs(out->theta - r.theta) > 4.0 * width;  // else r itself
}

// The profile's maximum over theta in [lo, hi] at the state's shapes, from the
// state's theta: the root of its slope G, which is continuous for p > 1 but
// bends sharply at the data points (the point's term varies as |x - theta|^(p-1):
// for p near 1 nearly a kink, where Newton steps hop across the point instead
// of converging, and the root can lie within rounding of the point). So the
// root is bracketed: steps in the rising direction (Newton's, at least doubling,
// never past the next data point) until the slope changes sign, then the bracket
// is shrunk (bracket_root). For 1 <= p < 2 such a bracket between two data points
// can hold two maxima, one next to each point (end_maximum), with a dip between
// them: which one the shrinking reaches depends on the rounding of the slopes
// it compares, so the two backends could end on different maxima. Both are
// found then and the higher taken (better_maximum: ties within the margin go
// to the smaller theta). passes: profile evaluations (one pass over the window
// each).
NUMPIPE_HD_OUTLINE State theta_solve(const double* x, std::int64_t n, double scale, State a, double lo, double hi,
                                    int* passes) {
  const double nd = static_cast<double>(n);
  double Ga = 0, Ha = 0;
  theta_slope(a, nd, &Ga, &Ha);
  if (!finite(a.ll) || !finite(Ga) || Ga == 0) return a;
  const double dir = Ga > 0 ? 1.0 : -1.0;
  const double tol_abs = 1e-15 * (a.s_l + a.s_r);
  auto newton_distance = [](double G, double H) { return H < 0 && finite(H) ? fabs(G / H) : 0.0; };
  // 1. the bracket [a, b]: G(a) dir > 0 >= G(b) dir
  double h = newton_distance(Ga, Ha);
  if (!(h > 0)) h = (a.s_l + a.s_r) / sqrt(nd);
  State b = a;
  double Gb = Ga, Hb = Ha;
  for (int k = 0;; ++k) {
    const double next = dir > 0 ? a.sums.above : a.sums.below;  // the nearest data point beyond a
    double t = a.theta + dir * h;
    if (finite(next) && (dir > 0 ? next < t : next > t)) t = next;
    t = fmin(hi, fmax(lo, t));
    if (t == a.theta) return a;  // on the bound, the slope pointing out
    b = profile_state(x, n, scale, t, a.p1, a.p2, true);
    ++*passes;
    theta_slope(b, nd, &Gb, &Hb);
    if (!finite(b.ll) || !finite(Gb)) return a;
    if (Gb * dir <= 0) break;
    if (k >= 60 || t == (dir > 0 ? hi : lo)) return b;
    a = b;
    Ga = Gb;
    Ha = Hb;
    h = fmax(newton_distance(Ga, Ha), 2.0 * h);
  }
  if (Gb == 0) return b;
  // 2. shrink it
  State r = bracket_root(x, n, scale, a, Ga, Ha, b, Gb, Hb, dir, tol_abs, passes);
  // 3. a maximum next to a data point at either end of the bracket
  State c;
  if (end_maximum(x, n, scale, a, Ga, Ha, dir, dir, r, tol_abs, passes, &c) && better_maximum(c, r, nd)) r = c;
  if (end_maximum(x, n, scale, b, Gb, Hb, -dir, dir, r, tol_abs, passes, &c) && better_maximum(c, r, nd)) r = c;
  return r;
}

// Bounded maximisation of the profile over the free coordinates (theta, and the
// shape or shapes). Theta, when free, is maximised by theta_solve at every
// shape tried (the profile over theta and the scales is smooth in the shapes,
// where the joint one bends at every data point); the shapes take Newton steps
// on it (Cholesky of minus its Hessian, theta eliminated by its Schur
// complement; where that fails, per-coordinate steps g_i / |H_ii|), projected
// into the box, halved until the log-likelihood does not fall. A shape on a
// bound whose gradient points out of the box is held there and the step solved
// for the others (projected Newton), so the convergence stays quadratic at a
// bound too.
//
// Where it stops must not depend on rounding (the CPU's and CUDA's exp, log
// and pow differ in the last bit, and CUDA contracts a*b + c). A step that
// gains less than the log-likelihood's own rounding, kLoglikNoise (|ll| + n),
// cannot be judged by comparing values: stopping at the first such comparison
// left the optimum wherever the rounding happened to say no, about
// sqrt(noise / curvature), 1e-8 of the scale, from the maximum. Instead, a
// Newton step whose first-order gain g.step is below the noise is accepted
// unless the log-likelihood falls by more than the noise; at that distance
// Newton converges quadratically (1e-7 -> 1e-13 -> the rounding of the
// gradient), and after kPolishSteps such steps the search stops: at the root
// of the gradient to its rounding, the same to about 1e-14 of the scale with
// any math library (tests/unit/test_mle_rounding.cpp). Other stops: no
// coordinate moves, a step is refused after 40 halvings, or 100 steps.
// passes: profile evaluations.
inline constexpr double kLoglikNoise = 1e-13;
inline constexpr int kPolishSteps = 2;

NUMPIPE_HD_OUTLINE State newton_maximise(const double* x, std::int64_t n, double scale, State st, bool two, Free fr,
                                        const double* lo, const double* hi, int* passes) {
  const double nd = static_cast<double>(n);
  // theta (inner) and the shapes (this loop)
  bool free_theta = false;
  double tlo = 0, thi = 0, slo[3], shi[3];
  Free all, sh;
  all.m = 0;
  sh.m = 0;
  for (int i = 0; i < fr.m; ++i)
    if (fr.idx[i] == kTheta) {
      free_theta = true;
      tlo = lo[i];
      thi = hi[i];
    }
  if (free_theta) all.idx[all.m++] = kTheta;
  for (int i = 0; i < fr.m; ++i)
    if (fr.idx[i] != kTheta) {
      slo[sh.m] = lo[i];
      shi[sh.m] = hi[i];
      sh.idx[sh.m++] = fr.idx[i];
      all.idx[all.m++] = fr.idx[i];
    }
  const int o = free_theta ? 1 : 0;  // the shapes' offset in `all`
  if (free_theta) st = theta_solve(x, n, scale, st, tlo, thi, passes);
  int polish = 0;
  for (int it = 0; it < 100 && sh.m > 0; ++it) {
    if (!finite(st.ll)) break;
    double gf[3] = {}, Hf[kParams][kParams] = {};
    profile_derivatives(st, nd, two, all, gf, Hf);
    // theta eliminated: it follows the shapes, d theta = -H_tt^-1 H_ts d shape;
    // not at a data point with p < 2 (the point's curvature is infinite: theta
    // stays on it)
    double g[3], Hs[3][3];
    const bool pinned = st.sums.zero > 0 && (st.p1 < 2 || st.p2 < 2);
    const double htt = Hf[0][0];
    const bool eliminate = free_theta && htt < 0 && finite(htt) && !pinned;
    for (int i = 0; i < sh.m; ++i) {
      g[i] = gf[i + o];
      for (int j = 0; j < sh.m; ++j) Hs[i][j] = Hf[i + o][j + o] - (eliminate ? Hf[i + o][0] * Hf[0][j + o] / htt : 0.0);
    }
    bool all_finite = true;
    for (int i = 0; i < sh.m; ++i) all_finite = all_finite && finite(g[i]);
    if (!all_finite) break;
    double cur[3];
    for (int i = 0; i < sh.m; ++i) cur[i] = sh.idx[i] == kP1 ? st.p1 : st.p2;
    // the shapes that may move: not on a bound with the gradient pushing out
    int act[3], m = 0;
    for (int i = 0; i < sh.m; ++i)
      if (!((cur[i] <= slo[i] && g[i] < 0) || (cur[i] >= shi[i] && g[i] > 0))) act[m++] = i;
    if (m == 0) break;  // a corner of the box is the maximum
    double L[kParams][kParams] = {}, sub[3] = {0, 0, 0}, step[3] = {0, 0, 0};
    for (int a = 0; a < m; ++a) {
      sub[a] = g[act[a]];
      for (int b = 0; b < m; ++b) L[a][b] = -Hs[act[a]][act[b]];
    }
    const bool newton = cholesky(L, m);
    if (newton) {
      cholesky_solve(L, m, sub);
      for (int a = 0; a < m; ++a) step[act[a]] = sub[a];
    } else {
      for (int a = 0; a < m; ++a) {
        const int i = act[a];
        const double h = fabs(Hs[i][i]);
        step[i] = h > 0 && finite(h) ? g[i] / h : (g[i] > 0 ? 0.25 : -0.25) * (shi[i] - slo[i]);
      }
    }
    const double noise = kLoglikNoise * (fabs(st.ll) + nd);
    bool accepted = false, moved = false, fine = false;
    for (int half = 0; half < 40 && !accepted; ++half) {
      double nx[3], gain = 0;
      moved = false;
      for (int i = 0; i < sh.m; ++i) {
        nx[i] = fmin(shi[i], fmax(slo[i], cur[i] + step[i]));
        gain += g[i] * (nx[i] - cur[i]);
        // the fallback steps have no quadratic convergence to finish them:
        // they stop at 1e-12 of the shape
        if (newton ? nx[i] != cur[i] : fabs(nx[i] - cur[i]) > 1e-12 * cur[i]) moved = true;
      }
      if (!moved) break;
      fine = newton && gain <= noise;
      double q1 = st.p1, q2 = st.p2;
      for (int i = 0; i < sh.m; ++i) {
        if (sh.idx[i] == kP1) q1 = nx[i];
        else q2 = nx[i];
      }
      if (!two) q2 = q1;
      State trial = profile_state(x, n, scale, st.theta, q1, q2, true);
      ++*passes;
      if (free_theta) trial = theta_solve(x, n, scale, trial, tlo, thi, passes);
      if (trial.ll >= st.ll || (fine && trial.ll >= st.ll - noise)) {
        st = trial;
        accepted = true;
      } else {
        for (int i = 0; i < sh.m; ++i) step[i] *= 0.5;
      }
    }
    if (!accepted || !moved) break;
    if (fine && ++polish >= kPolishSteps) break;
  }
  return st;
}

// The root of f in (a, b) with f(a) and f(b) of opposite signs, by false
// position with the Illinois modification (Dowell and Jarratt 1971).
template <class F>
NUMPIPE_HD_INLINE double illinois(F f, double a, double fa, double b, double fb, double tol) {
  int side = 0;
  double c = a;
  for (int it = 0; it < 100; ++it) {
    c = (a * fb - b * fa) / (fb - fa);
    if (!(c > fmin(a, b) && c < fmax(a, b))) c = 0.5 * (a + b);
    const double fc = f(c);
    if (fc == 0) return c;
    if ((fc > 0) == (fb > 0)) {
      b = c;
      fb = fc;
      if (side == -1) fa *= 0.5;
      side = -1;
    } else {
      a = c;
      fa = fc;
      if (side == 1) fb *= 0.5;
      side = 1;
    }
    if (fabs(b - a) <= tol) break;
  }
  return c;
}

// One end of the profile-likelihood interval for theta at fixed shapes: from
// theta-hat outward (dir +1 or -1) over the data points while the profile stays
// at or above `level`, then the crossing between the last such point and the
// next (between data points the profile is a smooth function of theta; for
// p <= 1 it is lowest midway, so the first crossing is the end). Past the last
// point the distance doubles until the profile falls below the level.
// The profile at theta = t: the scales maximised, the shapes held at the
// estimate's, or (shapes != nullptr, two shapes) maximised too in [lo, hi].
NUMPIPE_HD_OUTLINE State profile_at(const double* x, std::int64_t n, double scale, const State& best, double t,
                                   const Free* shapes, const double* lo, const double* hi) {
  if (!shapes) return profile_state(x, n, scale, t, best.p1, best.p2, false);
  int iterations = 0;
  return newton_maximise(x, n, scale, profile_state(x, n, scale, t, best.p1, best.p2, true), true, *shapes, lo, hi,
                         &iterations);
}

NUMPIPE_HD_OUTLINE double profile_end(const double* x, std::int64_t n, double scale, const State& best, double level,
                                     int dir, double span, const Free* shapes, const double* lo, const double* hi) {
  auto prof = [&](double t) { return profile_at(x, n, scale, best, t, shapes, lo, hi); };
  double t = best.theta, ft = best.ll;
  double next = dir > 0 ? best.sums.above : best.sums.below;
  for (std::int64_t k = 0; k <= n; ++k) {
    double b;
    State sb;
    if (finite(next)) {
      b = next;
      sb = prof(b);
    } else {
      double h = fmax(fabs(t - best.theta), span);
      b = t + dir * h;
      sb = prof(b);
      for (int i = 0; i < 200 && sb.ll >= level; ++i) {
        t = b;
        ft = sb.ll;
        h *= 2;
        b = t + dir * h;
        sb = prof(b);
      }
    }
    if (sb.ll >= level && finite(next)) {
      t = b;
      ft = sb.ll;
      next = dir > 0 ? sb.sums.above : sb.sums.below;
      continue;
    }
    if (!(sb.ll < level)) return b;  // no crossing found (NaN): the last point reached
    return illinois([&](double c) { return prof(c).ll - level; }, t, ft - level, b, sb.ll - level,
                    1e-13 * (fabs(t) + fabs(b)) + 1e-15 * span);
  }
  return t;
}

// The same where the profile is smooth in theta (p > 1): steps of h, 2h, 4h ...
// from theta-hat until the profile falls below the level, then the crossing.
NUMPIPE_HD_OUTLINE double profile_step_out(const double* x, std::int64_t n, double scale, const State& best,
                                          double level, int dir, double h, const Free* shapes, const double* lo,
                                          const double* hi) {
  auto prof = [&](double t) { return profile_at(x, n, scale, best, t, shapes, lo, hi).ll; };
  double t = best.theta, ft = best.ll, b = t + dir * h, fb = prof(b);
  for (int i = 0; i < 200 && fb >= level; ++i) {
    t = b;
    ft = fb;
    h *= 2;
    b = t + dir * h;
    fb = prof(b);
  }
  if (!(fb < level)) return b;
  return illinois([&](double c) { return prof(c) - level; }, t, ft - level, b, fb - level,
                  1e-13 * (fabs(t) + fabs(b)) + 1e-15 * h);
}

// The refine from the state st (its theta a data point or not): with p > 1 on
// both sides theta moves to the nearest maximum of the smooth profile while the
// shapes move within `box` (p1_lo, p1_hi, p2_lo, p2_hi; kept >= 1 in a smooth
// pass); with p <= 1 theta stays at its data point while the shapes move, and
// where they end above 1 a second, smooth pass frees theta. Both by
// newton_maximise on the profile (scales closed-form).
NUMPIPE_HD_OUTLINE State refine_from(const double* x, std::int64_t n, double scale, State st, const WindowTask& task,
                                    const double* box, double tmin, double tmax, int* passes) {
  const bool two = task.two_shapes;
  const bool smooth_start = st.p1 > 1 && st.p2 > 1;
  for (int pass = 0; pass < 2 && finite(st.ll); ++pass) {
    const bool smooth_pass = pass == 0 ? smooth_start : (!smooth_start && st.p1 > 1 && st.p2 > 1);
    if (pass == 1 && !smooth_pass) break;
    Free fr;
    fr.m = 0;
    double lo[3], hi[3];
    if (smooth_pass) {
      fr.idx[fr.m] = kTheta;
      lo[fr.m] = tmin;
      hi[fr.m] = tmax;
      ++fr.m;
    }
    const double p1lo = smooth_pass ? fmax(box[0], 1.0) : box[0];
    const double p2lo = smooth_pass ? fmax(box[2], 1.0) : box[2];
    if (box[1] > p1lo) {
      fr.idx[fr.m] = kP1;
      lo[fr.m] = p1lo;
      hi[fr.m] = box[1];
      ++fr.m;
    }
    if (two && box[3] > p2lo) {
      fr.idx[fr.m] = kP2;
      lo[fr.m] = p2lo;
      hi[fr.m] = box[3];
      ++fr.m;
    }
    st = newton_maximise(x, n, scale, st, two, fr, lo, hi, passes);
  }
  return st;
}

}  // namespace detail

NUMPIPE_HD_INLINE WindowEstimate estimate_window(const double* x, std::int64_t n, const WindowTask& task) {
  const double nd = static_cast<double>(n);
  const bool two = task.two_shapes;
  WindowEstimate out;
  for (int i = 0; i < kParams; ++i) out.se[i] = NAN;
  out.ci_lo = out.ci_hi = NAN;
  out.smooth = 0;
  out.iterations = 0;
  // scale: a power of two near the largest distance from theta0 (maxima and
  // minima are exact in any order: the CUDA kernel's lanes split the points)
  double span = 0, xmin = INFINITY, xmax = -INFINITY;
  int lane = 0, lanes = 1;
#ifdef __CUDA_ARCH__
  lanes = g_estimate_lanes;
  lane = static_cast<int>(threadIdx.x) & (lanes - 1);
#endif
  for (std::int64_t k = lane; k < n; k += lanes) {
    span = fmax(span, fabs(0.5 * x[k] - 0.5 * task.theta0));
    xmin = fmin(xmin, x[k]);
    xmax = fmax(xmax, x[k]);
  }
#ifdef __CUDA_ARCH__
  if (lanes > 1) {
    const unsigned group = estimate_group(lanes);
    for (int m = lanes >> 1; m > 0; m >>= 1) {
      span = fmax(span, __shfl_xor_sync(group, span, m));
      xmin = fmin(xmin, __shfl_xor_sync(group, xmin, m));
      xmax = fmax(xmax, __shfl_xor_sync(group, xmax, m));
    }
  }
#endif
  int e2 = 0;
  if (span > 0 && finite(span)) frexp(span, &e2);
  e2 = e2 + 1 > 1000 ? 1000 : (e2 + 1 < -1000 ? -1000 : e2 + 1);
  const double scale = ldexp(1.0, -e2), unscale = ldexp(1.0, e2);
  const double t0 = task.theta0 * scale;
  detail::State st = detail::profile_state(x, n, scale, t0, task.p1, task.p2, true);
  if (task.refine && finite(st.ll)) {
    const double box[4] = {task.p1_lo, task.p1_hi, task.p2_lo, task.p2_hi};
    st = detail::refine_from(x, n, scale, st, task, box, xmin * scale, xmax * scale, &out.iterations);
    // The higher maximum always: the refine climbs to the maximum next to where
    // it starts, but as the shapes move off the grid another location can win:
    // with p <= 1 another data point (the maximum over theta sits at a data
    // point), with p > 1 the maximum next to the other data point that bounds
    // theta's interval (two maxima can share an interval, with a dip between).
    // So the refine starts again from the data points just below and above the
    // estimate, and, where neither gains, from the best data point of the window
    // at the refined shapes when that beats the estimate (one pass over the
    // points each, O(n^2)); the highest result is kept, until none gains.
    for (int round = 0; round < 64; ++round) {
      bool gained = false;
      const detail::State from = st;
      auto try_from = [&](double t) {
        detail::State c = detail::profile_state(x, n, scale, t, from.p1, from.p2, true);
        ++out.iterations;
        c = detail::refine_from(x, n, scale, c, task, box, xmin * scale, xmax * scale, &out.iterations);
        if (c.ll > st.ll && detail::better_maximum(c, st, nd)) {
          st = c;
          gained = true;
        }
      };
      if (finite(from.sums.below)) try_from(from.sums.below);
      if (finite(from.sums.above)) try_from(from.sums.above);
      if (gained) continue;
      double best_t = from.theta, best_ll = from.ll;
      for (std::int64_t k = 0; k < n; ++k) {
        const double t = x[k] * scale;
        if (t == from.theta || t == from.sums.below || t == from.sums.above) continue;
        const double ll = detail::profile_state(x, n, scale, t, from.p1, from.p2, false).ll;
        if (ll > best_ll) {
          best_ll = ll;
          best_t = t;
        }
      }
      out.iterations += static_cast<int>(n);
      if (best_t != from.theta) try_from(best_t);
      if (!gained) break;
    }
    // a shape that ends on an edge of its box (the grid neighbours of the grid's
    // shape) inside the grid's range: the continuous optimum may lie beyond it,
    // so the search goes on over the grid's whole range from there
    const double edge = 1e-12;
    const bool on_edge = (st.p1 <= box[0] * (1 + edge) && box[0] > task.p_min) || (st.p1 >= box[1] * (1 - edge) && box[1] < task.p_max) ||
                         (two && ((st.p2 <= box[2] * (1 + edge) && box[2] > task.p_min) ||
                                  (st.p2 >= box[3] * (1 - edge) && box[3] < task.p_max)));
    if (on_edge) {
      const double wide[4] = {task.p_min, task.p_max, task.p_min, task.p_max};
      const detail::State c = detail::refine_from(x, n, scale, st, task, wide, xmin * scale, xmax * scale, &out.iterations);
      if (c.ll > st.ll) st = c;
    }
  }
  out.theta = st.theta * unscale;
  out.p1 = st.p1;
  out.p2 = st.p2;
  out.s_l = st.s_l * unscale;
  out.s_r = st.s_r * unscale;
  out.loglik = st.ll - nd * static_cast<double>(e2) * 0.69314718055994531;
  if (!task.inform || !finite(st.ll)) return out;

  // the information in the reported parameters (theta's rows expected, below)
  WindowSums info_sums = st.sums;
  if (st.p1 > 1 && st.p2 > 1) expect_theta_sums(info_sums, st.p1, st.p2, st.s_l, st.s_r, nd);
  double g[kParams], H[kParams][kParams];
  loglik_derivatives(info_sums, st.p1, st.p2, st.s_l, st.s_r, nd, g, H);
  // reported order: theta, p (tied) | p1, p2, s_l, s_r
  int cols[kParams];
  int K = 0;
  cols[K++] = kTheta;
  cols[K++] = kP1;
  if (two) cols[K++] = kP2;
  cols[K++] = kSl;
  cols[K++] = kSr;
  if (!two) {
    for (int j = 0; j < kParams; ++j) H[kP1][j] += H[kP2][j];
    for (int i = 0; i < kParams; ++i) H[i][kP1] += H[i][kP2];
  }
  // theta's row exists for p > 1 on both sides (the log-likelihood is then
  // continuously differentiable in theta, and theta's expected information is
  // finite); it is the expected one (expect_theta_sums), the rest observed:
  // the observed theta-theta entry sums |x - theta|^(p-2), dominated for p < 2
  // by the point nearest theta-hat, so theta +- 1.96 se from it covered 90% at
  // p = 1.5, and it changed by a factor of 4 when theta-hat moved by 1e-8
  // towards a data point, where the expectation depends on the estimates
  // smoothly.
  const bool smooth = st.p1 > 1 && st.p2 > 1;
  out.smooth = smooth ? 1 : 0;
  const int first = smooth ? 0 : 1;  // drop theta where its row does not exist
  const int m = K - first;
  double L[kParams][kParams] = {};
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < m; ++j) L[i][j] = -H[cols[i + first]][cols[j + first]];
  if (cholesky(L, m)) {
    // diag of (L L^T)^-1 = column sums of squares of L^-1
    for (int c = 0; c < m; ++c) {
      double e[kParams];
      for (int i = 0; i < m; ++i) e[i] = i == c ? 1.0 : 0.0;
      cholesky_solve(L, m, e);
      const double var = e[c];
      const int pi = cols[c + first];
      const double unit = (pi == kTheta || pi == kSl || pi == kSr) ? unscale : 1.0;
      out.se[c + first] = var > 0 ? sqrt(var) * unit : NAN;
    }
  }
  // theta's profile-likelihood interval
  const double level = st.ll - 0.5 * kChi2One95;
  const double sp = st.s_l + st.s_r > 0 ? st.s_l + st.s_r : 1.0;
  detail::State best = detail::profile_state(x, n, scale, st.theta, st.p1, st.p2, false);
  best.ll = st.ll;
  // two shapes: theta moves with both shapes (they set the density's form on
  // each side of it), so they are maximised at each theta, over the grid's range;
  // one shape: p held at its estimate (measured coverage 94-96%, docs/mle.md)
  detail::Free shape_free;
  shape_free.idx[0] = kP1;
  shape_free.idx[1] = kP2;
  shape_free.m = 2;
  const double slo[2] = {task.p_min, task.p_min}, shi[2] = {task.p_max, task.p_max};
  const detail::Free* sfree = two && task.p_max > task.p_min ? &shape_free : nullptr;
  if (smooth) {
    // smooth in theta: step out from theta-hat (first step: the Wald half-width,
    // at least (s_l + s_r)/(2 sqrt(n))), doubling, to the first point below the
    // level, then the crossing in the last step
    const double se = out.se[0] / unscale;
    const double h0 = fmax(finite(se) ? kZ95 * se : 0.0, 0.5 * sp / sqrt(nd));
    out.ci_lo = detail::profile_step_out(x, n, scale, best, level, -1, h0, sfree, slo, shi) * unscale;
    out.ci_hi = detail::profile_step_out(x, n, scale, best, level, +1, h0, sfree, slo, shi) * unscale;
  } else {
    out.ci_lo = detail::profile_end(x, n, scale, best, level, -1, sp, sfree, slo, shi) * unscale;
    out.ci_hi = detail::profile_end(x, n, scale, best, level, +1, sp, sfree, slo, shi) * unscale;
  }
  return out;
}

}  // namespace numpipe::mle
