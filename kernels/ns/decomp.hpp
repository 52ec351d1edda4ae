// ns-step under MPI: the 3-D Cartesian decomposition both backends use.
// Every rank holds the whole initial state (rank 0's broadcast) and cuts its block;
// blocks are split evenly per axis (sizes differ by at most one), faces between
// blocks are halo faces (two ghost layers exchanged before every RK sub-step, over
// the block's interior extent only: the stencils are axis-aligned and never read
// ghost edges or corners), and only the domain's outer faces keep the boundary rule.
#pragma once
#include <algorithm>
#include <array>
#include <memory>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/parallel.hpp"
#include "ns.hpp"

namespace numpipe::ns {

struct Decomposition {
  std::unique_ptr<par::Cart3> cart;
  Geometry whole;  // the global grid as one block
  Geometry block;  // this rank's block
};

// The process grid for `p` over the world's ranks (--dims, or MPI_Dims_create over
// the axes long enough to split): bad-input errors when --dims does not match the
// rank count or a block would hold fewer than 3 points along a split axis.
Decomposition decompose(const Params& p, const RunOptions& o);

// The block of the rank at grid coordinates `coords`.
Geometry block_geometry(const Params& p, const par::Cart3& cart, const int coords[3]);

// Index of block point (i, j, k) in the global C-order interior arrays.
inline std::size_t global_index(const Params& p, const Geometry& b, int i, int j, int k) {
  return (static_cast<std::size_t>(b.offset[0] + i) * static_cast<std::size_t>(p.n[1]) +
          static_cast<std::size_t>(b.offset[1] + j)) * static_cast<std::size_t>(p.n[2]) +
         static_cast<std::size_t>(b.offset[2] + k);
}

// The diagnostics' per-line terms: kDiagSums sums, max |div v| and max |v| per (i, j)
// line, lines i major.
struct LineTerms {
  std::vector<double> sums, mdiv, msp;
  void resize(std::size_t lines) {
    sums.assign(lines * kDiagSums, 0.0);
    mdiv.assign(lines, 0.0);
    msp.assign(lines, 0.0);
  }
};

// Whether every (i, j) line lies whole in one block (z is not split): then the
// diagnostics need only the ranks' line terms, not the state, on rank 0.
inline bool lines_whole(const Decomposition& d) { return d.cart->dims[2] == 1; }

// Rank 0: the whole grid's line terms in global line order from every rank's terms of
// its block's lines (lines_whole(d)); other ranks get empty arrays.
LineTerms gather_lines(const Params& p, const Decomposition& d, const LineTerms& mine);

// Rank 0: the whole grid's interior values (C order per variable) from every
// rank's block interior `mine` (C order of the block per variable, kVars arrays
// concatenated); other ranks get empty arrays.
template <class T>
std::array<std::vector<T>, kVars> gather_blocks(const Params& p, const Decomposition& d, const std::vector<T>& mine) {
  par::Group& world = par::world();
  const std::string bytes(reinterpret_cast<const char*>(mine.data()), mine.size() * sizeof(T));
  std::vector<std::string> parts = world.gather(bytes);
  std::array<std::vector<T>, kVars> all;
  if (!world.is_root()) return all;
  const std::size_t total = static_cast<std::size_t>(d.whole.points());
  for (auto& x : all) x.assign(total, T(0));
  for (int rank = 0; rank < world.size(); ++rank) {
    int c[3];
    d.cart->coords_of(rank, c);
    if (rank == 0) std::copy(d.cart->coords, d.cart->coords + 3, c);
    const Geometry gb = block_geometry(p, *d.cart, c);
    const std::string& part = parts[static_cast<std::size_t>(rank)];
    if (part.size() != static_cast<std::size_t>(gb.points()) * kVars * sizeof(T))
      fail_internal("ns-step: rank " + std::to_string(rank) + " sent a block of " + std::to_string(part.size()) + " bytes");
    const T* src = reinterpret_cast<const T*>(part.data());
    std::size_t s = 0;
    for (int v = 0; v < kVars; ++v)
      for (int i = 0; i < gb.n[0]; ++i)
        for (int j = 0; j < gb.n[1]; ++j)
          for (int k = 0; k < gb.n[2]; ++k) all[v][global_index(p, gb, i, j, k)] = src[s++];
  }
  return all;
}

// A backend's solver in one precision, made with this rank's block of the
// decomposition (null on one process), which it keeps.
using MakeRun = std::unique_ptr<Solver> (*)(const Problem&, const RunOptions&, std::unique_ptr<Decomposition>);
// The problem checked, this rank's block cut under MPI, then the backend's solver in
// the run's precision: the one choice of precision both backends share.
std::unique_ptr<Solver> make_run(const Problem& pr, const RunOptions& o, MakeRun in_float, MakeRun in_double);

}  // namespace numpipe::ns
