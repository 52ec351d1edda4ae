// The scene path's CUDA backend (scene.hpp, docs/fluid.md "Scenes"). A scene in a
// square box with closed sides runs on the fused solver's tiles (cuda.cu,
// make_scene_tiled_solver); any other here: the steps of scene_cpu.cpp, one kernel
// per operation, each cell computed by
// scene_model.hpp's formulas in the CPU's order (built without FMA contraction),
// so that the two backends give the same bits. The state stays on the device;
// one step is captured once as a CUDA Graph and replayed.
//
// A solve runs on colour planes (as the CPU's: unit-stride half-sweeps), one
// thread per cell of the half-sweep's colour; the periodic sides' ghost cells
// are refreshed after every half-sweep, as on the CPU. Cells beside an
// obstacle take scene_model.hpp's gs_cell_solid; solid cells are skipped (the
// CPU computes them and throws the values away: nothing reads them) and set to
// zero after each solve. react's two maxima are per-block maxima reduced by one
// block (exact in any order).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/cuda_check.hpp"
#include "common/cuda_graph.hpp"
#include "common/device_array.hpp"
#include "react.cuh"
#include "scene.hpp"
#include "scene_cells.cuh"
#include "tuning.hpp"

namespace numpipe::fluid {
namespace {

constexpr int kThreads = 256;
constexpr int kReduceBlocks = 512;

// The box, by value.
struct Geo {
  int nx, ny, w;
  bool px, py;
};
// One set_bnd's rules: each side's ghost mode and constant.
template <class T>
struct Bnd {
  int mode[4];
  T cst[4];
};

template <class T>
__device__ __forceinline__ T max_of(T m, T s) {
  return s > m ? s : m;
}
// ---- set_bnd -------------------------------------------------------------------------------
// A cell by (i, j): the natural layout, or lin_solve's colour planes.
template <class T>
struct FlatAt {
  T* x;
  int w;
  __device__ __forceinline__ T& operator()(int i, int j) const { return x[ix(i, j, w)]; }
};
template <class T>
struct PlaneAt {
  T* p0;
  T* p1;
  int hw;
  __device__ __forceinline__ T& operator()(int i, int j) const {
    return ((i + j) & 1 ? p1 : p0)[static_cast<std::int64_t>(j) * hw + (i >> 1)];
  }
};

// Ghost values from interior cells only (scene.hpp's scene_set_bnd_at, in
// which the corners read the edges: here each corner recomputes its edges).
template <class T, class At>
__device__ __forceinline__ T edge_left(const Geo& g, const Bnd<T>& b, const At& x, int j) {
  return g.px ? x(g.nx, j) : ghost_value(b.mode[kLeft], x(1, j), b.cst[kLeft]);
}
template <class T, class At>
__device__ __forceinline__ T edge_right(const Geo& g, const Bnd<T>& b, const At& x, int j) {
  return g.px ? x(1, j) : ghost_value(b.mode[kRight], x(g.nx, j), b.cst[kRight]);
}
template <class T, class At>
__device__ __forceinline__ T edge_bottom(const Geo& g, const Bnd<T>& b, const At& x, int i) {
  return g.py ? x(i, g.ny) : ghost_value(b.mode[kBottom], x(i, 1), b.cst[kBottom]);
}
template <class T, class At>
__device__ __forceinline__ T edge_top(const Geo& g, const Bnd<T>& b, const At& x, int i) {
  return g.py ? x(i, 1) : ghost_value(b.mode[kTop], x(i, g.ny), b.cst[kTop]);
}

template <class T, class At>
__global__ void set_bnd_kernel(At x, Geo g, Bnd<T> b) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  const int nx = g.nx, ny = g.ny;
  if (t < ny) {
    const int j = t + 1;
    const T l = edge_left(g, b, x, j), r = edge_right(g, b, x, j);
    x(0, j) = l;
    x(nx + 1, j) = r;
  } else if (t < ny + nx) {
    const int i = t - ny + 1;
    const T lo = edge_bottom(g, b, x, i), hi = edge_top(g, b, x, i);
    x(i, 0) = lo;
    x(i, ny + 1) = hi;
  } else if (t < ny + nx + 4) {
    const int k = t - ny - nx;  // 0 (0,0), 1 (nx+1,0), 2 (0,ny+1), 3 (nx+1,ny+1)
    T value;
    if (g.px) {
      value = k == 0 ? edge_bottom(g, b, x, nx) : k == 1 ? edge_bottom(g, b, x, 1) : k == 2 ? edge_top(g, b, x, nx)
                                                                                           : edge_top(g, b, x, 1);
    } else if (g.py) {
      value = k == 0 ? edge_left(g, b, x, ny) : k == 1 ? edge_right(g, b, x, ny) : k == 2 ? edge_left(g, b, x, 1)
                                                                                         : edge_right(g, b, x, 1);
    } else {
      value = k == 0   ? corner(edge_bottom(g, b, x, 1), edge_left(g, b, x, 1))
              : k == 1 ? corner(edge_bottom(g, b, x, nx), edge_right(g, b, x, 1))
              : k == 2 ? corner(edge_top(g, b, x, 1), edge_left(g, b, x, ny))
                       : corner(edge_top(g, b, x, nx), edge_right(g, b, x, ny));
    }
    x(k & 1 ? nx + 1 : 0, k & 2 ? ny + 1 : 0) = value;
  }
}
// The periodic sides' ghost cells as copies of the opposite interior (after
// every half-sweep, as the CPU does).
template <class T>
__global__ void wrap_kernel(PlaneAt<T> x, Geo g) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (g.px && t < g.ny) {
    const int j = t + 1;
    x(0, j) = x(g.nx, j);
    x(g.nx + 1, j) = x(1, j);
  } else if (g.py && t >= g.ny && t < g.ny + g.nx) {
    const int i = t - g.ny + 1;
    x(i, 0) = x(i, g.ny);
    x(i, g.ny + 1) = x(i, 1);
  }
}

