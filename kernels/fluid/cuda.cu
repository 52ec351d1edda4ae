// The CUDA backend of fluid-step (spec/fluid.md). The state stays on the device
// for all steps; one step is captured once as a CUDA Graph and replayed.
//
// Per step: react's decision by a one-block kernel from the maxima that the
// previous step's passes left (per block, reduced in a fixed order; CUB over
// the initial state before the first step); react's sources are never stored:
// each solve's first pass generates its initial guess (zero but at react's
// injection points) and forms add_source's x + dt*s as it reads x0, so
// neither the zeroing, the injection nor add_source costs a pass. Each
// lin_solve is passes of up to K red-black iterations per pass over memory
// (temporal blocking), the last pass of the density's diffusion and of the
// last projection also leave react's maxima per block. project's divergence
// is one kernel with its set_bnd; advection of all fields by one velocity is
// one kernel.
//
// Temporal blocking: a block loads an extended tile (output tile plus a halo of
// 2 cells per fused iteration), runs k iterations there, applying set_bnd's
// edges after each, and writes the output tile to the other buffer of a
// ping-pong pair. Cells at distance >= 2k from the extended tile's border are
// exact: each half-sweep can spoil only one more ring. Two kernels do it:
//  - rb_reg (fp32, the default): a warp spans the tile's 128 columns, 4 per
//    lane, and each thread keeps RPT whole rows of its 4 columns in registers,
//    so a cell's neighbours are its own registers but for one shuffle per row
//    (the lane on the left or right) and, at the thread's first and last row,
//    the rows that the threads above and below publish in shared memory after
//    each half-sweep; x0 lives in shared memory.
//  - rb_pass (fp64, and fp32 for comparison): x's red and black planes in
//    shared memory (unit-stride, conflict-free half-sweeps), x0 in registers.
// Red-black Gauss-Seidel does not depend on the order within a colour, so
// both compute the bits of the CPU backend (both backends are built without
// FMA contraction: --fmad=false here; the division by c is the IEEE division,
// or the exact multiplication when c is a power of two).
//
// Scenes (SceneTiledSolver: a square box with closed sides; scene_cpu.cpp's step,
// the same bits): the solves run the same passes. Tiles whose extended tile holds
// an obstacle's cells or cells beside them, and the edge tiles, go to a scene
// kernel (rb_reg_scene; rb_pass<SCENE> runs every tile), whose solid cells stay 0
// and whose cells beside them take gs_cell_solid; the inner kernel leaves those
// tiles to it. An emitter is added to x0 as the passes read it (read only in the
// tiles where it has values; elsewhere + dt*0, the same bits). Forces, the
// temperature and the obstacle's divergence, gradient and advection are kernels
// of their own between the solves.
#include <cuda_runtime.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <cub/device/device_reduce.cuh>

#include "common/cuda_check.hpp"
#include "common/cuda_graph.hpp"
#include "common/device_array.hpp"
#include "common/staging.hpp"
#include "cuda_pass.hpp"
#include "fluid.hpp"
#include "scene.hpp"
#include "react.cuh"
#include "tuning.hpp"
#include "scene_cells.cuh"

namespace numpipe::fluid {
namespace {

using namespace pass;  // the passes' arguments and kernels (cuda_pass.hpp)

// lin_solve's last set_bnd corners, from the edges the passes left.
template <class T>
__global__ void corners_kernel(T* x, int n) {
  const int w = n + 2;
  if (threadIdx.x == 0) {
    x[ix(0, 0, w)] = corner(x[ix(1, 0, w)], x[ix(0, 1, w)]);
    x[ix(n + 1, 0, w)] = corner(x[ix(n, 0, w)], x[ix(n + 1, 1, w)]);
    x[ix(0, n + 1, w)] = corner(x[ix(1, n + 1, w)], x[ix(0, n, w)]);
    x[ix(n + 1, n + 1, w)] = corner(x[ix(n, n + 1, w)], x[ix(n + 1, n, w)]);
  }
}

// set_bnd(b, x): edges from the interior, corners from the same values
// (recomputed, so that no thread reads what another writes).
template <class T>
__global__ void set_bnd_kernel(T* x, int n, int b) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int w = n + 2;
  auto sgn = [](bool neg, T v) { return neg ? -v : v; };
  if (i >= 1 && i <= n) {
    x[ix(0, i, w)] = sgn(b == kU, x[ix(1, i, w)]);
    x[ix(n + 1, i, w)] = sgn(b == kU, x[ix(n, i, w)]);
    x[ix(i, 0, w)] = sgn(b == kV, x[ix(i, 1, w)]);
    x[ix(i, n + 1, w)] = sgn(b == kV, x[ix(i, n, w)]);
  } else if (i == 0) {
    x[ix(0, 0, w)] = corner(sgn(b == kV, x[ix(1, 1, w)]), sgn(b == kU, x[ix(1, 1, w)]));
    x[ix(n + 1, 0, w)] = corner(sgn(b == kV, x[ix(n, 1, w)]), sgn(b == kU, x[ix(n, 1, w)]));
    x[ix(0, n + 1, w)] = corner(sgn(b == kV, x[ix(1, n, w)]), sgn(b == kU, x[ix(1, n, w)]));
    x[ix(n + 1, n + 1, w)] = corner(sgn(b == kV, x[ix(n, n, w)]), sgn(b == kU, x[ix(n, n, w)]));
  }
}

// add_source on the boundary layer of x, where react's source is zero (x + dt*0:
// a -0 becomes +0); the seed's step keeps d's boundary layer.
template <class T>
__global__ void add_zero_boundary(T* x, int n, T dt) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int w = n + 2, e = n + 1;
  const T zero = dt * T(0);
  if (i <= e) {
    x[ix(i, 0, w)] = x[ix(i, 0, w)] + zero;
    x[ix(i, e, w)] = x[ix(i, e, w)] + zero;
  }
  if (i >= 1 && i < e) {
    x[ix(0, i, w)] = x[ix(0, i, w)] + zero;
    x[ix(e, i, w)] = x[ix(e, i, w)] + zero;
  }
}

template <class T>
struct SpeedSq {
  const T* u;
  const T* v;
  __host__ __device__ T operator()(long long i) const { return u[i] * u[i] + v[i] * v[i]; }
};
template <class T>
struct MaxOp {
  __host__ __device__ T operator()(T x, T y) const { return max_of(x, y); }
};

