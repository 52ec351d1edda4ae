// LocVolCalib (FinPar; Andreetta et al., "FinPar: A Parallel Financial
// Benchmark", ACM TACO 2016): the model and the arithmetic that both backends
// share. Definitions: ../shared/spec/price.md ("Grid", "Operators", "Time loop").
//
// Everything here is NUMPIPE_HD so that g++ (cpu.cpp) and nvcc (cuda.cu) compile
// the same formulas from the same source, in the same order of operations.
//
// Notation (the spec's): R[i][j] is the value on the grid point (X[i], Y[j]),
// i along x (numX points), j along y (numY points). MuX = MuY = 0 in
// LocVolCalib, so the first-derivative operators D drop out of every formula:
// the terms MuX*Dx and MuY*Dy are exactly zero and are not computed.
#pragma once
#include <cmath>
#include <cstdint>

#include "common/hd.hpp"

namespace numpipe::price {

// The parameters of one LocVolCalib problem (one FinPar data set). rho, the
// correlation of the two Brownian motions, is 0 in LocVolCalib; rho != 0 adds the
// mixed-derivative term of correlated SABR (below).
// The grid: FinPar's (uniform in x and y, coefficients at the step's earlier time
// level), or the user's contracts' (sinh-mapped x from 0 with s0 on a node, sinh-mapped
// y about log alpha, coefficients at each step's midpoint: setup.cpp make_setup).
enum class GridKind : std::int32_t { finpar = 0, sinh = 1 };

struct Params {
  std::int64_t outer = 0;  // strikes: strike_o = 0.001 * o (FinPar), or the user's strikes or quotes
  std::int64_t num_x = 0, num_y = 0, num_t = 0;
  double s0 = 0, t = 0, alpha = 0, nu = 0, beta = 0;
  double rho = 0;
  GridKind grid = GridKind::finpar;
};

NUMPIPE_HD_INLINE double strike_of(std::int64_t o) { return 0.001 * static_cast<double>(o); }

// ---- grid (spec "Grid"; FinPar initGrid) ------------------------------------------
NUMPIPE_HD_INLINE double time_point(double t, std::int64_t num_t, std::int64_t i) {
  return t * static_cast<double>(i) / static_cast<double>(num_t - 1);
}
NUMPIPE_HD_INLINE double x_step(const Params& p) {
  return 20.0 * p.alpha * p.s0 * std::sqrt(p.t) / static_cast<double>(p.num_x);
}
NUMPIPE_HD_INLINE double y_step(const Params& p) {
  return 10.0 * p.nu * std::sqrt(p.t) / static_cast<double>(p.num_y);
}
NUMPIPE_HD_INLINE double x_point(double dx, std::int64_t ind_x, double s0, std::int64_t i) {
  return static_cast<double>(i) * dx - static_cast<double>(ind_x) * dx + s0;
}
NUMPIPE_HD_INLINE double y_point(double dy, std::int64_t ind_y, double log_alpha, std::int64_t j) {
  return static_cast<double>(j) * dy - static_cast<double>(ind_y) * dy + log_alpha;
}

// A sinh-mapped grid point: center + c*sinh(d_xi*(i - ind)), uniform in xi =
// asinh((x - center)/c), so the spacing is about c*d_xi within c of the center and grows
// like x itself beyond it (Tavella and Randall, "Pricing Financial Instruments: The
// Finite Difference Method", Wiley 2000; In 't Hout and Foulon, Int. J. Numer. Anal.
// Model. 7 (2010) 303-320). Node ind is the center exactly.
NUMPIPE_HD_INLINE double sinh_point(double center, double c, double d_xi, std::int64_t ind, std::int64_t i) {
  return center + c * std::sinh(d_xi * static_cast<double>(i - ind));
}

// Second-derivative weights DD on a non-uniform grid xx of n points at point i
// (spec "Operators"; the usual three-point formula for unequal spacings);
// zero rows at both ends.
NUMPIPE_HD_INLINE void dd_weights(const double* xx, std::int64_t n, std::int64_t i, double w[3]) {
  if (i == 0 || i == n - 1) {
    w[0] = w[1] = w[2] = 0.0;
    return;
  }
  const double dl = xx[i] - xx[i - 1], du = xx[i + 1] - xx[i];
  w[0] = 2.0 / dl / (dl + du);
  w[1] = -2.0 * (1.0 / dl + 1.0 / du) / (dl + du);
  w[2] = 2.0 / du / (dl + du);
}

// Central first-derivative weights D on a non-uniform grid (spec "Operators",
// interior rows), for the mixed term only: zero rows at both ends, where the
// second-derivative rows are zero too (the boundary lines carry no diffusion
// across them, and no cross term).
NUMPIPE_HD_INLINE void d_weights_interior(const double* xx, std::int64_t n, std::int64_t i, double w[3]) {
  if (i == 0 || i == n - 1) {
    w[0] = w[1] = w[2] = 0.0;
    return;
  }
  const double dl = xx[i] - xx[i - 1], du = xx[i + 1] - xx[i];
  w[0] = -du / dl / (dl + du);
  w[1] = (du / dl - dl / du) / (dl + du);
  w[2] = dl / du / (dl + du);
}

// Payoff at X of a call (max(X - K, 0)) or a put (max(K - X, 0)).
NUMPIPE_HD_INLINE double payoff_value(double x, double strike, bool put) {
  return put ? fmax(strike - x, 0.0) : fmax(x - strike, 0.0);
}

// The payoff averaged over [X - c, X + c] (c = 0: the value at X). A node's cell
// symmetric about it keeps linear functions exact (so put-call parity holds exactly)
// and makes a price a smooth function of the strike's position between two nodes
// instead of the piecewise-linear one of point values (cell averaging of the
// payoff's kink: Pooley, Vetzal and Forsyth, J. Comput. Finance 6(4), 2003).
NUMPIPE_HD_INLINE double payoff_cell(double x, double c, double strike, bool put) {
  if (c <= 0) return payoff_value(x, strike, put);
  const double lo = x - c, hi = x + c;
  if (put) {
    if (strike >= hi) return strike - x;
    if (strike <= lo) return 0.0;
    return (strike - lo) * (strike - lo) / (4.0 * c);
  }
  if (strike <= lo) return x - strike;
  if (strike >= hi) return 0.0;
  return (hi - strike) * (hi - strike) / (4.0 * c);
}

// VarX[j][i] = exp(2*(beta*log(X[i]) + Y[j] - 0.5*nu^2*Time[g])) (spec "Time loop"),
// evaluated in separable form: px[i] = exp(2*beta*log X[i]), py[j] = exp(2*Y[j]),
// pt[g] = exp(-nu^2*Time[g]); VarX = px[i] * (py[j]*pt[g]). The same value up to
// rounding (a few ulp), and strike-independent, so both backends build px, py, pt
// once on the host. qy = py[j]*pt[g] is formed once per (g, j).
template <class Real>
NUMPIPE_HD_INLINE Real var_x(Real px_i, Real qy_j) {
  return px_i * qy_j;
}

// ---- one rollback step (spec "Time loop"; FinPar rollback) ---------------------------
// Coefficients of the explicit x operator at (i, j): h_k = 0.5*(0.5*VarX*Dxx[i][k]).
// The implicit x system is then a = -h0, b = dtInv - h1, c = -h2.
template <class Real>
NUMPIPE_HD_INLINE Real half_half(Real var, Real w) {
  return Real(0.5) * (Real(0.5) * var * w);
}

// Explicit x: dtInv*R[i] + sum_k h_k R[i-1+k] (terms outside the grid omitted: at
// the ends the weights are zero, and the caller passes 0 for the missing value).
template <class Real>
NUMPIPE_HD_INLINE Real explicit_x(Real dt_inv, Real h0, Real h1, Real h2, Real rm, Real rc, Real rp) {
  Real u = dt_inv * rc;
  u += h0 * rm;
  u += h1 * rc;
  u += h2 * rp;
  return u;
}

// Explicit y: V = sum_k g_k R[j-1+k], g_k = 0.5*VarY*Dyy[j][k] (VarY = nu^2).
template <class Real>
NUMPIPE_HD_INLINE Real explicit_y(Real g0, Real g1, Real g2, Real rm, Real rc, Real rp) {
  Real v = g0 * rm;
  v += g1 * rc;
  v += g2 * rp;
  return v;
}

// Right side of the implicit y system: dtInv*U - 0.5*V.
template <class Real>
NUMPIPE_HD_INLINE Real rhs_y(Real dt_inv, Real u, Real v) {
  return dt_inv * u - Real(0.5) * v;
}

// ---- tridiagonal solves: the Thomas algorithm (forward elimination, back
// substitution), written with the reciprocal of each pivot so that the
// factorisation (which depends only on a, b, c) can be computed once and reused
// for every right side:
//   inv_0 = 1/b_0;  beta_i = a_i*inv_{i-1};  inv_i = 1/(b_i - beta_i*c_{i-1})
//   z_0 = r_0;      z_i = r_i - beta_i*z_{i-1}
//   u_{n-1} = z_{n-1}*inv_{n-1};  u_i = (z_i - c_i*u_{i+1})*inv_i
template <class Real>
NUMPIPE_HD_INLINE Real thomas_inv(Real b, Real beta, Real c_prev) {
  return Real(1) / (b - beta * c_prev);
}
template <class Real>
NUMPIPE_HD_INLINE Real thomas_forward(Real r, Real beta, Real z_prev) {
  return r - beta * z_prev;
}
template <class Real>
NUMPIPE_HD_INLINE Real thomas_back(Real z, Real c, Real u_next, Real inv) {
  return (z - c * u_next) * inv;
}

// ---- the adjoint of one rollback step ----------------------------------------------
// One step maps R to S^-1 (dtInv T^-1 (E + G) R - 0.5 G R), with E the explicit x
// operator (dtInv + h), G the explicit y operator (weights g), T the x systems and S
// the y systems, none of which depends on the strike. The price of a strike is the
// value at (indX, indY) after all steps, a linear functional of its payoff; so one
// backward pass of the transposed steps over the unit vector at (indX, indY) gives
// weights w with price = sum_ij w[i][j] * payoff[i][j] for every strike (the
// adjoint method). Transposed step on w:
//   z = S^-T w;  y = T^-T (dtInv z);  w' = E^T y + G^T (y - 0.5 z).
// With T = L U (L unit lower, sub-diagonal beta_i; U upper, diagonal 1/inv_i,
// super-diagonal c_i; the factors above), T^T = U^T L^T, solved by
//   ascending:  y_i = (r_i - c_{i-1} y_{i-1}) * inv_i     (thomas_back's form)
//   descending: x_i = y_i - beta_{i+1} x_{i+1}            (thomas_forward's form)
// with c_{-1} = beta_n = 0: the two sweeps of the forward solve, in the other order.
//
// E^T at point i (the forward stencil's weights read from the neighbours):
// (dtInv + h1_i) y_i + h0_{i+1} y_{i+1} + h2_{i-1} y_{i-1}.
template <class Real>
NUMPIPE_HD_INLINE Real explicit_x_adjoint(Real dt_inv, Real h1, Real h0_next, Real h2_prev, Real ym, Real yc,
                                          Real yp) {
  Real w = dt_inv * yc;
  w += h1 * yc;
  w += h0_next * yp;
  w += h2_prev * ym;
  return w;
}
// G^T at point j: g1_j p_j + g0_{j+1} p_{j+1} + g2_{j-1} p_{j-1}, summed in this order:
// explicit_y's sum of the same three products. (E^T above adds its terms in another
// order than explicit_x, so it is written out: the other order rounds differently.)
template <class Real>
NUMPIPE_HD_INLINE Real explicit_y_adjoint(Real g1, Real g0_next, Real g2_prev, Real pm, Real pc, Real pp) {
  return explicit_y(g1, g0_next, g2_prev, pc, pp, pm);
}
// The right side the G^T term acts on: y - 0.5 z.
template <class Real>
NUMPIPE_HD_INLINE Real adjoint_p(Real y, Real z) {
  return y - Real(0.5) * z;
}

// ---- correlated SABR: the mixed-derivative term (rho != 0) --------------------------
// With d<X, Y> = rho * nu * sqrt(VarX) dt the PDE gains rho*nu*sqrt(VarX) V_xy. Its
// discretisation C = m[i][j] (Dx (x) Dy), m = rho*nu*sqrt(px[i])*sqrt(qy[j]) at the
// step's time level (like VarX), with the central weights above (zero on the
// boundary lines). C is explicit in ADI: the step becomes the modified Craig-Sneyd
// scheme with theta = 1/2 (In 't Hout and Welfert, Appl. Numer. Math. 57 (2007)
// 19-35 and 59 (2009) 677-692; In 't Hout and Foulon, Int. J. Numer. Anal. Model. 7
// (2010) 303-320), in the scaled form of the spec's step (E, G, T, S below):
//   U  = (E + G + C) R                     x right side (FinPar's U plus C R)
//   Y1 = T^-1 U;  Y2 = S^-1 (dtInv Y1 - 0.5 G R)           (FinPar's step)
//   U2 = U + 0.5 C (Y2 - R)                the corrector's x right side
//   Z1 = T^-1 U2; R' = S^-1 (dtInv Z1 - 0.5 G R)
// With rho = 0, C = 0 and U2 = U: R' = Y2, FinPar's step, which is then run alone
// (the same bits as without the term).
template <class Real>
NUMPIPE_HD_INLINE Real mixed_coefficient(Real rho_nu, Real sx_i, Real sq_j) {
  return rho_nu * (sx_i * sq_j);
}

// The step's mixed-term tables: sx[i] = X^beta, sq[j] = sqrt(py[j]*pt[g]) (this
// step's row), dx1 [nx][3], dy1 [ny][3] central weights with zero end rows.
template <class Real>
struct MixedStep {
  const Real* sx;
  const Real* sq;
  const Real* dx1;
  const Real* dy1;
  Real rho_nu;
  std::int64_t nx, ny;
};

// (C R)[i][j] = m[i][j] * sum_a dx1[i][a] * sum_b dy1[j][b] * R[i-1+a][j-1+b]; zero on
// the boundary lines.
template <class Real>
NUMPIPE_HD_INLINE Real mixed_at(const MixedStep<Real>& c, const Real* r, std::int64_t i, std::int64_t j) {
  if (i == 0 || j == 0 || i == c.nx - 1 || j == c.ny - 1) return Real(0);
  Real acc = 0;
  for (int a = 0; a < 3; ++a) {
    const Real* row = r + (i - 1 + a) * c.ny + (j - 1);
    Real v = c.dy1[3 * j] * row[0];
    v += c.dy1[3 * j + 1] * row[1];
    v += c.dy1[3 * j + 2] * row[2];
    acc += c.dx1[3 * i + a] * v;
  }
  return mixed_coefficient(c.rho_nu, c.sx[i], c.sq[j]) * acc;
}

// (C^T v)[k][l] = sum over the 3x3 neighbours (i, j) of m[i][j] dx1[i][k-i+1]
// dy1[j][l-j+1] v[i][j] (the boundary lines' rows of C are zero: they add nothing).
template <class Real>
NUMPIPE_HD_INLINE Real mixed_adjoint_at(const MixedStep<Real>& c, const Real* v, std::int64_t k, std::int64_t l) {
  Real acc = 0;
  for (int di = -1; di <= 1; ++di) {
    const std::int64_t i = k + di;
    if (i < 1 || i > c.nx - 2) continue;
    Real row = 0;
    for (int dj = -1; dj <= 1; ++dj) {
      const std::int64_t j = l + dj;
      if (j < 1 || j > c.ny - 2) continue;
      row += mixed_coefficient(c.rho_nu, c.sx[i], c.sq[j]) * c.dy1[3 * j + 1 - dj] * v[i * c.ny + j];
    }
    acc += c.dx1[3 * i + 1 - di] * row;
  }
  return acc;
}

}  // namespace numpipe::price
