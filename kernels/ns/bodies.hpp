// ns-step's bodies and free stream on one block: which nodes are solid, the
// immersed-boundary tables the sub-step reads (model.hpp "immersed bodies"), the
// surface crossings the forces are summed over, and the sponge's relaxation rates.
// Everything is computed from global coordinates, so every block of a decomposition
// (and both backends) gets the values a single block would.
#pragma once
#include <array>
#include <vector>

#include "ns.hpp"

namespace numpipe::ns {

// The tables of one block. row_start has n0 * n1 + 1 entries (rows (i, j) of the
// block's interior, i major); a row's entries are entries[row_start[r] .. row_start[r+1]).
template <class T>
struct IbTables {
  std::vector<int> row_start;
  std::vector<IbEntry> entries;
  std::vector<IbPoint<T>> points;
  std::vector<Crossing> crossings;  // in global order (Crossing::key)
  long long solid_points = 0;
};

// One surface crossing's contribution to its body's force (model.hpp crossing_force);
// plain data, so that MPI can gather it.
struct ForcePart {
  long long key;  // the crossing's global order (Crossing::key)
  int body, pad;
  double f[3];
};

// The forces on every body at time t: the parts summed per body in the global crossing
// order, so that any rank count gives the same bits. Under MPI (distributed) the parts of
// every rank are gathered on rank 0; the other ranks get false and no row.
bool sum_force_parts(std::vector<ForcePart> parts, bool distributed, std::size_t bodies, double t, ForceRow& row);

// Whether global node (gi, gj, gk) is solid; indices beyond a wall are outside the box
// (not solid), beyond a periodic face they wrap.
bool solid_node(const Params& p, const Bodies& b, long long gi, long long gj, long long gk);

template <class T>
IbTables<T> build_ib_tables(const Params& p, const Bodies& b, const Geometry& block);

// The sponge's relaxation rate per interior index of the block along each axis (zeros
// without a free stream); sigma at a point is the sum of the three.
std::array<std::vector<double>, 3> sponge_tables(const Params& p, const Geometry& block);

// The fringe's rate at coordinate x of the stream axis: Nordstrom et al.'s
// smooth step up over the fringe's first 40 % and down over its last 40 %.
double fringe_rate(const Params& p, double x);

// The default strength for a fringe of `length`: an acoustic wave crossing it against
// or with the stream is damped by e^-10 (the mean rate over the fringe is 0.6 of the peak).
double default_fringe_strength(const Params& p, double length);

}  // namespace numpipe::ns