// react's decision, on the device: the maxima of the per-block partials and the
// corners (which the passes leave to corners_kernel), then flags[0] velocity,
// flags[1] density (react.cuh). One block of kReactThreads.
constexpr int kReactThreads = 256;
template <class T>
__global__ void react_decide(const T* pv, const T* pd, int parts, const T* d0, const T* u0, const T* v0, int n,
                             int* flags, long long* counters, int forcing_react) {
  const int t = static_cast<int>(threadIdx.x);
  T mv = -INFINITY, md = -INFINITY;
  for (int i = t; i < parts; i += kReactThreads) {
    mv = max_of(mv, pv[i]);
    md = max_of(md, pd[i]);
  }
  if (t < 4) {
    const int e = n + 1, w = n + 2;
    const std::int64_t c = ix(t & 1 ? e : 0, t & 2 ? e : 0, w);
    mv = max_of(mv, u0[c] * u0[c] + v0[c] * v0[c]);
    md = max_of(md, d0[c]);
  }
  react_cuda::block_max2<T, kReactThreads>(mv, md);
  if (t == 0) react_cuda::decide(mv, md, forcing_react, flags, counters);
}

// project, first half: div inside and its set_bnd(0) copies (the pressure's zero
// initial guess is generated by the solve).
template <class T>
__global__ void project_begin(const T* u, const T* v, T* div, int n) {
  const int x = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int y = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
  if (x > n + 1 || y > n + 1) return;
  const int w = n + 2;
  auto dv = [&](int i, int j) {
    return divergence_cell(u[ix(i - 1, j, w)], u[ix(i + 1, j, w)], v[ix(i, j - 1, w)], v[ix(i, j + 1, w)], n);
  };
  const bool ex = x == 0 || x == n + 1, ey = y == 0 || y == n + 1;
  const int xi = x == 0 ? 1 : (x == n + 1 ? n : x), yi = y == 0 ? 1 : (y == n + 1 ? n : y);
  T val;
  if (ex && ey) {
    const T e = dv(xi, yi);  // both edge neighbours of a corner copy this interior cell
    val = corner(e, e);
  } else {
    val = dv(xi, yi);
  }
  div[ix(x, y, w)] = val;
}

// project, second half: subtract the pressure gradient inside.
template <class T>
__global__ void project_end(T* u, T* v, const T* p, int n) {
  const int x = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x) + 1;
  const int y = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y) + 1;
  if (x > n || y > n) return;
  const int w = n + 2;
  const std::int64_t i = ix(x, y, w);
  u[i] = gradient_sub(u[i], p[ix(x - 1, y, w)], p[ix(x + 1, y, w)], n);
  v[i] = gradient_sub(v[i], p[ix(x, y - 1, w)], p[ix(x, y + 1, w)], n);
}

// Advects up to three fields by one velocity (U, V), inside.
template <class T>
__global__ void advect_kernel(const T* U, const T* V, T* o1, const T* q1, T* o2, const T* q2, T* o3, const T* q3,
                              int n, T dt0) {
  const int x = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x) + 1;
  const int y = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y) + 1;
  if (x > n || y > n) return;
  const int w = n + 2;
  const std::int64_t i = ix(x, y, w);
  const AdvectWeights<T> q = advect_weights(w, n, x, y, U[i], V[i], dt0);
  o1[i] = advect_apply(q1, q);
  if (o2) o2[i] = advect_apply(q2, q);
  if (o3) o3[i] = advect_apply(q3, q);
}

// ---- a scene's operations between the solves (scene_cpu.cpp's, closed sides) ----------------
// project, first half: div inside by the cells' codes and its set_bnd(0) copies
// (the corners the mean of two copies of one interior value, as project_begin).
template <class T>
__global__ void scene_project_begin(const T* u, const T* v, T* div, const std::uint8_t* code, int n, T inv_h) {
  const int x = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int y = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
  if (x > n + 1 || y > n + 1) return;
  const int w = n + 2;
  const int xi = x == 0 ? 1 : (x == n + 1 ? n : x), yi = y == 0 ? 1 : (y == n + 1 ? n : y);
  const std::int64_t c = ix(xi, yi, w);
  const T e = scene_cells::divergence(u, v, c, static_cast<std::int64_t>(w), code ? code[c] : 0, inv_h);
  const bool ex = x == 0 || x == n + 1, ey = y == 0 || y == n + 1;
  div[ix(x, y, w)] = ex && ey ? corner(e, e) : e;
}

// project, second half: the pressure gradient inside by the cells' codes.
template <class T>
__global__ void scene_project_end(T* u, T* v, const T* p, const std::uint8_t* code, int n, T inv_h) {
  const int x = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x) + 1;
  const int y = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y) + 1;
  if (x > n || y > n) return;
  const int w = n + 2;
  const std::int64_t c = ix(x, y, w);
  scene_cells::gradient(u, v, p, c, static_cast<std::int64_t>(w), code ? code[c] : 0, inv_h);
}

// Advects one or two fields by (U, V) inside; solid cells get 0.
template <class T>
__global__ void scene_advect_kernel(const T* U, const T* V, T* o1, const T* q1, T* o2, const T* q2,
                                    const std::uint8_t* code, int n, T dt0) {
  const int x = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x) + 1;
  const int y = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y) + 1;
  if (x > n || y > n) return;
  const int w = n + 2;
  const std::int64_t c = ix(x, y, w);
  if (code && (code[c] & kSolidSelf)) {
    o1[c] = T(0);
    if (o2) o2[c] = T(0);
    return;
  }
  const Trace<T> tx = back_trace(x, U[c], dt0, n, false);
  const Trace<T> ty = back_trace(y, V[c], dt0, n, false);
  o1[c] = interpolate(q1, w, tx, ty);
  if (o2) o2[c] = interpolate(q2, w, tx, ty);
}

