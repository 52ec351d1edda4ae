// What a researcher reads off the forces on the bodies: the force coefficients
// (body_coefficients), the Strouhal number from the lift coefficient's spectrum, and the
// pressure coefficient on the surface (surface_pressure), each relative to a reference
// the user states (ns-step --ref-area, --ref-velocity, --ref-density, --ref-length).
// Host code after the run, unit-testable (tests/unit/test_ns_coefficients.cpp).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "model.hpp"
#include "ns.hpp"

namespace numpipe::ns {

// The reference of the coefficients, in the solver's units.
struct Reference {
  double area = 0;      // the force's reference area (2-D: the --ref-area length times the span)
  double velocity = 0;  // U
  double density = 1;   // rho_ref (1: the free stream's, the solver's reference density)
  double length = 0;    // L of the Strouhal number f L / U
  bool two_d = false;   // one point along z: Cd and Cl only
  // Unit vectors: drag along the free stream (x without one), lift across it (toward +y,
  // or +z for a stream along y), side = drag x lift.
  double drag[3] = {1, 0, 0}, lift[3] = {0, 1, 0}, side[3] = {0, 0, 1};
};

// The reference from the options: `area` (2-D: a length, the force being over the box's z
// extent), `velocity` (default |free stream|), `density`, `length` (default: 2-D the area's
// length; 3-D the diameter of a disc of that area). Exit 2 when no velocity can be had.
Reference make_reference(const Params& p, double area, std::optional<double> velocity, double density,
                         std::optional<double> length);

// The attrs of body_coefficients (kind, columns, reference, definition) and of
// surface_pressure (kind, columns, reference, definition).
json coefficient_attrs(const Reference& r);
json surface_pressure_attrs(const Reference& r);

// body_force's table [rows, 4] (t, Fx, Fy, Fz) as coefficients [rows, 3] (t, Cd, Cl) in
// 2-D or [rows, 4] (t, Cd, Cl, Cs) in 3-D: C = F . e / (rho_ref U^2 A / 2).
std::vector<double> coefficient_table(const std::vector<double>& force_table, const Reference& r);
int coefficient_columns(const Reference& r);

// The dominant frequency of a series: a Hann-windowed periodogram, zero-padded 8 times,
// its highest bin refined by a parabola through the log power of it and its neighbours.
struct SpectralPeak {
  bool found = false;
  std::string why;          // when not found
  double frequency = 0;     // cycles per unit of time
  double resolution = 0;    // 1 / (samples * dt): the width of one bin before padding
  double first = 0, last = 0;  // the span of time analysed
  long long samples = 0;    // after resampling onto a uniform grid
};
// `t` increasing (not necessarily uniform: the series is resampled linearly onto as many
// uniform points), `x` the values; the analysis covers t >= from. Needs 16 samples and
// two periods of the peak in the span.
SpectralPeak dominant_frequency(const std::vector<double>& t, const std::vector<double>& x, double from);

// The Strouhal number from body_coefficients' table (Cl in column 2): the lift's dominant
// frequency over t >= from, times L / U.
struct Strouhal {
  SpectralPeak peak;
  double value = 0, uncertainty = 0;  // St and the resolution's St (f L / U of one bin)
};
Strouhal strouhal_from_lift(const std::vector<double>& coefficients, const Reference& r, double from);
// As attrs: value, uncertainty, frequency, the method, window, span; or why there is none.
json strouhal_attrs(const Strouhal& s);

// The pressure coefficient Cp = (p - p_inf) / (rho_ref U^2 / 2) at the surface points of
// every body in the final state (one process: the whole grid): where the grid lines cross
// the surface, the density extrapolated linearly from the line's two fluid nodes next to it,
// p = c^2 (rho - 1) (the model's pressure, p_inf = 0 for the free stream's density 1). Rows
// body, x, y, z, angle, Cp, sorted by body then angle: the angle in degrees from the
// upstream stagnation point about the body's centre, signed toward the lift in 2-D
// (-180, 180], the polar angle [0, 180] in 3-D.
// Under MPI every rank passes its block and rank 0 gets the rows (the others: none), the
// same as one process's.
inline constexpr int kSurfaceColumns = 6;
std::vector<double> surface_pressure(const Problem& pr, const Result& res, const Reference& r);

// The pieces of surface_pressure, for a state at any time (the time-averaged Cp):
// the crossings of the grid lines with the bodies' surfaces (global order), and the
// global C-order indices of the two density nodes each reads (the fluid node next to
// the surface and the line's next one; the same node twice without one).
struct SurfaceProbe {
  std::vector<Crossing> crossings;
  std::vector<long long> nodes;  // 2 per crossing
};
SurfaceProbe make_surface_probe(const Problem& pr);
// The density at the probe's nodes from this process's block (offset, points per axis,
// C-order values, float or double): rank 0 gets every node's value (gathered under MPI:
// the same values for any rank count), the other ranks an empty vector.
std::vector<double> probe_density(const Problem& pr, const SurfaceProbe& probe, const long long offset[3], const int n[3],
                                  const void* rho, bool fp32);
// Cp at every crossing (probe order) from the density at its nodes.
std::vector<double> crossing_cp(const Problem& pr, const SurfaceProbe& probe, const std::vector<double>& rho,
                                const Reference& r);
// The rows body, x, y, z, angle, Cp of a Cp per crossing (sorted as surface_pressure's).
std::vector<double> surface_rows(const Problem& pr, const SurfaceProbe& probe, const std::vector<double>& cp,
                                 const Reference& r);
// The pressure's part of the force coefficients (Cd, Cl, and Cs in 3-D) of a Cp per
// crossing, every body together: -sum Cp sigma dA e_axis . e / A, the pressure term of
// the force integral (model.hpp crossing_force).
std::vector<double> pressure_coefficients(const SurfaceProbe& probe, const std::vector<double>& cp, const Reference& r);

// The time-averaged surface pressure: Cp at every crossing summed over the diagnostics
// rows from time `from` on (the window of the mean coefficients and of the Strouhal
// number), then divided by their count. add() on every rank (collective under MPI: the
// block's density gathered); the sums on rank 0, in row order: any rank count, the same bits.
struct SurfaceMean {
  SurfaceProbe probe;
  double from = 0;
  long long rows = 0;
  double first = 0, last = 0;  // the times of the first and last rows summed
  std::vector<double> sum;     // rank 0
  // The fields of this process's block at a diagnostics row (they must hold rho).
  void add(const Problem& pr, const BlockFields& b, const Reference& r);
  std::vector<double> mean() const;
};
// The record surface_pressure_mean's attrs: surface_pressure's, its window and the
// pressure's part of the force coefficients of the mean Cp.
json surface_mean_attrs(const SurfaceMean& m, const std::vector<double>& mean_cp, const Reference& r);

// The mean of body_coefficients' columns over its rows with t >= from, as attrs:
// from, first, last, rows, Cd, Cl (and Cs); null values without a row.
json mean_coefficients(const std::vector<double>& coefficients, const Reference& r, double from);

}  // namespace numpipe::ns