// ---- lin_solve's half-sweep, on colour planes (scene_cpu.cpp) ------------------------------
// Plane c: the cells with (i + j) % 2 == c, cell (i, j) at row j, index i / 2.
template <class T>
__global__ void split_kernel(const T* x, T* p0, T* p1, Geo g, int hw, int interior) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x + interior, j = blockIdx.y * blockDim.y + threadIdx.y + interior;
  if (i > g.nx + 1 - interior || j > g.ny + 1 - interior) return;
  ((i + j) & 1 ? p1 : p0)[static_cast<std::int64_t>(j) * hw + (i >> 1)] = x[ix(i, j, g.w)];
}
template <class T>
__global__ void merge_kernel(T* x, const T* p0, const T* p1, Geo g, int hw) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y * blockDim.y + threadIdx.y;
  if (i > g.nx + 1 || j > g.ny + 1) return;
  x[ix(i, j, g.w)] = ((i + j) & 1 ? p1 : p0)[static_cast<std::int64_t>(j) * hw + (i >> 1)];
}
// Cells x = 2k + p of row j (p = (colour + j) % 2): left and right neighbours
// k - 1 + p and k + p of the other plane's row j, lower and upper k of its rows
// j - 1 and j + 1.
template <class T, bool MASK>
__global__ void half_sweep_kernel(T* out, const T* in, const T* x0, const std::uint8_t* code, const std::uint8_t* rows,
                                  Geo g, int hw, T a, T c, T sigma, int colour) {
  const int j = blockIdx.y * blockDim.y + threadIdx.y + 1;
  if (j > g.ny) return;
  const int p = (colour + j) & 1;
  const int k = (p ? 0 : 1) + static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (k > (g.nx - p) >> 1) return;
  const std::int64_t r = static_cast<std::int64_t>(j) * hw + k;
  const T left = in[r - 1 + p], right = in[r + p], down = in[r - hw], up = in[r + hw];
  if (MASK && rows[j]) {  // a row without obstacle cells reads no codes
    const int cd = code[ix(2 * k + p, j, g.w)];
    if (cd & kSolidSelf) return;
    if (cd) {
      out[r] = gs_cell_solid(x0[r], left, right, down, up, cd, a, c, sigma);
      return;
    }
  }
  out[r] = gs_cell(x0[r], left, right, down, up, a, c);
}

template <class T>
__global__ void zero_list_kernel(T* x, const std::int64_t* list, int count) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < count) x[list[k]] = T(0);
}