// The forces from the state at the start of the step (scene_cells.cuh): |w| first
// (vorticity confinement), then fu, fv.
template <class T>
__global__ void scene_vorticity_kernel(const T* u, const T* v, T* wa, const std::uint8_t* code, int n, T inv_h) {
  const int x = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x) + 1;
  const int y = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y) + 1;
  if (x > n || y > n) return;
  const std::int64_t w = n + 2, c = ix(x, y, n + 2);
  wa[c] = scene_cells::vorticity_abs(u, v, c, w, code ? code[c] : 0, inv_h);
}
template <class T>
__global__ void scene_forces_kernel(const T* u, const T* v, const T* wa, const T* d, const T* temp, T* fu, T* fv,
                                    const std::uint8_t* code, int n, T inv_h, T eps_h, int vort, int buoy, T ba, T bb,
                                    T ambient) {
  const int x = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x) + 1;
  const int y = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y) + 1;
  if (x > n || y > n) return;
  const std::int64_t w = n + 2, c = ix(x, y, n + 2);
  scene_cells::forces(u, v, wa, d, temp, fu, fv, c, w, code ? code[c] : 0, vort != 0, buoy != 0, inv_h, eps_h, ba, bb,
                      ambient);
}
// A velocity component's x0 where forces act (the solve then adds nothing): react's
// add_source over every cell, then inside + dt*emitter and + dt*force (scene_cpu.cpp).
template <class T>
__global__ void scene_add_velocity(T* x, int field, const T* emit, const T* f, const int* flags, int n, T dt, T force,
                                   T source) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int j = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
  if (i > n + 1 || j > n + 1) return;
  const std::int64_t c = ix(i, j, n + 2);
  T value = x[c] + dt * react_source(field, i, j, n, flags[0] != 0, flags[1] != 0, force, source);
  if (i >= 1 && i <= n && j >= 1 && j <= n) {
    if (emit) value = value + dt * emit[c];
    if (f) value = value + dt * f[c];
  }
  x[c] = value;
}

// A scalar's solid cells beside fluid: the mean of their fluid neighbours for the
// advection (fill), 0 again after it (clear).
template <class T>
__global__ void scene_border_kernel(T* q, const ObstacleLists::Border* border, int count, int fill) {
  const int k = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (k >= count) return;
  const ObstacleLists::Border b = border[k];
  q[b.c] = fill ? scene_cells::border_mean(q, b) : T(0);
}

// The tiles (tile_config): name, kernel kind, K iterations per pass, RPT rows
// per thread, WY threads in y (rb_reg) / the extended tile's height (rb_pass: 8*RPT).
struct TileSpec {
  const char* name;
  bool reg;
  int k, rpt, wy;
};
constexpr TileSpec kTiles[] = {
    {"r7x8", true, 7, 8, 16},   {"r10x8", true, 10, 8, 16}, {"r7x8a", true, 7, 8, 16}, {"r5x8", true, 5, 8, 16},
    {"r7x16", true, 7, 16, 8},  {"r10x16", true, 10, 16, 8}, {"r7x4", true, 7, 4, 32},  {"s5x10", false, 5, 10, 8},
    {"s10x16", false, 10, 16, 8},
};
constexpr int kDefaultTileF32 = 0;  // r7x8: the fastest at N=4096 on an H100 (bench/results.md)
constexpr TileSpec kTileF64 = {"s5x6", false, 5, 6, 8};

TileSpec tile_spec(int element_size) {
  if (element_size == 8) return kTileF64;
  if (const std::string e = tuning_from_environment().cuda_tile; !e.empty()) {
    std::string names;
    for (const TileSpec& t : kTiles) {
      if (e == t.name) return t;
      names += std::string(" ") + t.name;
    }
    fail_input("NUMPIPE_FLUID_TILE: unknown tile '" + e + "' (known:" + names + ")");
  }
  return kTiles[kDefaultTileF32];
}

