// ns-step's fused ghost filling on the device (write_ghosts), shared by the sub-step
// kernels (cuda_substep.cuh) and the bodies' kernel (cuda_run.cuh, ib_kernel): a header
// of its own, so that the run's units need only the sub-step kernels' declarations
// (cuda_substep.hpp) and do not compile those kernels a second time.
#pragma once
#include "cuda_substep.hpp"
#include "model.hpp"

namespace numpipe::ns::substep {

// Fused ghost filling: the thread that writes the new value of interior point
// (i, j, k) also writes it (times the wall parity) into every face ghost of `f` whose
// source it is, the same rule as fill_ghost_point (a periodic ghost copies the wrapped
// interior point; a wall ghost -g mirrors +g). Every face ghost has exactly one source,
// so the next sub-step reads the ghosts fill_ghost_point would have written, the same
// bits, without a separate kernel re-reading the boundary planes. One process only
// (under MPI a wall block may be thinner than its ghost rule reaches: ghost_kernel).
template <class T>
__device__ __forceinline__ void write_ghosts(const Geometry& g, T* f, long long c, const int idx[3], int v, T val) {
  const long long str[3] = {g.si(), g.sj(), 1};
#pragma unroll
  for (int ax = 0; ax < 3; ++ax) {
    const int n = g.n[ax], x = idx[ax];
    if (x >= 3 && x < n - 3) continue;  // no ghost is sourced from here (walls: 1, 2, n-3, n-2; periodic: 0, 1, n-2, n-1)
    if (ax == 2 && g.flat_z()) continue;  // a 2-D problem has no z ghosts
    if (g.lo[ax] == Face::periodic_self) {
      // ghosts -2, -1, n, n+1 wrap onto ((gi mod n) + n) mod n (several of them when n < 4)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int gi = e < 2 ? e - 2 : n + e - 2;
        if (((gi % n) + n) % n == x) f[c + (long long)(gi - x) * str[ax]] = val;
      }
    } else {
      const T m = ghost_from_mirror(g.bc[ax], ax, v, val);
      if (g.lo[ax] == Face::wall && (x == 1 || x == 2)) f[c - 2LL * x * str[ax]] = m;
      if (g.hi[ax] == Face::wall && (x == n - 2 || x == n - 3)) f[c + 2LL * (n - 1 - x) * str[ax]] = m;
    }
  }
}

}  // namespace numpipe::ns::substep