// ---- projection ------------------------------------------------------------------------------
template <class T, bool MASK>
__global__ void divergence_kernel(const T* u, const T* v, T* div, T* pr, const std::uint8_t* code,
                                  const std::uint8_t* rows, Geo g, T inv_h) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x + 1, j = blockIdx.y * blockDim.y + threadIdx.y + 1;
  if (i > g.nx || j > g.ny) return;
  const std::int64_t w = g.w, c = ix(i, j, g.w);
  const int cd = MASK && rows[j] ? code[c] : 0;
  div[c] = scene_cells::divergence(u, v, c, w, cd, inv_h);
  pr[c] = T(0);
}

template <class T, bool MASK>
__global__ void gradient_kernel(T* u, T* v, const T* pr, const std::uint8_t* code, const std::uint8_t* rows, Geo g,
                                T inv_h) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x + 1, j = blockIdx.y * blockDim.y + threadIdx.y + 1;
  if (i > g.nx || j > g.ny) return;
  const std::int64_t w = g.w, c = ix(i, j, g.w);
  const int cd = MASK && rows[j] ? code[c] : 0;
  scene_cells::gradient(u, v, pr, c, w, cd, inv_h);
}

// ---- advection -------------------------------------------------------------------------------
template <class T, bool MASK>
__global__ void advect_kernel(const T* U, const T* V, T* out0, const T* q0, T* out1, const T* q1,
                              const std::uint8_t* code, const std::uint8_t* rows, Geo g, T dt0) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x + 1, j = blockIdx.y * blockDim.y + threadIdx.y + 1;
  if (i > g.nx || j > g.ny) return;
  const std::int64_t c = ix(i, j, g.w);
  if (MASK && rows[j] && (code[c] & kSolidSelf)) {
    out0[c] = T(0);
    if (out1) out1[c] = T(0);
    return;
  }
  const Trace<T> tx = back_trace(i, U[c], dt0, g.nx, g.px);
  const Trace<T> ty = back_trace(j, V[c], dt0, g.ny, g.py);
  out0[c] = interpolate(q0, g.w, tx, ty);
  if (out1) out1[c] = interpolate(q1, g.w, tx, ty);
}

template <class T>
__global__ void fill_border_kernel(T* q, const ObstacleLists::Border* border, int count) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= count) return;
  const ObstacleLists::Border b = border[k];
  q[b.c] = scene_cells::border_mean(q, b);
}
template <class T>
__global__ void clear_border_kernel(T* q, const ObstacleLists::Border* border, int count) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < count) q[border[k].c] = T(0);
}