template <class T>
class CudaSolver final : public Solver<T> {
 public:
  // state: d, u, v, d0, u0, v0, each `cells` values; scene: the step is a scene's
  // (scene_cpu.cpp's stam step on a square box with closed sides), or null.
  CudaSolver(const Params& p, const T* const state[6], std::size_t cells, int device,
             const FusedScene<T>* scene = nullptr)
      : p_(p), n_(p.n) {
    NUMPIPE_CUDA_CHECK(cudaSetDevice(device));
    NUMPIPE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    NUMPIPE_CUDA_CHECK(cudaStreamCreateWithFlags(&side_, cudaStreamNonBlocking));
    NUMPIPE_CUDA_CHECK(cudaEventCreateWithFlags(&fork_, cudaEventDisableTiming));
    NUMPIPE_CUDA_CHECK(cudaEventCreateWithFlags(&join_, cudaEventDisableTiming));
    cells_ = cells;
    for (int k = 0; k < 6; ++k) {
      buf_[k] = DeviceArray<T>(cells_);
      copy_to_device(buf_[k].data(), state[k], cells_ * sizeof(T), stream_);  // pinned staging (common/staging.hpp)
    }
    flags_ = DeviceArray<int>(2);
    counters_ = DeviceArray<long long>(3);
    NUMPIPE_CUDA_CHECK(cudaMemsetAsync(counters_.data(), 0, 3 * sizeof(long long), stream_));
    NUMPIPE_CUDA_CHECK(cudaMemsetAsync(flags_.data(), 0, 2 * sizeof(int), stream_));
    select_tile();
    if (scene) set_scene(*scene);
    const int passes = (p_.iters + tile_.k - 1) / tile_.k;
    if (passes > 1) scratch_ = DeviceArray<T>(cells_);
    // react's maxima of the initial sources, as the first partials (the rest -inf)
    parts_ = tiles_x_ * tiles_y_;
    partial_v_ = DeviceArray<T>(static_cast<std::size_t>(parts_));
    partial_d_ = DeviceArray<T>(static_cast<std::size_t>(parts_));
    std::vector<T> lowest(static_cast<std::size_t>(parts_), -std::numeric_limits<T>::infinity());
    partial_v_.copy_from_host(lowest.data(), lowest.size(), stream_);
    partial_d_.copy_from_host(lowest.data(), lowest.size(), stream_);
    SpeedSq<T> sq{buf_[4].data(), buf_[5].data()};
    auto it = thrust::make_transform_iterator(thrust::counting_iterator<long long>(0), sq);
    std::size_t b1 = 0, b2 = 0;
    NUMPIPE_CUDA_CHECK(cub::DeviceReduce::Reduce(nullptr, b1, it, partial_v_.data(), static_cast<long long>(cells_),
                                                 MaxOp<T>{}, T(-INFINITY), stream_));
    NUMPIPE_CUDA_CHECK(cub::DeviceReduce::Reduce(nullptr, b2, buf_[3].data(), partial_d_.data(),
                                                 static_cast<long long>(cells_), MaxOp<T>{}, T(-INFINITY), stream_));
    DeviceArray<unsigned char> temp(std::max<std::size_t>(std::max(b1, b2), 1));
    std::size_t bytes = b1;
    NUMPIPE_CUDA_CHECK(cub::DeviceReduce::Reduce(temp.data(), bytes, it, partial_v_.data(),
                                                 static_cast<long long>(cells_), MaxOp<T>{}, T(-INFINITY), stream_));
    bytes = b2;
    NUMPIPE_CUDA_CHECK(cub::DeviceReduce::Reduce(temp.data(), bytes, buf_[3].data(), partial_d_.data(),
                                                 static_cast<long long>(cells_), MaxOp<T>{}, T(-INFINITY), stream_));
    NUMPIPE_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  ~CudaSolver() override {
    if (fork_) cudaEventDestroy(fork_);
    if (join_) cudaEventDestroy(join_);
    if (side_) cudaStreamDestroy(side_);
    if (stream_) cudaStreamDestroy(stream_);
  }

  double advance(int steps) override {
    return steps_.run(stream_, steps, [this](cudaStream_t) { enqueue_step(); });
  }

  void fetch(Fields<T>& out) override {
    if (out.n != n_ || out.cells() != cells_) out.resize_uninitialised(n_);  // every value is overwritten below
    T* const dst[6] = {out.d.data(), out.u.data(), out.v.data(), out.d0.data(), out.u0.data(), out.v0.data()};
    fetch(dst);
  }
  // A scene's temperature into t (empty without one), queued before fetch(dst), which waits for it.
  void fetch_temperature(FieldVector<T>& t) {
    if (!temperature()) {
      t.clear();
      return;
    }
    t.resize(cells_);
    copy_to_host(t.data(), t_.data(), cells_ * sizeof(T), stream_);  // pinned staging
  }
  // A scene's d, u, v, d0, u0, v0 into arrays of cells() values each, and its temperature.
  void fetch_scene(T* const dst[6], FieldVector<T>& t) {
    fetch_temperature(t);
    fetch(dst);
  }
  // d, u, v, d0, u0, v0 into arrays of cells() values each.
  void fetch(T* const dst[6]) {
    for (int k = 0; k < 6; ++k) copy_to_host(dst[k], buf_[k].data(), cells_ * sizeof(T), stream_);  // pinned staging
    NUMPIPE_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  std::string kernels() const override {
    if (!scene_) return std::string("tile ") + tile_.name;
    return std::string("scene path, tile ") + tile_.name + " (" + (sizeof(T) == 4 ? "fp32" : "fp64") + "), " +
           std::to_string(obstacle_tiles_) + " of " + std::to_string(tiles_x_ * tiles_y_) + " tiles near obstacles, " +
           std::to_string(fix_count_) + " cells beside obstacles";
  }

  Counters counters() const override {
    long long c[3] = {0, 0, 0};
    NUMPIPE_CUDA_CHECK(cudaMemcpyAsync(c, counters_.data(), sizeof(c), cudaMemcpyDeviceToHost, stream_));
    NUMPIPE_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return Counters{c[0], c[1], c[2]};
  }

 private:
  Params p_;
  int n_;
  std::size_t cells_ = 0;
  cudaStream_t stream_ = nullptr;
  cudaStream_t side_ = nullptr;  // the edge tiles' kernel runs beside the inner tiles'
  cudaEvent_t fork_ = nullptr, join_ = nullptr;
  DeviceArray<T> buf_[6];  // d, u, v, d0, u0, v0: fixed roles (the graph captures pointers)
  DeviceArray<T> scratch_;
  DeviceArray<T> partial_v_, partial_d_;  // react's maxima per block of the last passes
  DeviceArray<int> flags_;
  DeviceArray<long long> counters_;
  int parts_ = 0;
  StepReplay steps_{tuning_from_environment().cuda_graph};  // a step: one graph launch
  PassKernel<T> pass_ = nullptr;            // rb_pass: one kernel over all tiles
  ScenePassKernel<T> scene_pass_ = nullptr; // rb_pass: a scene's
  RegKernel inner_[2] = {}, edge_[2] = {};  // rb_reg: inner and edge tiles, [1]: c a power of two
  SceneRegKernel scene_inner_[2] = {};      // rb_reg: a scene's inner tiles
  SceneRegKernel scene_reg_ = nullptr;      // rb_reg: a scene's edge tiles and those near its obstacle
  TileSpec tile_{};
  dim3 block_;
  int tiles_x_ = 0, tiles_y_ = 0, edge_tiles_ = 0;
  int ext_w_ = 0, ext_h_ = 0, halo_ = 0;  // the extended tile and its halo
  TileMap map_{};
  dim3 inner_grid_;
  std::size_t smem_bytes_ = 0, scene_smem_bytes_ = 0;
  // A scene (set_scene): its cell codes, the solid cells beside fluid, the emitters
  // of d, u, v, the tile flags (kTile*) and the scene kernel's tiles.
  bool scene_ = false, vort_ = false, buoy_ = false;
  T inv_h_ = T(0);
  SceneForces forces_;
  DeviceArray<std::uint8_t> code_, tile_flags_;
  DeviceArray<ObstacleLists::Border> border_;
  DeviceArray<T> emit_[4];
  DeviceArray<T> t_, t0_, fu_, fv_, wabs_;  // temperature and its work buffer; the forces
  DeviceArray<int> scene_tiles_;
  int border_count_ = 0, fix_count_ = 0, scene_tile_count_ = 0, obstacle_tiles_ = 0;

  // The tiles of an extended tile of ew x eh cells with halo h: edge tiles are
  // those reaching x or y <= 0 or >= n+1 (a first and some last rows and columns).
  void map_tiles(int ew, int eh, int h) {
    const int tx = ew - 2 * h, ty = eh - 2 * h, n = n_;
    ext_w_ = ew;
    ext_h_ = eh;
    halo_ = h;
    tiles_x_ = (n + 2 + tx - 1) / tx;
    tiles_y_ = (n + 2 + ty - 1) / ty;
    map_ = TileMap{};
    map_.tiles_x = tiles_x_;
    auto edges = [&](int tiles, int t, int e, int* list, int& count, int& lo, int& hi) {
      lo = tiles;
      hi = -1;
      count = 0;
      for (int b = 0; b < tiles; ++b) {
        const int g0 = b * t - h;
        if (g0 <= 0 || g0 + e - 1 >= n + 1) {
          if (count == 8) fail_internal("fluid-step: more than 8 edge tile rows or columns");
          list[count++] = b;
        } else {
          lo = std::min(lo, b);
          hi = std::max(hi, b);
        }
      }
    };
    int bx_lo, bx_hi, by_lo, by_hi;
    edges(tiles_x_, tx, ew, map_.ex, map_.nex, bx_lo, bx_hi);
    edges(tiles_y_, ty, eh, map_.ey, map_.ney, by_lo, by_hi);
    // the inner tiles are one rectangle: edge columns and rows are a prefix and a suffix
    if (bx_hi >= bx_lo && bx_hi - bx_lo + 1 + map_.nex != tiles_x_) fail_internal("fluid-step: edge tile columns not at the ends");
    if (by_hi >= by_lo && by_hi - by_lo + 1 + map_.ney != tiles_y_) fail_internal("fluid-step: edge tile rows not at the ends");
    const bool inner = bx_hi >= bx_lo && by_hi >= by_lo;
    map_.bx_lo = bx_hi >= bx_lo ? bx_lo : 0;
    map_.by_lo = by_hi >= by_lo ? by_lo : 0;
    inner_grid_ = inner ? dim3(static_cast<unsigned>(bx_hi - bx_lo + 1), static_cast<unsigned>(by_hi - by_lo + 1))
                        : dim3(0, 0);
    edge_tiles_ = map_.ney * tiles_x_ + map_.nex * (tiles_y_ - map_.ney);
    if (!inner && edge_tiles_ != tiles_x_ * tiles_y_) fail_internal("fluid-step: tile map does not cover the grid");
  }

  template <int K, int RPT, int WY, int MINB>
  void use_reg() {
    if constexpr (sizeof(T) == 4) {
      const RegKernels k = reg_kernels<K, RPT, WY, MINB>();  // cuda_pass_*.cu
      for (int mul = 0; mul < 2; ++mul) {
        inner_[mul] = k.inner[mul];
        edge_[mul] = k.edge[mul];
        scene_inner_[mul] = k.scene_inner[mul];
      }
      scene_reg_ = k.scene;
      smem_bytes_ = k.smem_bytes;
      scene_smem_bytes_ = k.scene_smem_bytes;
      block_ = dim3(32, WY);
      map_tiles(kRegW, RPT * WY, 2 * K);
      for (RegKernel f : {inner_[0], inner_[1], edge_[0], edge_[1]})
        NUMPIPE_CUDA_CHECK(cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                static_cast<int>(smem_bytes_)));
      for (SceneRegKernel f : {scene_inner_[0], scene_inner_[1], scene_reg_})
        NUMPIPE_CUDA_CHECK(cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                static_cast<int>(f == scene_reg_ ? scene_smem_bytes_ : smem_bytes_)));
    }
  }
  template <int K, int RPT>
  void use_smem() {
    constexpr int EH = kThreadsY * RPT, H = 2 * K;
    const SmemKernels<T> k = smem_kernels<T, K, RPT>();  // cuda_pass_*.cu
    pass_ = k.plain;
    scene_pass_ = k.scene;
    smem_bytes_ = (2 * EH * kPairs + 16) * sizeof(T);
    block_ = dim3(kPairs, kThreadsY);
    map_tiles(kExtW, EH, H);
    NUMPIPE_CUDA_CHECK(cudaFuncSetAttribute(pass_, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(smem_bytes_)));
    NUMPIPE_CUDA_CHECK(cudaFuncSetAttribute(scene_pass_, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(smem_bytes_)));
  }
  void select_tile() {
    tile_ = tile_spec(sizeof(T));
    const std::string name = tile_.name;
    if constexpr (sizeof(T) == 8) {
      use_smem<5, 6>();
    } else {
      if (name == "r7x8") use_reg<7, 8, 16, 2>();
      else if (name == "r10x8") use_reg<10, 8, 16, 2>();
      else if (name == "r7x8a") use_reg<7, 8, 16, 1>();
      else if (name == "r5x8") use_reg<5, 8, 16, 2>();
      else if (name == "r7x16") use_reg<7, 16, 8, 2>();
      else if (name == "r10x16") use_reg<10, 16, 8, 2>();
      else if (name == "r7x4") use_reg<7, 4, 32, 1>();
      else if (name == "s10x16") use_smem<10, 16>();
      else use_smem<5, 10>();
    }
  }

