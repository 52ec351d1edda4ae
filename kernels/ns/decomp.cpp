// ns-step's Cartesian decomposition (decomp.hpp), shared by the CPU and CUDA backends.
#include "decomp.hpp"

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
    allow[a] = forced || p.n[a] >= 2 * 3;  // a block needs at least 3 points along a split axis
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

}  // namespace numpipe::ns
