// ns-step's CUDA sub-step kernels (cuda_run.cuh's header says how they work): what the
// run (cuda_run.cuh) and the kernels (cuda_substep.cuh, instantiated per precision and
// kernel variant in cuda_substep_*.cu, so that the units compile in parallel) share.
#pragma once
#include <cuda_runtime.h>

#include "model.hpp"

namespace numpipe::ns::substep {

template <class T>
struct Ptrs {
  T* v[kVars];
};

constexpr int kTK = 32;  // tile columns along k (coalesced); rows along j are a template parameter
constexpr int kMaxVariant = 8;
constexpr int kFlatVariant = 8;  // one thread per point, stencils through the caches (2-D problems)

// What a sub-step reads beyond the fields: the sponge's rates per index of each axis
// (used when Coefs::sponge) and the immersed-boundary tables (bodies.hpp; row_start
// null without bodies).
template <class T>
struct DevTables {
  const T* sigma[3];
  const int* row_start;
  const IbEntry* entries;
  const IbPoint<T>* points;
  T* qsite;  // Q of the IB points (ib_kernel's own: the sub-step kernels overwrite theirs)
};

// One sub-step (stage 0-2 of the RK scheme, ORDER 2 or 4) over a box of the block:
// Phi read from `in` (with ghosts) and Q from `q`, the new Phi written to `out` (with
// `fuse` its ghost copies too), Q to `q`; queued on `stream`.
template <class T>
struct SubstepCall {
  Geometry g;
  Box box;
  Coefs<T> cf;
  int order, stage;
  T dt;
  const T* kol;
  Ptrs<T> in, out, q;
  int chunk;  // x-planes per block
  bool fuse;
  DevTables<T> tb;
  cudaStream_t stream;
};

// The tiled kernels of one variant (TJ rows of 32 columns, MINB blocks per SM, LDG,
// QASYNC, RING planes ahead: cuda_substep.cuh), and the flat one (variant 8).
template <class T, int TJ, int MINB, bool LDG, bool QASYNC, int RING>
void launch_substep(const SubstepCall<T>& c);
template <class T>
void launch_substep_flat(const SubstepCall<T>& c);

// A solid node or IB point of the block, for ib_kernel.
struct IbSite {
  int i, j, k;
  int point;  // the IB point's index, or -1 for a solid node
};

// The bodies' part of a sub-step, after the sub-step kernels (ib_kernel, cuda_bodies.cuh):
// the `count` solid nodes and IB points `sites` of the call's block (its box is not used),
// queued on c.stream; compiled per precision in cuda_bodies_f32.cu and cuda_bodies_f64.cu.
template <class T>
void launch_ib_step(const SubstepCall<T>& c, const IbSite* sites, long long count);

}  // namespace numpipe::ns::substep