  // S: a scene's (scene_ set).
  void launch_pass(const PassArgs<T>& A, const SceneArgs<T>& S) {
    if (pass_) {
      const dim3 grid(static_cast<unsigned>(tiles_x_), static_cast<unsigned>(tiles_y_));
      if (scene_) scene_pass_<<<grid, block_, smem_bytes_, stream_>>>(A, S);
      else pass_<<<grid, block_, smem_bytes_, stream_>>>(A);
      NUMPIPE_CUDA_CHECK_LAUNCH();
      return;
    }
    if constexpr (sizeof(T) == 4) {
      const bool inner = inner_grid_.x > 0 && inner_grid_.y > 0;
      // the edge tiles (a scene's: and those near its obstacle) beside the inner ones
      const int side_tiles = scene_ ? scene_tile_count_ : edge_tiles_;
      if (side_tiles > 0 && inner) {
        NUMPIPE_CUDA_CHECK(cudaEventRecord(fork_, stream_));
        NUMPIPE_CUDA_CHECK(cudaStreamWaitEvent(side_, fork_, 0));
      }
      if (side_tiles > 0) {
        const unsigned blocks = static_cast<unsigned>(side_tiles);
        if (scene_) scene_reg_<<<blocks, block_, scene_smem_bytes_, inner ? side_ : stream_>>>(A, map_, S);
        else edge_[A.mul]<<<blocks, block_, smem_bytes_, inner ? side_ : stream_>>>(A, map_);
        NUMPIPE_CUDA_CHECK_LAUNCH();
      }
      if (inner) {
        if (scene_) scene_inner_[A.mul]<<<inner_grid_, block_, smem_bytes_, stream_>>>(A, map_, S);
        else inner_[A.mul]<<<inner_grid_, block_, smem_bytes_, stream_>>>(A, map_);
        NUMPIPE_CUDA_CHECK_LAUNCH();
      }
      if (side_tiles > 0 && inner) {
        NUMPIPE_CUDA_CHECK(cudaEventRecord(join_, side_));
        NUMPIPE_CUDA_CHECK(cudaStreamWaitEvent(stream_, join_, 0));
      }
    }
  }

  dim3 grid2(int cells_per_side) const {
    return dim3(static_cast<unsigned>((cells_per_side + 31) / 32), static_cast<unsigned>((cells_per_side + 7) / 8));
  }

  void set_bnd(int b, T* x) {
    set_bnd_kernel<T><<<(n_ + 1 + 255) / 256, 256, 0, stream_>>>(x, n_, b);
    NUMPIPE_CUDA_CHECK_LAUNCH();
  }