// ---- sources and forces ------------------------------------------------------------------------
template <class T>
__global__ void react_max_kernel(const T* u0, const T* v0, const T* d0, long long cells, T* part_v, T* part_d) {
  T mv = T(-INFINITY), md = T(-INFINITY);
  for (long long i = blockIdx.x * static_cast<long long>(kThreads) + threadIdx.x; i < cells;
       i += static_cast<long long>(gridDim.x) * kThreads) {
    mv = max_of(mv, u0[i] * u0[i] + v0[i] * v0[i]);
    md = max_of(md, d0[i]);
  }
  react_cuda::block_max2<T, kThreads>(mv, md);
  if (threadIdx.x == 0) {
    part_v[blockIdx.x] = mv;
    part_d[blockIdx.x] = md;
  }
}
// flags: [0] inject velocity, [1] inject density; counters: steps, velocity and density injections.
template <class T>
__global__ void react_decide_kernel(const T* part_v, const T* part_d, int parts, int react, int* flags,
                                    long long* counters) {
  T mv = T(-INFINITY), md = T(-INFINITY);
  for (int k = threadIdx.x; k < parts; k += kThreads) {
    mv = max_of(mv, part_v[k]);
    md = max_of(md, part_d[k]);
  }
  react_cuda::block_max2<T, kThreads>(mv, md);
  if (threadIdx.x == 0) react_cuda::decide(mv, md, react, flags, counters);
}
template <class T>
__global__ void react_fill_kernel(T* d0, T* u0, T* v0, T* t0, const int* flags, Geo g, T force, T source,
                                  long long cells) {
  const bool vel = flags[0] != 0, den = flags[1] != 0;
  for (long long i = blockIdx.x * static_cast<long long>(kThreads) + threadIdx.x; i < cells;
       i += static_cast<long long>(gridDim.x) * kThreads) {
    const int x = static_cast<int>(i % g.w), y = static_cast<int>(i / g.w);
    d0[i] = scene_react_source(kFieldD, x, y, g.nx, g.ny, vel, den, force, source);
    u0[i] = scene_react_source(kFieldU, x, y, g.nx, g.ny, vel, den, force, source);
    v0[i] = scene_react_source(kFieldV, x, y, g.nx, g.ny, vel, den, force, source);
    if (t0) t0[i] = T(0);
  }
}
template <class T>
__global__ void add_source_kernel(T* x, const T* s, T* y, const T* t, T dt, long long cells) {
  for (long long i = blockIdx.x * static_cast<long long>(kThreads) + threadIdx.x; i < cells;
       i += static_cast<long long>(gridDim.x) * kThreads) {
    x[i] += dt * s[i];
    if (y) y[i] += dt * t[i];
  }
}
template <class T>
__global__ void add_interior_kernel(T* x, const T* src, const T* f, Geo g, T dt) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x + 1, j = blockIdx.y * blockDim.y + threadIdx.y + 1;
  if (i > g.nx || j > g.ny) return;
  const std::int64_t c = ix(i, j, g.w);
  T value = x[c];
  if (src) value = value + dt * src[c];
  if (f) value = value + dt * f[c];
  x[c] = value;
}
template <class T, bool MASK>
__global__ void vorticity_abs_kernel(const T* u, const T* v, T* wa, const std::uint8_t* code, const std::uint8_t* rows,
                                     Geo g, T inv_h) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x + 1, j = blockIdx.y * blockDim.y + threadIdx.y + 1;
  if (i > g.nx || j > g.ny) return;
  const std::int64_t w = g.w, c = ix(i, j, g.w);
  wa[c] = scene_cells::vorticity_abs(u, v, c, w, MASK && rows[j] ? code[c] : 0, inv_h);
}
template <class T, bool MASK>
__global__ void forces_kernel(const T* u, const T* v, const T* wa, const T* d, const T* temp, T* fu, T* fv,
                              const std::uint8_t* code, const std::uint8_t* rows, Geo g, T inv_h, T eps_h, int vort,
                              int buoy, T ba, T bb,
                              T ambient) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x + 1, j = blockIdx.y * blockDim.y + threadIdx.y + 1;
  if (i > g.nx || j > g.ny) return;
  const std::int64_t w = g.w, c = ix(i, j, g.w);
  scene_cells::forces(u, v, wa, d, temp, fu, fv, c, w, MASK && rows[j] ? code[c] : 0, vort != 0, buoy != 0, inv_h,
                      eps_h, ba, bb, ambient);
}

dim3 grid2(int nx, int ny, dim3 block) {
  return dim3(static_cast<unsigned>((nx + block.x - 1) / block.x), static_cast<unsigned>((ny + block.y - 1) / block.y));
}

