// react's decision on the device, once for both CUDA solvers (cuda.cu's fused
// solver, scene_cuda.cu's scene path): the block's maxima of the velocity's and the
// density's partials (cub::BlockReduce; a maximum is exact in any order), then
// thread 0 sets the flags and counts the injections. Included by .cu files only.
#pragma once
#include <cub/block/block_reduce.cuh>

#include "model.hpp"

namespace numpipe::fluid::react_cuda {

// react's comparison (the CPU's: s > m ? s : m).
struct MaxOf {
  template <class T>
  __device__ __forceinline__ T operator()(const T& m, const T& s) const {
    return s > m ? s : m;
  }
};

// The block's maxima of mv and md (THREADS threads), in thread 0.
template <class T, int THREADS>
__device__ __forceinline__ void block_max2(T& mv, T& md) {
  using Reduce = cub::BlockReduce<T, THREADS>;
  __shared__ typename Reduce::TempStorage sv, sd;
  mv = Reduce(sv).Reduce(mv, MaxOf{});
  md = Reduce(sd).Reduce(md, MaxOf{});
}

// Thread 0, with the maxima: flags [0] inject velocity, [1] inject density (react
// forcing only, below the thresholds); counters: steps, velocity and density injections.
template <class T>
__device__ __forceinline__ void decide(T max_velocity2, T max_density, int react, int* flags, long long* counters) {
  const int vel = react && max_velocity2 < T(kReactVelocityThreshold);
  const int den = react && max_density < T(kReactDensityThreshold);
  flags[0] = vel;
  flags[1] = den;
  counters[0] += 1;
  counters[1] += vel;
  counters[2] += den;
}

}  // namespace numpipe::fluid::react_cuda