  // lin_solve(b, x, x0, a, c) from the generated initial guess (gen: react's
  // source of that field, -1 zero), x0 read as x0 + dt*source(add) when add >= 0;
  // the last pass leaves react's maximum per block in `partial` (max 1: of x, 2: of x^2 + x0^2).
  // A scene's solve: x0 + dt*emit inside (emit_bit: the tiles that hold it), sigma
  // for the cells beside the obstacle.
  void lin_solve(int b, T* x, const T* x0, T a, T c, int gen, int add, int max, T* partial, const T* emit = nullptr,
                 int emit_bit = 0, T sigma = T(1)) {
    const int passes = (p_.iters + tile_.k - 1) / tile_.k;
    const Divisor<T> dv = make_divisor(c, false);
    const T* src = nullptr;
    for (int q = 0; q < passes; ++q) {
      T* dst = (passes - 1 - q) % 2 == 0 ? x : scratch_.data();
      const bool last = q == passes - 1;
      PassArgs<T> A{src,
                    x0,
                    dst,
                    last && max ? partial : nullptr,
                    flags_.data(),
                    n_,
                    p_.iters / passes + (q < p_.iters % passes ? 1 : 0),
                    b,
                    gen,
                    add,
                    last ? max : 0,
                    dv.mode == DivMode::multiply ? 1 : 0,
                    a,
                    c,
                    dv.r,
                    T(p_.dt),
                    T(p_.force),
                    T(p_.source)};
      const SceneArgs<T> S{scene_ ? code_ptr() : nullptr,
                           emit,
                           scene_ ? tile_flags_.data() : nullptr,
                           scene_ ? scene_tiles_.data() : nullptr,
                           emit_bit,
                           sigma};
      launch_pass(A, S);
      src = dst;
    }
    corners_kernel<T><<<1, 32, 0, stream_>>>(x, n_);
    NUMPIPE_CUDA_CHECK_LAUNCH();
  }

  void diffuse(int b, T* x, const T* x0, int field, double k, T* partial) {
    const T a = diffuse_a(T(p_.dt), T(k), n_);
    lin_solve(b, x, x0, a, T(1) + T(4) * a, field, field, partial ? 1 : 0, partial);
  }

  void project(T* u, T* v, T* p, T* div, T* partial) {
    project_begin<T><<<grid2(n_ + 2), dim3(32, 8), 0, stream_>>>(u, v, div, n_);
    NUMPIPE_CUDA_CHECK_LAUNCH();
    lin_solve(kScalar, p, div, T(1), T(4), -1, -1, partial ? 2 : 0, partial);
    project_end<T><<<grid2(n_), dim3(32, 8), 0, stream_>>>(u, v, p, n_);
    NUMPIPE_CUDA_CHECK_LAUNCH();
    set_bnd(kU, u);
    set_bnd(kV, v);
  }

  void advect(const T* U, const T* V, T* o1, const T* q1, T* o2, const T* q2, T* o3, const T* q3) {
    advect_kernel<T><<<grid2(n_), dim3(32, 8), 0, stream_>>>(U, V, o1, q1, o2, q2, o3, q3, n_, T(p_.dt) * T(n_));
    NUMPIPE_CUDA_CHECK_LAUNCH();
  }

  // ---- a scene (scene_cpu.cpp's step on a square box with closed sides) ----------------------
  const std::uint8_t* code_ptr() const { return code_.size() ? code_.data() : nullptr; }
  const T* emit_ptr(int field) const { return emit_[field].size() ? emit_[field].data() : nullptr; }
  bool temperature() const { return t_.size() > 0; }

  // The scene's arrays on the device, and which tiles its kernel runs: a tile
  // whose extended tile holds a cell of the obstacle or beside it (a code) takes
  // the obstacle's formulas; one that holds an emitter's value other than +0
  // reads that emitter (elsewhere x0 + dt*0 is formed without reading it).
  void set_scene(const FusedScene<T>& sc) {
    scene_ = true;
    inv_h_ = sc.inv_h;
    const int n = n_, w = n + 2, tiles = tiles_x_ * tiles_y_;
    const int tx = ext_w_ - 2 * halo_, ty = ext_h_ - 2 * halo_;
    std::vector<std::uint8_t> flags(static_cast<std::size_t>(tiles), 0);
    // the tiles whose extended tile holds cell (x, y): columns [bx0, bx1], rows [by0, by1]
    auto mark = [&](int x, int y, std::uint8_t bit) {
      const int lo_x = x + halo_ - ext_w_ + 1, lo_y = y + halo_ - ext_h_ + 1;
      const int bx0 = lo_x <= 0 ? 0 : (lo_x + tx - 1) / tx, bx1 = std::min(tiles_x_ - 1, (x + halo_) / tx);
      const int by0 = lo_y <= 0 ? 0 : (lo_y + ty - 1) / ty, by1 = std::min(tiles_y_ - 1, (y + halo_) / ty);
      for (int by = by0; by <= by1; ++by)
        for (int bx = bx0; bx <= bx1; ++bx) flags[static_cast<std::size_t>(by) * tiles_x_ + bx] |= bit;
    };
    if (sc.obstacle) {
      const ObstacleLists& ob = *sc.obstacle;
      code_ = DeviceArray<std::uint8_t>(cells_);
      copy_to_device(code_.data(), ob.code.data(), cells_, stream_);  // pinned staging
      border_count_ = static_cast<int>(ob.border.size());
      border_ = DeviceArray<ObstacleLists::Border>(std::max<std::size_t>(1, ob.border.size()));
      if (border_count_) border_.copy_from_host(ob.border.data(), ob.border.size(), stream_);
      fix_count_ = static_cast<int>(ob.fix.size());
      for (std::int64_t c : ob.solid) mark(static_cast<int>(c % w), static_cast<int>(c / w), kTileScene);
      for (int j = 1; j <= n; ++j)
        for (int q = ob.row_begin[static_cast<std::size_t>(j)]; q < ob.row_begin[static_cast<std::size_t>(j) + 1]; ++q)
          mark(ob.fix[static_cast<std::size_t>(q)].i, j, kTileScene);
    }
    const std::uint8_t emit_bits[4] = {kTileEmitD, kTileEmitU, kTileEmitV, kTileEmitT};
    for (int f = 0; f < 4; ++f) {
      const T* e = sc.emit[f];
      if (!e) continue;
      emit_[f] = DeviceArray<T>(cells_);
      copy_to_device(emit_[f].data(), e, cells_ * sizeof(T), stream_);
      for (int y = 0; y <= n + 1; ++y) {
        const T* row = e + static_cast<std::size_t>(y) * w;
        bool any = false;  // a value whose bits are not +0's (-0 included)
        for (int x = 0; x < w; ++x) any |= !(row[x] == T(0) && !std::signbit(row[x]));
        if (!any) continue;
        for (int x = 0; x < w; ++x)
          if (!(row[x] == T(0) && !std::signbit(row[x]))) mark(x, y, emit_bits[f]);
      }
    }
    // edge tiles (map_tiles): the scene kernel's too
    for (int by = 0; by < tiles_y_; ++by)
      for (int bx = 0; bx < tiles_x_; ++bx) {
        const int gx0 = bx * tx - halo_, gy0 = by * ty - halo_;
        std::uint8_t& f = flags[static_cast<std::size_t>(by) * tiles_x_ + bx];
        if (f & kTileScene) ++obstacle_tiles_;
        if (gx0 <= 0 || gy0 <= 0 || gx0 + ext_w_ - 1 >= n + 1 || gy0 + ext_h_ - 1 >= n + 1) f |= kTileScene;
      }
    std::vector<int> list;
    for (int t = 0; t < tiles; ++t)
      if (flags[static_cast<std::size_t>(t)] & kTileScene) list.push_back(t);
    scene_tile_count_ = static_cast<int>(list.size());
    tile_flags_ = DeviceArray<std::uint8_t>(flags.size());
    tile_flags_.copy_from_host(flags.data(), flags.size(), stream_);
    scene_tiles_ = DeviceArray<int>(std::max<std::size_t>(1, list.size()));
    if (!list.empty()) scene_tiles_.copy_from_host(list.data(), list.size(), stream_);
    auto zeros = [&] {
      DeviceArray<T> a(cells_);
      NUMPIPE_CUDA_CHECK(cudaMemsetAsync(a.data(), 0, a.bytes(), stream_));
      return a;
    };
    if (sc.temperature) {
      t_ = DeviceArray<T>(cells_);
      copy_to_device(t_.data(), sc.temperature, cells_ * sizeof(T), stream_);
      t0_ = zeros();
    }
    forces_ = sc.forces;
    vort_ = forces_.vorticity_on();
    buoy_ = forces_.buoyancy_on();
    if (vort_ || buoy_) {
      fu_ = zeros();
      fv_ = zeros();
    }
    if (vort_) wabs_ = zeros();
    NUMPIPE_CUDA_CHECK(cudaStreamSynchronize(stream_));  // the host vectors go out of scope
  }

