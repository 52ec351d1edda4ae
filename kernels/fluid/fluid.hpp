// fluid-step's interface: a state of six (n+2) x (n+2) fields and a solver that
// advances it step by step on one backend. The CPU solver is the reference; the
// CUDA solver keeps the state on the device for all steps of advance().
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/host_vector.hpp"
#include "model.hpp"

namespace numpipe::fluid {

// One field's values (common/host_vector.hpp: huge pages, filled on all threads).
template <class T>
using FieldVector = HostVector<T>;

template <class T>
struct Fields {
  int n = 0;
  FieldVector<T> d, u, v, d0, u0, v0;  // each (n+2)*(n+2), C order [y][x]

  explicit Fields(int n_ = 0) { resize(n_); }
  // Every value zero.
  void resize(int n_) {
    resize_uninitialised(n_);
    for (auto* f : {&d, &u, &v, &d0, &u0, &v0}) parallel_fill(f->data(), f->size(), T(0));
  }
  // For a state about to be overwritten whole (a conversion, a download): no pass over it.
  void resize_uninitialised(int n_) {
    n = n_;
    const std::size_t cells = static_cast<std::size_t>(n + 2) * static_cast<std::size_t>(n + 2);
    for (auto* f : {&d, &u, &v, &d0, &u0, &v0}) f->resize(cells);
  }
  std::size_t cells() const { return d.size(); }
};

// What react did over the steps run so far.
struct Counters {
  std::int64_t steps = 0;
  std::int64_t velocity_injections = 0;  // steps in which react injected velocity
  std::int64_t density_injections = 0;   // steps in which react injected density
};

template <class T>
class Solver {
 public:
  virtual ~Solver() = default;
  // Runs `steps` steps; returns the seconds they took (steady clock on the CPU,
  // CUDA events on the GPU).
  virtual double advance(int steps) = 0;
  // Copies the current state out.
  virtual void fetch(Fields<T>& out) = 0;
  virtual Counters counters() const = 0;
  // Which kernels ran (bench/fluid records it): the CUDA tile, the CPU's row kernels.
  virtual std::string kernels() const = 0;
};

// The OpenMP backend: the same bits for any thread count (omp_get_max_threads()).
template <class T>
std::unique_ptr<Solver<T>> make_cpu_solver(const Params& p, const Fields<T>& initial);

#ifdef NUMPIPE_FLUID_CUDA
template <class T>
std::unique_ptr<Solver<T>> make_cuda_solver(const Params& p, const Fields<T>& initial, int device);
// The tile of the temporally blocked passes (NUMPIPE_FLUID_TILE picks another, for
// the bench): its name, and the elements read + written per cell by one solve's
// passes (the tiles' halos included).
std::string cuda_tile_name(int element_size);
double cuda_solve_elements_per_cell(int iters, int element_size);
#endif
// Bytes a step moves through memory at the least, by the solver's own passes
// (for the profile and the bench's floor): see docs/fluid.md.
double bytes_per_cell_step(const Params& p, int element_size, bool cuda);

namespace testing {
// One half-sweep of a row of `count` cells by the CPU backend's kernel for the
// named instruction set ("generic", "avx2", "avx512"; one the machine lacks
// falls back to the next), for the unit tests; returns whether it took the
// reciprocal route (model.hpp's Divisor) rather than the division.
bool sweep_row_float(const char* isa, float* out, const float* L, const float* R, const float* D, const float* U,
                     const float* X0, int count, float a, float c);
// The window's aligned half-sweep (L = mid + par - 1, R = mid + par) over [lo, hi]
// (reads mid over [lo - 31, hi + 31], the others over [lo - 15, hi + 15]), the
// division by c as make_divisor says with the reciprocal route allowed or not;
// false where the machine has no such kernel.
bool sweep_window_float(float* out, const float* mid, int par, const float* D, const float* U, const float* X0, int lo,
                        int hi, float a, float c, bool reciprocal);
}  // namespace testing

// Diagnostics of a state, computed on the host in double in a fixed order.
struct Diagnostics {
  double total_density = 0;  // sum of d over the interior
  double max_speed = 0;      // max of |(u, v)| over the interior
  double max_divergence = 0; // max over the interior of |0.5*N*(u[x+1]-u[x-1] + v[y+1]-v[y-1])|
  bool finite = true;        // every value of d, u, v finite
};
template <class T>
Diagnostics diagnose(const Fields<T>& f);

}  // namespace numpipe::fluid