template <class T>
class SceneCudaSolver final : public SceneSolver<T> {
 public:
  SceneCudaSolver(const Params& p, const Scene& s, const SceneFields<T>& init, int device)
      : p_(p), s_(s), nx_(s.nx), ny_(s.ny), cells_(init.cells()) {
    NUMPIPE_CUDA_CHECK(cudaSetDevice(device));
    NUMPIPE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    geo_ = Geo{nx_, ny_, nx_ + 2, s.periodic_x(), s.periodic_y()};
    inv_h_ = static_cast<T>(s.inv_h());
    dt_ = static_cast<T>(p.dt);
    dt0_ = dt_ * inv_h_;
    auto upload = [&](DeviceArray<T>& to, const FieldVector<T>& from) {
      to = DeviceArray<T>(cells_);
      to.copy_from_host(from.data(), cells_, stream_);
    };
    upload(d_, init.d);
    upload(u_, init.u);
    upload(v_, init.v);
    upload(d0_, init.d0);
    upload(u0_, init.u0);
    upload(v0_, init.v0);
    temperature_ = init.temperature();
    if (temperature_) {
      upload(t_, init.t);
      t0_ = zeros();
    }
    const FieldVector<T>* src[4] = {&init.src_d, &init.src_u, &init.src_v, &init.src_t};
    for (int k = 0; k < 4; ++k)
      if (!src[k]->empty()) upload(src_[k], *src[k]);
    vort_ = s.vorticity != 0;
    buoy_ = s.buoyancy_a != 0 || s.buoyancy_b != 0;
    if (vort_ || buoy_) {
      fu_ = zeros();
      fv_ = zeros();
    }
    if (vort_) wabs_ = zeros();
    if (!init.solid.empty()) {
      const ObstacleLists ob = obstacle_lists(s, init.solid);
      code_ = DeviceArray<std::uint8_t>(cells_);
      code_.copy_from_host(ob.code.data(), cells_, stream_);
      rows_ = DeviceArray<std::uint8_t>(ob.row_has.size());
      rows_.copy_from_host(ob.row_has.data(), ob.row_has.size(), stream_);
      solid_count_ = static_cast<int>(ob.solid.size());
      solid_ = DeviceArray<std::int64_t>(std::max<std::size_t>(1, ob.solid.size()));
      if (solid_count_) solid_.copy_from_host(ob.solid.data(), ob.solid.size(), stream_);
      border_count_ = static_cast<int>(ob.border.size());
      border_ = DeviceArray<ObstacleLists::Border>(std::max<std::size_t>(1, ob.border.size()));
      if (border_count_) border_.copy_from_host(ob.border.data(), ob.border.size(), stream_);
      touches_ = ob.touches_side;
      fix_count_ = static_cast<int>(ob.fix.size());
    }
    hw_ = (nx_ + 2) / 2 + 2;
    for (int c = 0; c < 2; ++c) {
      plane_[c] = DeviceArray<T>(static_cast<std::size_t>(ny_ + 2) * hw_);
      plane0_[c] = DeviceArray<T>(static_cast<std::size_t>(ny_ + 2) * hw_);
      NUMPIPE_CUDA_CHECK(cudaMemsetAsync(plane0_[c].data(), 0, plane0_[c].bytes(), stream_));
    }
    part_v_ = DeviceArray<T>(kReduceBlocks);
    part_d_ = DeviceArray<T>(kReduceBlocks);
    flags_ = DeviceArray<int>(2);
    counters_ = DeviceArray<long long>(3);
    NUMPIPE_CUDA_CHECK(cudaMemsetAsync(counters_.data(), 0, 3 * sizeof(long long), stream_));
    NUMPIPE_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  ~SceneCudaSolver() override {
    if (stream_) cudaStreamDestroy(stream_);
  }

  double advance(int steps) override {
    return steps_.run(stream_, steps, [this](cudaStream_t) { enqueue_step(); });
  }

  void fetch(SceneFields<T>& out) override {
    out.nx = nx_;
    out.ny = ny_;
    FieldVector<T>* dst[6] = {&out.d, &out.u, &out.v, &out.d0, &out.u0, &out.v0};
    const DeviceArray<T>* src[6] = {&d_, &u_, &v_, &d0_, &u0_, &v0_};
    for (int k = 0; k < 6; ++k) {
      dst[k]->resize(cells_);
      src[k]->copy_to_host(dst[k]->data(), cells_, stream_);
    }
    if (temperature_) {
      out.t.resize(cells_);
      t_.copy_to_host(out.t.data(), cells_, stream_);
    } else {
      out.t.clear();
    }
    NUMPIPE_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  Counters counters() const override {
    long long c[3] = {0, 0, 0};
    NUMPIPE_CUDA_CHECK(cudaMemcpyAsync(c, counters_.data(), sizeof(c), cudaMemcpyDeviceToHost, stream_));
    NUMPIPE_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return Counters{c[0], c[1], c[2]};
  }
  std::string kernels() const override {
    return std::string("scene path, one kernel per operation (") + (sizeof(T) == 4 ? "fp32" : "fp64") + "), " +
           std::to_string(fix_count_) + " cells beside obstacles";
  }

 private:
  Params p_;
  Scene s_;
  int nx_, ny_;
  std::size_t cells_;
  Geo geo_{};
  T inv_h_, dt_, dt0_;
  cudaStream_t stream_ = nullptr;
  StepReplay steps_{tuning_from_environment().cuda_graph};  // a step: one graph launch
  bool temperature_ = false, vort_ = false, buoy_ = false, touches_ = false;
  DeviceArray<T> d_, u_, v_, d0_, u0_, v0_, t_, t0_, fu_, fv_, wabs_, src_[4];
  DeviceArray<std::uint8_t> code_, rows_;
  DeviceArray<std::int64_t> solid_;
  DeviceArray<ObstacleLists::Border> border_;
  int solid_count_ = 0, border_count_ = 0, fix_count_ = 0;
  DeviceArray<T> part_v_, part_d_;
  int hw_ = 0;  // colour planes' row width
  DeviceArray<T> plane_[2], plane0_[2];
  DeviceArray<int> flags_;
  DeviceArray<long long> counters_;

  DeviceArray<T> zeros() {
    DeviceArray<T> a(cells_);
    NUMPIPE_CUDA_CHECK(cudaMemsetAsync(a.data(), 0, a.bytes(), stream_));
    return a;
  }
  bool mask() const { return code_.size() > 0; }
  static T* ptr(DeviceArray<T>& a) { return a.size() ? a.data() : nullptr; }
  const dim3 block_{32, 8};
  dim3 interior() const { return grid2(nx_, ny_, block_); }
  unsigned stream_blocks() const {
    return static_cast<unsigned>(std::min<std::size_t>((cells_ + kThreads - 1) / kThreads, 4096));
  }

  Bnd<T> rules(int b, T scalar_inflow) const {
    Bnd<T> r;
    for (int k = 0; k < 4; ++k) {
      r.mode[k] = ghost_mode(b, k, static_cast<int>(s_.side[k]));
      r.cst[k] = b == kSceneScalar ? scalar_inflow : ghost_const(b, k, static_cast<T>(s_.inflow[k]));
    }
    return r;
  }
  void set_bnd(int b, T* x, T scalar_inflow = T(0)) {
    const int threads = nx_ + ny_ + 4;
    set_bnd_kernel<T><<<(threads + kThreads - 1) / kThreads, kThreads, 0, stream_>>>(FlatAt<T>{x, geo_.w}, geo_,
                                                                                      rules(b, scalar_inflow));
    NUMPIPE_CUDA_CHECK_LAUNCH();
  }
  PlaneAt<T> planes() { return PlaneAt<T>{plane_[0].data(), plane_[1].data(), hw_}; }
  void zero_solid(int b, T* x, T scalar_inflow = T(0)) {
    if (!mask() || solid_count_ == 0) return;
    zero_list_kernel<T><<<(solid_count_ + kThreads - 1) / kThreads, kThreads, 0, stream_>>>(x, solid_.data(), solid_count_);
    NUMPIPE_CUDA_CHECK_LAUNCH();
    if (touches_) set_bnd(b, x, scalar_inflow);
  }

  void lin_solve(int b, T* x, const T* x0, T a, T c, T scalar_inflow = T(0)) {
    const T sigma = b == kSceneU || b == kSceneV ? T(-1) : T(1);
    const bool periodic = geo_.px || geo_.py;
    const int edge_threads = nx_ + ny_ + 4;
    const unsigned edge_blocks = static_cast<unsigned>((edge_threads + kThreads - 1) / kThreads);
    split_kernel<T><<<grid2(nx_ + 2, ny_ + 2, block_), block_, 0, stream_>>>(x, plane_[0].data(), plane_[1].data(), geo_, hw_, 0);
    NUMPIPE_CUDA_CHECK_LAUNCH();
    split_kernel<T><<<interior(), block_, 0, stream_>>>(x0, plane0_[0].data(), plane0_[1].data(), geo_, hw_, 1);
    NUMPIPE_CUDA_CHECK_LAUNCH();
    auto wrap = [&] {
      wrap_kernel<T><<<edge_blocks, kThreads, 0, stream_>>>(planes(), geo_);
      NUMPIPE_CUDA_CHECK_LAUNCH();
    };
    if (periodic) wrap();
    const dim3 grid = grid2((nx_ + 2) / 2, ny_, block_);
    const Bnd<T> rule = rules(b, scalar_inflow);
    for (int k = 0; k < p_.iters; ++k) {
      for (int colour = 0; colour < 2; ++colour) {
        T* out = plane_[colour].data();
        const T* in = plane_[1 - colour].data();
        const T* z = plane0_[colour].data();
        if (mask())
          half_sweep_kernel<T, true><<<grid, block_, 0, stream_>>>(out, in, z, code_.data(), rows_.data(), geo_, hw_, a, c, sigma, colour);
        else
          half_sweep_kernel<T, false><<<grid, block_, 0, stream_>>>(out, in, z, nullptr, nullptr, geo_, hw_, a, c, sigma, colour);
        NUMPIPE_CUDA_CHECK_LAUNCH();
        if (periodic) wrap();
      }
      set_bnd_kernel<T><<<edge_blocks, kThreads, 0, stream_>>>(planes(), geo_, rule);
      NUMPIPE_CUDA_CHECK_LAUNCH();
    }
    merge_kernel<T><<<grid2(nx_ + 2, ny_ + 2, block_), block_, 0, stream_>>>(x, plane_[0].data(), plane_[1].data(), geo_, hw_);
    NUMPIPE_CUDA_CHECK_LAUNCH();
    zero_solid(b, x, scalar_inflow);
  }
  void diffuse(int b, T* x, const T* x0, double k, T scalar_inflow = T(0)) {
    const T a = dt_ * static_cast<T>(k) * inv_h_ * inv_h_;
    lin_solve(b, x, x0, a, T(1) + T(4) * a, scalar_inflow);
  }
  void project(T* u, T* v, T* pr, T* div) {
    if (mask()) divergence_kernel<T, true><<<interior(), block_, 0, stream_>>>(u, v, div, pr, code_.data(), rows_.data(), geo_, inv_h_);
    else divergence_kernel<T, false><<<interior(), block_, 0, stream_>>>(u, v, div, pr, nullptr, nullptr, geo_, inv_h_);
    NUMPIPE_CUDA_CHECK_LAUNCH();
    set_bnd(kSceneScalar, div);
    set_bnd(kScenePressure, pr);
    lin_solve(kScenePressure, pr, div, T(1), T(4));
    if (mask()) gradient_kernel<T, true><<<interior(), block_, 0, stream_>>>(u, v, pr, code_.data(), rows_.data(), geo_, inv_h_);
    else gradient_kernel<T, false><<<interior(), block_, 0, stream_>>>(u, v, pr, nullptr, nullptr, geo_, inv_h_);
    NUMPIPE_CUDA_CHECK_LAUNCH();
    set_bnd(kSceneU, u);
    set_bnd(kSceneV, v);
  }
  void advect(const T* U, const T* V, T* out0, const T* q0, T* out1, const T* q1) {
    if (mask())
      advect_kernel<T, true><<<interior(), block_, 0, stream_>>>(U, V, out0, q0, out1, q1, code_.data(), rows_.data(), geo_, dt0_);
    else
      advect_kernel<T, false><<<interior(), block_, 0, stream_>>>(U, V, out0, q0, out1, q1, nullptr, nullptr, geo_, dt0_);
    NUMPIPE_CUDA_CHECK_LAUNCH();
  }
  void advect_scalar(T* out, T* q, T scalar_inflow) {
    const int blocks = (border_count_ + kThreads - 1) / kThreads;
    if (border_count_) {
      fill_border_kernel<T><<<blocks, kThreads, 0, stream_>>>(q, border_.data(), border_count_);
      NUMPIPE_CUDA_CHECK_LAUNCH();
    }
    advect(u_.data(), v_.data(), out, q, nullptr, nullptr);
    if (border_count_) {
      clear_border_kernel<T><<<blocks, kThreads, 0, stream_>>>(q, border_.data(), border_count_);
      NUMPIPE_CUDA_CHECK_LAUNCH();
    }
    set_bnd(kSceneScalar, out, scalar_inflow);
  }
  void add_interior(T* x, T* src, T* f) {
    if (!src && !f) return;
    add_interior_kernel<T><<<interior(), block_, 0, stream_>>>(x, src, f, geo_, dt_);
    NUMPIPE_CUDA_CHECK_LAUNCH();
  }
  void react() {
    const long long cells = static_cast<long long>(cells_);
    react_max_kernel<T><<<kReduceBlocks, kThreads, 0, stream_>>>(u0_.data(), v0_.data(), d0_.data(), cells,
                                                                  part_v_.data(), part_d_.data());
    NUMPIPE_CUDA_CHECK_LAUNCH();
    react_decide_kernel<T><<<1, kThreads, 0, stream_>>>(part_v_.data(), part_d_.data(), kReduceBlocks,
                                                         p_.forcing == Forcing::react ? 1 : 0, flags_.data(),
                                                         counters_.data());
    NUMPIPE_CUDA_CHECK_LAUNCH();
    react_fill_kernel<T><<<stream_blocks(), kThreads, 0, stream_>>>(
        d0_.data(), u0_.data(), v0_.data(), temperature_ ? t0_.data() : nullptr, flags_.data(), geo_,
        static_cast<T>(p_.force), static_cast<T>(p_.source), cells);
    NUMPIPE_CUDA_CHECK_LAUNCH();
  }
  void forces() {
    set_bnd(kSceneU, u_.data());
    set_bnd(kSceneV, v_.data());
    const std::uint8_t* code = mask() ? code_.data() : nullptr;
    const std::uint8_t* rows = mask() ? rows_.data() : nullptr;
    if (vort_) {
      if (mask()) vorticity_abs_kernel<T, true><<<interior(), block_, 0, stream_>>>(u_.data(), v_.data(), wabs_.data(), code, rows, geo_, inv_h_);
      else vorticity_abs_kernel<T, false><<<interior(), block_, 0, stream_>>>(u_.data(), v_.data(), wabs_.data(), code, rows, geo_, inv_h_);
      NUMPIPE_CUDA_CHECK_LAUNCH();
      set_bnd(kSceneCopy, wabs_.data());
    }
    const T eps_h = static_cast<T>(s_.vorticity) / inv_h_;
    const T ba = static_cast<T>(s_.buoyancy_a), bb = static_cast<T>(s_.buoyancy_b), amb = static_cast<T>(s_.ambient);
    const T* temp = temperature_ ? t_.data() : nullptr;
    if (mask())
      forces_kernel<T, true><<<interior(), block_, 0, stream_>>>(u_.data(), v_.data(), ptr(wabs_), d_.data(), temp,
                                                                   fu_.data(), fv_.data(), code, rows, geo_, inv_h_, eps_h,
                                                                   vort_, buoy_, ba, bb, amb);
    else
      forces_kernel<T, false><<<interior(), block_, 0, stream_>>>(u_.data(), v_.data(), ptr(wabs_), d_.data(), temp,
                                                                    fu_.data(), fv_.data(), code, rows, geo_, inv_h_, eps_h,
                                                                    vort_, buoy_, ba, bb, amb);
    NUMPIPE_CUDA_CHECK_LAUNCH();
  }

  // The step of scene_cpu.cpp, operation by operation.
  void enqueue_step() {
    const long long cells = static_cast<long long>(cells_);
    react();
    const bool forced = vort_ || buoy_;
    if (forced) forces();
    add_source_kernel<T><<<stream_blocks(), kThreads, 0, stream_>>>(u_.data(), u0_.data(), v_.data(), v0_.data(), dt_, cells);
    NUMPIPE_CUDA_CHECK_LAUNCH();
    add_interior(u_.data(), ptr(src_[1]), vort_ ? fu_.data() : nullptr);
    add_interior(v_.data(), ptr(src_[2]), forced ? fv_.data() : nullptr);
    diffuse(kSceneU, u0_.data(), u_.data(), p_.visc);
    diffuse(kSceneV, v0_.data(), v_.data(), p_.visc);
    project(u0_.data(), v0_.data(), u_.data(), v_.data());
    advect(u0_.data(), v0_.data(), u_.data(), u0_.data(), v_.data(), v0_.data());
    set_bnd(kSceneU, u_.data());
    set_bnd(kSceneV, v_.data());
    project(u_.data(), v_.data(), u0_.data(), v0_.data());
    add_source_kernel<T><<<stream_blocks(), kThreads, 0, stream_>>>(d_.data(), d0_.data(), nullptr, nullptr, dt_, cells);
    NUMPIPE_CUDA_CHECK_LAUNCH();
    add_interior(d_.data(), ptr(src_[0]), nullptr);
    diffuse(kSceneScalar, d0_.data(), d_.data(), p_.diff);
    advect_scalar(d_.data(), d0_.data(), T(0));
    if (temperature_) {
      const T amb = static_cast<T>(s_.ambient);
      add_interior(t_.data(), ptr(src_[3]), nullptr);
      diffuse(kSceneScalar, t0_.data(), t_.data(), p_.diff, amb);
      advect_scalar(t_.data(), t0_.data(), amb);
    }
  }
};

}  // namespace

template <class T>
std::unique_ptr<SceneSolver<T>> make_scene_cuda_solver(const Params& p, const Scene& s, const SceneFields<T>& init,
                                                      int device) {
  if (tuning_from_environment().scene_tiles && scene_fits_tiles(s, init)) return make_scene_tiled_solver<T>(p, s, init, device);
  return std::make_unique<SceneCudaSolver<T>>(p, s, init, device);
}
template std::unique_ptr<SceneSolver<float>> make_scene_cuda_solver(const Params&, const Scene&,
                                                                    const SceneFields<float>&, int);
template std::unique_ptr<SceneSolver<double>> make_scene_cuda_solver(const Params&, const Scene&,
                                                                     const SceneFields<double>&, int);

}  // namespace numpipe::fluid