  // diffuse: from react's source of `field` (or zero: -1) as the initial guess, x0 +
  // dt*react's source (add) + dt*the emitter (emit: 0 d, 1 u, 2 v, 3 T; -1 none).
  void scene_diffuse(int b, T* x, const T* x0, int field, int add, int emit, double k, T* partial, T sigma) {
    const T a = T(p_.dt) * static_cast<T>(k) * inv_h_ * inv_h_;  // scene_cpu.cpp's diffuse: 1/h for Stam's N
    const int bits[4] = {kTileEmitD, kTileEmitU, kTileEmitV, kTileEmitT};
    lin_solve(b, x, x0, a, T(1) + T(4) * a, field, add, partial ? 1 : 0, partial, emit >= 0 ? emit_ptr(emit) : nullptr,
              emit >= 0 ? bits[emit] : 0, sigma);
  }

  // The forces from the state at the start of the step, and u, v with react's
  // sources, the emitters and the forces added (the solves then add nothing).
  void scene_forces() {
    T *d = buf_[0].data(), *u = buf_[1].data(), *v = buf_[2].data();
    set_bnd(kU, u);  // the ghost cells by the sides' rules first (an input state's may be stale)
    set_bnd(kV, v);
    T* wa = wabs_.size() ? wabs_.data() : nullptr;
    if (vort_) {
      scene_vorticity_kernel<T><<<grid2(n_), dim3(32, 8), 0, stream_>>>(u, v, wa, code_ptr(), n_, inv_h_);
      NUMPIPE_CUDA_CHECK_LAUNCH();
      set_bnd(kScalar, wa);  // closed sides: copies, as kSceneCopy
    }
    const T eps_h = static_cast<T>(forces_.vorticity) / inv_h_;
    scene_forces_kernel<T><<<grid2(n_), dim3(32, 8), 0, stream_>>>(
        u, v, wa, d, temperature() ? t_.data() : nullptr, fu_.data(), fv_.data(), code_ptr(), n_, inv_h_, eps_h,
        vort_ ? 1 : 0, buoy_ ? 1 : 0, static_cast<T>(forces_.buoyancy_a), static_cast<T>(forces_.buoyancy_b), static_cast<T>(forces_.ambient));
    NUMPIPE_CUDA_CHECK_LAUNCH();
    const T dt = T(p_.dt), force = T(p_.force), source = T(p_.source);
    scene_add_velocity<T><<<grid2(n_ + 2), dim3(32, 8), 0, stream_>>>(u, kFieldU, emit_ptr(1), vort_ ? fu_.data() : nullptr,
                                                                      flags_.data(), n_, dt, force, source);
    NUMPIPE_CUDA_CHECK_LAUNCH();
    scene_add_velocity<T><<<grid2(n_ + 2), dim3(32, 8), 0, stream_>>>(v, kFieldV, emit_ptr(2), fv_.data(), flags_.data(),
                                                                      n_, dt, force, source);
    NUMPIPE_CUDA_CHECK_LAUNCH();
  }

  void scene_project(T* u, T* v, T* p, T* div, T* partial) {
    scene_project_begin<T><<<grid2(n_ + 2), dim3(32, 8), 0, stream_>>>(u, v, div, code_ptr(), n_, inv_h_);
    NUMPIPE_CUDA_CHECK_LAUNCH();
    lin_solve(kScalar, p, div, T(1), T(4), -1, -1, partial ? 2 : 0, partial, nullptr, 0, T(1));
    scene_project_end<T><<<grid2(n_), dim3(32, 8), 0, stream_>>>(u, v, p, code_ptr(), n_, inv_h_);
    NUMPIPE_CUDA_CHECK_LAUNCH();
    set_bnd(kU, u);
    set_bnd(kV, v);
  }

  void scene_border(T* q, bool fill) {
    if (!border_count_) return;
    scene_border_kernel<T><<<(border_count_ + 255) / 256, 256, 0, stream_>>>(q, border_.data(), border_count_, fill ? 1 : 0);
    NUMPIPE_CUDA_CHECK_LAUNCH();
  }

