// price, internal: the grid's axes, the coarser grid of the error estimate, and the
// tables of the y solves and of the mixed term that both backends read (price.hpp).
#pragma once
#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/price/price.hpp"

namespace numpipe::price {

// The grid coarser by 2 in each direction (numX, numY halved, the time steps halved):
// price_error is |price - its price on this grid| / 3, Richardson's estimate of the
// finer grid's error for a second-order scheme. numT keeps a step per maturity.
Params coarser_by_two(const Params& p, std::size_t maturities);

// One axis of the grid: its points and the node of the start (s0, or log alpha).
// FinPar's grid: the spec's uniform points. The sinh grid (GridKind::sinh): x from 0
// (a node) with s0 on node ind, concentrated about s0; y concentrated about log alpha
// (node numY/2). t_min: the shortest maturity, which sets the concentration.
struct Axis {
  std::vector<double> points;
  std::int64_t ind = 0;
};
Axis x_axis(const Params& p, double t_min);
Axis y_axis(const Params& p, double t_min);

// The y direction's implicit systems do not depend on the strike nor on the row i
// (VarY = nu^2 is constant): their explicit weights gy = 0.5*VarY*Dyy[j][k], and per
// time step g their Thomas factors (beta, inv) and upper diagonal c, in Real.
// factors = false: gy and c only (the CUDA mixed-term pass forms the factors on the
// device by the same operations).
template <class Real>
struct YTables {
  std::vector<Real> gy;    // [numY][3]
  std::vector<Real> c;     // [numY]         -0.5*gy[j][2]
  std::vector<Real> beta;  // [numT-1][numY] beta_0 = 0
  std::vector<Real> inv;   // [numT-1][numY]
};
template <class Real>
YTables<Real> make_y_tables(const Setup& s, bool factors = true) {
  const std::int64_t ny = s.p.num_y, steps = factors ? s.p.num_t - 1 : 0;
  YTables<Real> t;
  t.gy.resize(3 * ny);
  t.c.resize(ny);
  t.beta.resize(steps * ny);
  t.inv.resize(steps * ny);
  const Real var_y = Real(s.p.nu) * Real(s.p.nu);
  for (std::int64_t j = 0; j < ny; ++j) {
    for (int k = 0; k < 3; ++k) t.gy[3 * j + k] = Real(0.5) * var_y * Real(s.dyy[3 * j + k]);
    t.c[j] = -(Real(0.5) * t.gy[3 * j + 2]);
  }
  for (std::int64_t g = 0; g < steps; ++g) {
    const Real dt_inv = Real(s.dt_inv[g]);
    Real* beta = t.beta.data() + g * ny;
    Real* inv = t.inv.data() + g * ny;
    for (std::int64_t j = 0; j < ny; ++j) {
      const Real a = -(Real(0.5) * t.gy[3 * j + 0]);
      const Real b = dt_inv - Real(0.5) * t.gy[3 * j + 1];
      beta[j] = j == 0 ? Real(0) : a * inv[j - 1];
      inv[j] = thomas_inv(b, beta[j], j == 0 ? Real(0) : t.c[j - 1]);
    }
  }
  return t;
}

// The mixed term's tables (rho != 0), in Real: sx [numX], sq [numT-1][numY] =
// sqrt(py[j]*pt[g]) (computed in double), dx1, dy1; the step g view is step(g).
template <class Real>
struct MixedTables {
  Real rho_nu = 0;
  std::int64_t nx = 0, ny = 0;
  std::vector<Real> sx, sq, dx1, dy1;
  MixedStep<Real> step(std::int64_t g) const {
    return {sx.data(), sq.data() + g * ny, dx1.data(), dy1.data(), rho_nu, nx, ny};
  }
};
template <class Real>
MixedTables<Real> make_mixed_tables(const Setup& s) {
  MixedTables<Real> m;
  m.rho_nu = Real(s.p.rho * s.p.nu);
  m.nx = s.p.num_x;
  m.ny = s.p.num_y;
  m.sx.assign(s.sx.begin(), s.sx.end());
  m.dx1.assign(s.dx1.begin(), s.dx1.end());
  m.dy1.assign(s.dy1.begin(), s.dy1.end());
  const std::int64_t steps = s.p.num_t - 1;
  m.sq.resize(steps * m.ny);
  for (std::int64_t g = 0; g < steps; ++g)
    for (std::int64_t j = 0; j < m.ny; ++j) m.sq[g * m.ny + j] = Real(std::sqrt(s.py[j] * s.pt[g]));
  return m;
}

}  // namespace numpipe::price
