// Which of scene_model.hpp's formulas a cell of a scene takes, by its obstacle
// code, on the GPU: once for the scene path's kernels (scene_cuda.cu) and the
// temporally blocked scene solver's (cuda.cu), in scene_cpu.cpp's order, so that
// both give the CPU's bits. Included by .cu files only.
#pragma once
#include <cstdint>

#include "scene.hpp"

namespace numpipe::fluid::scene_cells {

// project's divergence at interior cell c (code cd; 0 where no obstacle is near).
template <class T>
__device__ __forceinline__ T divergence(const T* u, const T* v, std::int64_t c, std::int64_t w, int cd, T inv_h) {
  if (cd == 0) return divergence_h(u[c - 1], u[c + 1], v[c - w], v[c + w], inv_h);
  if (cd & kSolidSelf) return T(0);
  return divergence_solid(u[c], v[c], u[c - 1], u[c + 1], v[c - w], v[c + w], cd, inv_h);
}

// project's gradient step at interior cell c: a solid neighbour's pressure is the
// cell's own (zero normal gradient); solid cells hold zero velocity.
template <class T>
__device__ __forceinline__ void gradient(T* u, T* v, const T* pr, std::int64_t c, std::int64_t w, int cd, T inv_h) {
  if (cd == 0) {
    u[c] = gradient_sub_h(u[c], pr[c - 1], pr[c + 1], inv_h);
    v[c] = gradient_sub_h(v[c], pr[c - w], pr[c + w], inv_h);
  } else if (cd & kSolidSelf) {
    u[c] = T(0);
    v[c] = T(0);
  } else {
    const T pc = pr[c];
    u[c] = gradient_sub_h(u[c], cd & kSolidL ? pc : pr[c - 1], cd & kSolidR ? pc : pr[c + 1], inv_h);
    v[c] = gradient_sub_h(v[c], cd & kSolidD ? pc : pr[c - w], cd & kSolidU ? pc : pr[c + w], inv_h);
  }
}

// A solid cell beside fluid during a scalar's advection: scene.hpp's border_mean.
using fluid::border_mean;

// |vorticity| at interior cell c for the confinement's gradient (0 in solid cells).
template <class T>
__device__ __forceinline__ T vorticity_abs(const T* u, const T* v, std::int64_t c, std::int64_t w, int cd, T inv_h) {
  return cd & kSolidSelf ? T(0) : std::fabs(vorticity_cell(u[c - w], u[c + w], v[c - 1], v[c + 1], inv_h));
}

// The forces at interior cell c from the state at the start of the step: the
// confinement (vort; a solid neighbour's |w| is the cell's own), then buoyancy
// added to f_y (buoy; T the ambient one without a temperature field); 0 in solid cells.
template <class T>
__device__ __forceinline__ void forces(const T* u, const T* v, const T* wa, const T* d, const T* temp, T* fu, T* fv,
                                       std::int64_t c, std::int64_t w, int cd, bool vort, bool buoy, T inv_h, T eps_h,
                                       T ba, T bb, T ambient) {
  if (cd & kSolidSelf) {
    fu[c] = T(0);
    fv[c] = T(0);
    return;
  }
  if (vort) {
    const T wc = wa[c];
    T x, y;
    confinement_force(vorticity_cell(u[c - w], u[c + w], v[c - 1], v[c + 1], inv_h), cd & kSolidL ? wc : wa[c - 1],
                      cd & kSolidR ? wc : wa[c + 1], cd & kSolidD ? wc : wa[c - w], cd & kSolidU ? wc : wa[c + w],
                      inv_h, eps_h, x, y);
    fu[c] = x;
    fv[c] = y;
  }
  if (buoy) {
    const T fb = buoyancy_force(d[c], temp ? temp[c] : ambient, ba, bb, ambient);
    fv[c] = vort ? fv[c] + fb : fb;
  }
}

}  // namespace numpipe::fluid::scene_cells