  // scene_cpu.cpp's step on a square box with closed sides (react, then the
  // sources, the emitters and add_source inside the solves' passes, or before them
  // with the forces).
  void enqueue_scene_step() {
    T *d = buf_[0].data(), *u = buf_[1].data(), *v = buf_[2].data();
    T *d0 = buf_[3].data(), *u0 = buf_[4].data(), *v0 = buf_[5].data();
    const T dt0 = T(p_.dt) * inv_h_;
    if (vort_ || buoy_) {
      scene_forces();
      scene_diffuse(kU, u0, u, kFieldU, -1, -1, p_.visc, nullptr, T(-1));
      scene_diffuse(kV, v0, v, kFieldV, -1, -1, p_.visc, nullptr, T(-1));
    } else {
      scene_diffuse(kU, u0, u, kFieldU, kFieldU, 1, p_.visc, nullptr, T(-1));
      scene_diffuse(kV, v0, v, kFieldV, kFieldV, 2, p_.visc, nullptr, T(-1));
    }
    scene_project(u0, v0, u, v, nullptr);
    scene_advect_kernel<T><<<grid2(n_), dim3(32, 8), 0, stream_>>>(u0, v0, u, u0, v, v0, code_ptr(), n_, dt0);
    NUMPIPE_CUDA_CHECK_LAUNCH();
    set_bnd(kU, u);
    set_bnd(kV, v);
    scene_project(u, v, u0, v0, partial_v_.data());
    scene_diffuse(kScalar, d0, d, kFieldD, kFieldD, 0, p_.diff, partial_d_.data(), T(1));
    // the temperature likewise (its work buffer cleared by react, no react source; closed
    // sides: the ambient value never enters), advected with d (neither reads the other)
    T* t = temperature() ? t_.data() : nullptr;
    T* t0 = temperature() ? t0_.data() : nullptr;
    if (t) scene_diffuse(kScalar, t0, t, -1, -1, 3, p_.diff, nullptr, T(1));
    scene_border(d0, true);
    if (t) scene_border(t0, true);
    scene_advect_kernel<T><<<grid2(n_), dim3(32, 8), 0, stream_>>>(u, v, d, d0, t, t0, code_ptr(), n_, dt0);
    NUMPIPE_CUDA_CHECK_LAUNCH();
    scene_border(d0, false);
    set_bnd(kScalar, d);
    if (t) {
      scene_border(t0, false);
      set_bnd(kScalar, t);
    }
  }

  // Stam's velocity step: diffuse, project, advect, project; the fused scheme's
  // advection carries the density (d from d0) in the same pass (d null: the stam scheme).
  void velocity_step(T* d, const T* d0) {
    T *u = buf_[1].data(), *v = buf_[2].data(), *u0 = buf_[4].data(), *v0 = buf_[5].data();
    diffuse(kU, u0, u, kFieldU, p_.visc, nullptr);
    diffuse(kV, v0, v, kFieldV, p_.visc, nullptr);
    project(u0, v0, u, v, nullptr);
    if (d) advect(u0, v0, d, d0, u, u0, v, v0);
    else advect(u0, v0, u, u0, v, v0, nullptr, nullptr);
    set_bnd(kU, u);
    set_bnd(kV, v);
    project(u, v, u0, v0, partial_v_.data());
  }

  void enqueue_step() {
    T *d = buf_[0].data(), *u = buf_[1].data(), *v = buf_[2].data();
    T *d0 = buf_[3].data(), *u0 = buf_[4].data(), *v0 = buf_[5].data();
    react_decide<T><<<1, kReactThreads, 0, stream_>>>(partial_v_.data(), partial_d_.data(), parts_, d0, u0, v0, n_,
                                                      flags_.data(), counters_.data(),
                                                      p_.forcing == Forcing::react ? 1 : 0);
    NUMPIPE_CUDA_CHECK_LAUNCH();
    if (scene_) {
      enqueue_scene_step();
    } else if (p_.scheme == Scheme::seed) {
      add_zero_boundary<T><<<(n_ + 2 + 255) / 256, 256, 0, stream_>>>(d, n_, T(p_.dt));
      NUMPIPE_CUDA_CHECK_LAUNCH();
      diffuse(kScalar, d0, d, kFieldD, p_.diff, partial_d_.data());
      velocity_step(d, d0);
    } else {
      velocity_step(nullptr, nullptr);
      diffuse(kScalar, d0, d, kFieldD, p_.diff, partial_d_.data());
      advect(u, v, d, d0, nullptr, nullptr, nullptr, nullptr);
      set_bnd(kScalar, d);
    }
  }
};

}  // namespace

std::string cuda_tile_name(int element_size) { return tile_spec(element_size).name; }

double cuda_solve_elements_per_cell(int iters, int element_size) {
  // The first pass reads x0 over the extended tile (halo factor h) and writes x;
  // each later pass reads x and x0 over it and writes x.
  const TileSpec t = tile_spec(element_size);
  const int passes = (iters + t.k - 1) / t.k;
  const double ew = t.reg ? kRegW : kExtW, eh = t.reg ? t.rpt * t.wy : kThreadsY * t.rpt;
  const double h = (ew * eh) / ((ew - 4 * t.k) * (eh - 4 * t.k));
  return (h + 1) + (passes - 1) * (2 * h + 1);
}

template <class T>
std::unique_ptr<Solver<T>> make_cuda_solver(const Params& p, const Fields<T>& initial, int device) {
  const T* const state[6] = {initial.d.data(), initial.u.data(), initial.v.data(),
                             initial.d0.data(), initial.u0.data(), initial.v0.data()};
  return std::make_unique<CudaSolver<T>>(p, state, initial.cells(), device);
}

template <class T>
std::unique_ptr<SceneSolver<T>> make_scene_tiled_solver(const Params& p, const Scene& s, const SceneFields<T>& init,
                                                       int device) {
  return std::make_unique<FusedSceneSolver<T, CudaSolver<T>>>(
      p, s, init, [device, &init](const Params& q, const T* const state[6], const FusedScene<T>& setup) {
        return std::make_unique<CudaSolver<T>>(q, state, init.cells(), device, &setup);
      });
}
template std::unique_ptr<SceneSolver<float>> make_scene_tiled_solver(const Params&, const Scene&,
                                                                     const SceneFields<float>&, int);
template std::unique_ptr<SceneSolver<double>> make_scene_tiled_solver(const Params&, const Scene&,
                                                                      const SceneFields<double>&, int);
template std::unique_ptr<Solver<float>> make_cuda_solver(const Params&, const Fields<float>&, int);
template std::unique_ptr<Solver<double>> make_cuda_solver(const Params&, const Fields<double>&, int);

}  // namespace numpipe::fluid
