// ns-step's Cartesian decomposition (decomp.hpp), shared by the CPU and CUDA backends.
#include "decomp.hpp"

#include <cstring>

namespace numpipe::ns {
namespace {
std::array<int, 3> g_dims_used = {1, 1, 1};
}

std::array<int, 3> mpi_dims_used() { return g_dims_used; }

Geometry block_geometry(const Params& p, const par::Cart3& cart, const int coords[3]) {
  Geometry g = make_geometry(p);
  for (int a = 0; a < 3; ++a) {
    const par::Range r = par::split_evenly(static_cast<std::size_t>(p.n[a]), cart.dims[a], coords[a]);
    g.n[a] = static_cast<int>(r.size());
    g.offset[a] = static_cast<long long>(r.begin);
    if (cart.dims[a] > 1) {
      const bool periodic = p.bc[a] == Bc::periodic;
      g.lo[a] = periodic || coords[a] > 0 ? Face::halo : Face::wall;
      g.hi[a] = periodic || coords[a] < cart.dims[a] - 1 ? Face::halo : Face::wall;
    }
  }
  return g;
}

LineTerms gather_lines(const Params& p, const Decomposition& d, const LineTerms& mine) {
  par::Group& world = par::world();
  std::string bytes;
  for (const std::vector<double>* v : {&mine.sums, &mine.mdiv, &mine.msp})
    bytes.append(reinterpret_cast<const char*>(v->data()), v->size() * sizeof(double));
  std::vector<std::string> parts = world.gather(bytes);
  LineTerms all;
  if (!world.is_root()) return all;
  const std::size_t n1 = static_cast<std::size_t>(p.n[1]);
  all.resize(static_cast<std::size_t>(p.n[0]) * n1);
  for (int rank = 0; rank < world.size(); ++rank) {
    int c[3];
    d.cart->coords_of(rank, c);
    if (rank == 0) std::copy(d.cart->coords, d.cart->coords + 3, c);
    const Geometry gb = block_geometry(p, *d.cart, c);
    const std::size_t lines = static_cast<std::size_t>(gb.n[0]) * gb.n[1];
    const std::string& part = parts[static_cast<std::size_t>(rank)];
    if (part.size() != lines * (kDiagSums + 2) * sizeof(double))
      fail_internal("ns-step: rank " + std::to_string(rank) + " sent " + std::to_string(part.size()) + " bytes of line terms");
    const double* src = reinterpret_cast<const double*>(part.data());
    for (int i = 0; i < gb.n[0]; ++i)
      for (int j = 0; j < gb.n[1]; ++j) {
        const std::size_t l = static_cast<std::size_t>(i) * gb.n[1] + j;
        const std::size_t gl = static_cast<std::size_t>(gb.offset[0] + i) * n1 + static_cast<std::size_t>(gb.offset[1] + j);
        for (int k = 0; k < kDiagSums; ++k) all.sums[gl * kDiagSums + k] = src[l * kDiagSums + k];
        all.mdiv[gl] = src[lines * kDiagSums + l];
        all.msp[gl] = src[lines * (kDiagSums + 1) + l];
      }
  }
  return all;
}

Decomposition decompose(const Params& p, const RunOptions& o) {
  par::Group& world = par::world();
  const char* axis_name = "xyz";
  bool periodic[3], allow[3];
  const bool forced = o.dims[0] > 0 || o.dims[1] > 0 || o.dims[2] > 0;
  if (forced) {
    long long prod = 1;
    for (int a = 0; a < 3; ++a) prod *= o.dims[a];
    if (prod != world.size())
      fail_input("--dims " + std::to_string(o.dims[0]) + "," + std::to_string(o.dims[1]) + "," + std::to_string(o.dims[2]) +
                 " needs " + std::to_string(prod) + " ranks, running under " + std::to_string(world.size()));
  }
  for (int a = 0; a < 3; ++a) {
    periodic[a] = p.bc[a] == Bc::periodic;
    // a block needs at least 3 points along a split axis; z (the rows) is split only when
    // --dims asks, so that every (i, j) line lies in one block and the diagnostics need
    // no gather of the state (lines_whole)
    allow[a] = forced || (a < 2 && p.n[a] >= 2 * 3);
  }
  Decomposition d;
  d.cart = std::make_unique<par::Cart3>(o.dims, periodic, allow);
  const par::Cart3& cart = *d.cart;
  for (int a = 0; a < 3; ++a) {
    g_dims_used[static_cast<std::size_t>(a)] = cart.dims[a];
    if (cart.dims[a] > 1 && p.n[a] / cart.dims[a] < 3)
      fail_input(std::string("grid size n") + axis_name[a] + " = " + std::to_string(p.n[a]) + " is too small for " +
                 std::to_string(cart.dims[a]) + " ranks along " + axis_name[a] +
                 " (a block needs at least 3 points): use fewer ranks or --dims");
  }
  d.whole = make_geometry(p);
  d.block = block_geometry(p, cart, cart.coords);
  return d;
}

std::unique_ptr<Solver> make_run(const Problem& pr, const RunOptions& o, MakeRun in_float, MakeRun in_double) {
  validate(pr, o);
  std::unique_ptr<Decomposition> d;
  if (par::world().distributed()) d = std::make_unique<Decomposition>(decompose(pr.params, o));
  return (o.fp32 ? in_float : in_double)(pr, o, std::move(d));
}

}  // namespace numpipe::ns
