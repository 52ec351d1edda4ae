// The CUDA backend of fluid-step (spec/fluid.md). The state stays on the device
// for all steps; one step is captured once as a CUDA Graph and replayed.
//
// Per step: react's two maxima by CUB (cub::DeviceReduce::Reduce, max is exact
// so the result is order-free), its decision taken by a one-thread kernel on the
// device, the injection fused with add_source; each lin_solve as passes of up to
// K red-black iterations per pass over memory (tile_config) (temporal blocking in shared
// memory, below); project's divergence fused with its zero pressure and both
// set_bnd; advection of all fields by one velocity in one kernel.
//
// Temporal blocking: a block loads an extended tile (output tile plus a halo of
// 2 cells per fused iteration) of x into shared memory, split into its red and
// black planes (unit-stride, conflict-free half-sweeps), and its x0 into
// registers; it runs k iterations there, applying set_bnd's edges after each,
// and writes the output tile to the other buffer of a ping-pong pair. Cells at
// distance >= 2k from the extended tile's border are exact: each half-sweep can
// spoil only one more ring. The number of passes per solve is even, so the
// result lands in x. Red-black Gauss-Seidel does not depend on the order within
// a colour, so this computes the bits of the CPU backend (both are built without
// FMA contraction: --fmad=false here).
#include <cuda_runtime.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <cub/device/device_reduce.cuh>

#include "common/cuda_check.hpp"
#include "common/cuda_timer.hpp"
#include "common/device_array.hpp"
#include "fluid.hpp"

namespace numpipe::fluid {
namespace {

constexpr int kPairs = 64;         // threads in x; extended tile width 2*kPairs
constexpr int kExtW = 2 * kPairs;  // 128
constexpr int kThreadsY = 8;

template <class T, int K, int RPT>
__global__ void __launch_bounds__(kPairs* kThreadsY)
    rb_pass(const T* __restrict__ src, const T* __restrict__ x0, T* __restrict__ dst, int n, int k, T a, T cdiv,
            int b) {
  constexpr int kHalo = 2 * K, kTileX = kExtW - 2 * kHalo;
  constexpr int EH = kThreadsY * RPT, TY = EH - 2 * kHalo;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* sm = reinterpret_cast<T*>(smem_raw);  // [colour][EH][kPairs]
  const int tx = threadIdx.x, ty = threadIdx.y, w = n + 2;
  const int gx0 = static_cast<int>(blockIdx.x) * kTileX - kHalo;  // even
  const int gy0 = static_cast<int>(blockIdx.y) * TY - kHalo;
  T x0r0[RPT], x0r1[RPT];  // x0 at columns 2tx and 2tx+1 of the thread's rows

#pragma unroll
  for (int s = 0; s < RPT; ++s) {
    const int ly = ty + kThreadsY * s, gy = gy0 + ly;
#pragma unroll
    for (int q = 0; q < 2; ++q) {
      const int lx = 2 * tx + q, gx = gx0 + lx;
      const bool in = gx >= 0 && gx <= n + 1 && gy >= 0 && gy <= n + 1;
      const std::int64_t g = static_cast<std::int64_t>(gy) * w + gx;
      const T v = in ? src[g] : T(0);
      const T v0 = in ? x0[g] : T(0);
      const int colour = (lx + gy) & 1;
      sm[(colour * EH + ly) * kPairs + tx] = v;
      if (q == 0) x0r0[s] = v0;
      else x0r1[s] = v0;
    }
  }
  __syncthreads();
  const bool edge_block = gx0 <= 0 || gy0 <= 0 || gx0 + kExtW - 1 >= n + 1 || gy0 + EH - 1 >= n + 1;

  for (int it = 0; it < k; ++it) {
#pragma unroll
    for (int c = 0; c < 2; ++c) {
      const T* o = sm + (1 - c) * EH * kPairs;
#pragma unroll
      for (int s = 0; s < RPT; ++s) {
        const int ly = ty + kThreadsY * s, gy = gy0 + ly;
        const int p = (c + gy) & 1;
        const int lx = 2 * tx + p, gx = gx0 + lx;
        if (ly >= 1 && ly <= EH - 2 && lx >= 1 && lx <= kExtW - 2 && gx >= 1 && gx <= n && gy >= 1 && gy <= n) {
          const T l = o[ly * kPairs + tx - 1 + p];
          const T r = o[ly * kPairs + tx + p];
          const T d = o[(ly - 1) * kPairs + tx];
          const T u = o[(ly + 1) * kPairs + tx];
          const T xv = p ? x0r1[s] : x0r0[s];
          sm[(c * EH + ly) * kPairs + tx] = gs_cell(xv, l, r, d, u, a, cdiv);
        }
      }
      __syncthreads();
    }
    if (edge_block) {  // set_bnd's edges (not the corners) from the new interior
#pragma unroll
      for (int s = 0; s < RPT; ++s) {
        const int ly = ty + kThreadsY * s, gy = gy0 + ly;
#pragma unroll
        for (int q = 0; q < 2; ++q) {
          const int lx = 2 * tx + q, gx = gx0 + lx;
          int sx = lx, sy = ly;
          bool neg = false, edge = false;
          if ((gx == 0 || gx == n + 1) && gy >= 1 && gy <= n) {
            sx = gx == 0 ? lx + 1 : lx - 1;
            neg = b == kU;
            edge = true;
          } else if ((gy == 0 || gy == n + 1) && gx >= 1 && gx <= n) {
            sy = gy == 0 ? ly + 1 : ly - 1;
            neg = b == kV;
            edge = true;
          }
          if (edge && sx >= 0 && sx < kExtW && sy >= 0 && sy < EH) {
            const int colour = (lx + gy) & 1;
            const T v = sm[((1 - colour) * EH + sy) * kPairs + (sx >> 1)];
            sm[(colour * EH + ly) * kPairs + tx] = neg ? -v : v;
          }
        }
      }
      __syncthreads();
    }
  }

#pragma unroll
  for (int s = 0; s < RPT; ++s) {
    const int ly = ty + kThreadsY * s, gy = gy0 + ly;
    if (ly < kHalo || ly >= kHalo + TY || gy > n + 1) continue;
#pragma unroll
    for (int q = 0; q < 2; ++q) {
      const int lx = 2 * tx + q, gx = gx0 + lx;
      if (lx < kHalo || lx >= kHalo + kTileX || gx > n + 1) continue;
      const int colour = (lx + gy) & 1;
      dst[static_cast<std::int64_t>(gy) * w + gx] = sm[(colour * EH + ly) * kPairs + tx];
    }
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

template <class T>
struct SpeedSq {
  const T* u;
  const T* v;
  __host__ __device__ T operator()(long long i) const { return u[i] * u[i] + v[i] * v[i]; }
};
template <class T>
struct MaxOp {
  __host__ __device__ T operator()(T x, T y) const { return y > x ? y : x; }
};

// react's decision, on the device: flags[0] velocity, flags[1] density.
template <class T>
__global__ void react_decide(const T* maxima, int* flags, long long* counters, int forcing_react) {
  if (threadIdx.x == 0 && blockIdx.x == 0) {
    const int fv = forcing_react && maxima[0] < T(kReactVelocityThreshold);
    const int fd = forcing_react && maxima[1] < T(kReactDensityThreshold);
    flags[0] = fv;
    flags[1] = fd;
    counters[0] += 1;
    counters[1] += fv;
    counters[2] += fd;
  }
}

// react's zeroing and injection into d0, u0, v0, fused with add_source of all three
// fields (x += dt*s, written only where it changes the bits).
template <class T>
__global__ void react_inject(T* d, T* u, T* v, T* d0, T* u0, T* v0, const int* flags, int n, T dt, T force,
                             T source) {
  const int x = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int y = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
  if (x > n + 1 || y > n + 1) return;
  const std::int64_t i = ix(x, y, n + 2);
  const bool centre = x == n / 2 && y == n / 2;
  const bool lattice = x % kReactLattice == 0 && y % kReactLattice == 0 && x >= kReactLattice && x < n &&
                       y >= kReactLattice && y < n;
  T sd = 0, su = 0, sv = 0;
  if (flags[0]) {
    if (lattice) {
      su = react_lattice_velocity(force, n, y);
      sv = react_lattice_velocity(force, n, x);
    } else if (centre) {
      su = sv = react_centre(force);
    }
  }
  if (flags[1]) {
    if (lattice) sd = react_lattice_density(source);
    else if (centre) sd = react_centre(source);
  }
  d0[i] = sd;
  u0[i] = su;
  v0[i] = sv;
  auto add = [&](T* f, T s) {
    const T old = f[i], nv = old + dt * s;
    if (!(nv == old) || signbit(nv) != signbit(old)) f[i] = nv;
  };
  add(d, sd);
  add(u, su);
  add(v, sv);
}

// project, first half: div inside and its set_bnd(0) copies, p = 0 everywhere.
template <class T>
__global__ void project_begin(const T* u, const T* v, T* p, T* div, int n) {
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
  p[ix(x, y, w)] = T(0);
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

template <class T>
class CudaSolver final : public Solver<T> {
 public:
  CudaSolver(const Params& p, const Fields<T>& init, int device) : p_(p), n_(p.n) {
    NUMPIPE_CUDA_CHECK(cudaSetDevice(device));
    NUMPIPE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    cells_ = init.cells();
    const std::vector<T>* src[6] = {&init.d, &init.u, &init.v, &init.d0, &init.u0, &init.v0};
    for (int k = 0; k < 6; ++k) {
      buf_[k] = DeviceArray<T>(cells_);
      buf_[k].copy_from_host(src[k]->data(), cells_, stream_);
    }
    scratch_ = DeviceArray<T>(cells_);
    NUMPIPE_CUDA_CHECK(cudaMemsetAsync(scratch_.data(), 0, cells_ * sizeof(T), stream_));
    maxima_ = DeviceArray<T>(2);
    flags_ = DeviceArray<int>(2);
    counters_ = DeviceArray<long long>(3);
    NUMPIPE_CUDA_CHECK(cudaMemsetAsync(counters_.data(), 0, 3 * sizeof(long long), stream_));
    SpeedSq<T> sq{buf_[4].data(), buf_[5].data()};
    auto it = thrust::make_transform_iterator(thrust::counting_iterator<long long>(0), sq);
    std::size_t b1 = 0, b2 = 0;
    NUMPIPE_CUDA_CHECK(cub::DeviceReduce::Reduce(nullptr, b1, it, maxima_.data(), static_cast<long long>(cells_),
                                                 MaxOp<T>{}, T(-INFINITY), stream_));
    NUMPIPE_CUDA_CHECK(cub::DeviceReduce::Reduce(nullptr, b2, buf_[3].data(), maxima_.data() + 1,
                                                 static_cast<long long>(cells_), MaxOp<T>{}, T(-INFINITY), stream_));
    temp_bytes_ = std::max(b1, b2);
    temp_ = DeviceArray<unsigned char>(std::max<std::size_t>(temp_bytes_, 1));
    select_tile();
    NUMPIPE_CUDA_CHECK(cudaStreamSynchronize(stream_));
    use_graph_ = std::getenv("NUMPIPE_FLUID_NO_GRAPH") == nullptr;
  }
  ~CudaSolver() override {
    if (exec_) cudaGraphExecDestroy(exec_);
    if (stream_) cudaStreamDestroy(stream_);
  }

  double advance(int steps) override {
    if (steps <= 0) return 0;
    if (use_graph_ && !exec_) {
      cudaGraph_t graph = nullptr;
      NUMPIPE_CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
      enqueue_step();
      NUMPIPE_CUDA_CHECK(cudaStreamEndCapture(stream_, &graph));
      NUMPIPE_CUDA_CHECK(cudaGraphInstantiate(&exec_, graph, 0));
      NUMPIPE_CUDA_CHECK(cudaGraphDestroy(graph));
    }
    CudaEventTimer timer;
    timer.start(stream_);
    for (int s = 0; s < steps; ++s) {
      if (use_graph_) NUMPIPE_CUDA_CHECK(cudaGraphLaunch(exec_, stream_));
      else enqueue_step();
    }
    timer.stop(stream_);
    const double t = timer.seconds();
    NUMPIPE_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return t;
  }

  void fetch(Fields<T>& out) override {
    out.resize(n_);
    std::vector<T>* dst[6] = {&out.d, &out.u, &out.v, &out.d0, &out.u0, &out.v0};
    for (int k = 0; k < 6; ++k) buf_[k].copy_to_host(dst[k]->data(), cells_, stream_);
    NUMPIPE_CUDA_CHECK(cudaStreamSynchronize(stream_));
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
  DeviceArray<T> buf_[6];  // d, u, v, d0, u0, v0: fixed roles (the graph captures pointers)
  DeviceArray<T> scratch_;
  DeviceArray<T> maxima_;
  DeviceArray<int> flags_;
  DeviceArray<long long> counters_;
  DeviceArray<unsigned char> temp_;
  std::size_t temp_bytes_ = 0, smem_bytes_ = 0;
  cudaGraphExec_t exec_ = nullptr;
  bool use_graph_ = true;
  using PassKernel = void (*)(const T*, const T*, T*, int, int, T, T, int);
  PassKernel pass_ = nullptr;
  TileConfig tile_{5, 10};

  template <int K, int RPT>
  void use_tile() {
    tile_ = {K, RPT};
    pass_ = rb_pass<T, K, RPT>;
    smem_bytes_ = 2 * kThreadsY * RPT * kPairs * sizeof(T);
    NUMPIPE_CUDA_CHECK(cudaFuncSetAttribute(rb_pass<T, K, RPT>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(smem_bytes_)));
  }
  void select_tile() {
    const TileConfig t = tile_config(sizeof(T));
    if constexpr (sizeof(T) == 8) {
      use_tile<5, 6>();
    } else {
      if (t.k == 5 && t.rpt == 16) use_tile<5, 16>();
      else if (t.k == 10 && t.rpt == 16) use_tile<10, 16>();
      else if (t.k == 10 && t.rpt == 20) use_tile<10, 20>();
      else if (t.k == 10 && t.rpt == 24) use_tile<10, 24>();
      else use_tile<5, 10>();
    }
  }

  dim3 grid2(int cells_per_side) const {
    return dim3(static_cast<unsigned>((cells_per_side + 31) / 32), static_cast<unsigned>((cells_per_side + 7) / 8));
  }

  void set_bnd(int b, T* x) {
    set_bnd_kernel<T><<<(n_ + 1 + 255) / 256, 256, 0, stream_>>>(x, n_, b);
    NUMPIPE_CUDA_CHECK_LAUNCH();
  }

  void lin_solve(int b, T* x, const T* x0, T a, T c) {
    int passes = (p_.iters + tile_.k - 1) / tile_.k;
    if (passes % 2) ++passes;  // even: the result lands in x
    const int TX = kExtW - 4 * tile_.k, TY = kThreadsY * tile_.rpt - 4 * tile_.k;
    const dim3 grid(static_cast<unsigned>((n_ + 2 + TX - 1) / TX), static_cast<unsigned>((n_ + 2 + TY - 1) / TY));
    const dim3 block(kPairs, kThreadsY);
    T* from = x;
    T* to = scratch_.data();
    for (int q = 0; q < passes; ++q) {
      const int k = p_.iters / passes + (q < p_.iters % passes ? 1 : 0);
      pass_<<<grid, block, smem_bytes_, stream_>>>(from, x0, to, n_, k, a, c, b);
      NUMPIPE_CUDA_CHECK_LAUNCH();
      std::swap(from, to);
    }
    corners_kernel<T><<<1, 32, 0, stream_>>>(x, n_);
    NUMPIPE_CUDA_CHECK_LAUNCH();
  }

  void diffuse(int b, T* x, const T* x0, double k) {
    const T a = diffuse_a(T(p_.dt), T(k), n_);
    lin_solve(b, x, x0, a, T(1) + T(4) * a);
  }

  void project(T* u, T* v, T* p, T* div) {
    project_begin<T><<<grid2(n_ + 2), dim3(32, 8), 0, stream_>>>(u, v, p, div, n_);
    NUMPIPE_CUDA_CHECK_LAUNCH();
    lin_solve(kScalar, p, div, T(1), T(4));
    project_end<T><<<grid2(n_), dim3(32, 8), 0, stream_>>>(u, v, p, n_);
    NUMPIPE_CUDA_CHECK_LAUNCH();
    set_bnd(kU, u);
    set_bnd(kV, v);
  }

  void advect(const T* U, const T* V, T* o1, const T* q1, T* o2, const T* q2, T* o3, const T* q3) {
    advect_kernel<T><<<grid2(n_), dim3(32, 8), 0, stream_>>>(U, V, o1, q1, o2, q2, o3, q3, n_, T(p_.dt) * T(n_));
    NUMPIPE_CUDA_CHECK_LAUNCH();
  }

  void react() {
    T* d0 = buf_[3].data();
    SpeedSq<T> sq{buf_[4].data(), buf_[5].data()};
    auto it = thrust::make_transform_iterator(thrust::counting_iterator<long long>(0), sq);
    std::size_t bytes = temp_bytes_;
    NUMPIPE_CUDA_CHECK(cub::DeviceReduce::Reduce(temp_.data(), bytes, it, maxima_.data(), static_cast<long long>(cells_),
                                                 MaxOp<T>{}, T(-INFINITY), stream_));
    bytes = temp_bytes_;
    NUMPIPE_CUDA_CHECK(cub::DeviceReduce::Reduce(temp_.data(), bytes, d0, maxima_.data() + 1,
                                                 static_cast<long long>(cells_), MaxOp<T>{}, T(-INFINITY), stream_));
    react_decide<T><<<1, 32, 0, stream_>>>(maxima_.data(), flags_.data(), counters_.data(),
                                           p_.forcing == Forcing::react ? 1 : 0);
    NUMPIPE_CUDA_CHECK_LAUNCH();
    react_inject<T><<<grid2(n_ + 2), dim3(32, 8), 0, stream_>>>(buf_[0].data(), buf_[1].data(), buf_[2].data(), d0,
                                                                buf_[4].data(), buf_[5].data(), flags_.data(), n_,
                                                                T(p_.dt), T(p_.force), T(p_.source));
    NUMPIPE_CUDA_CHECK_LAUNCH();
  }

  void enqueue_step() {
    T *d = buf_[0].data(), *u = buf_[1].data(), *v = buf_[2].data();
    T *d0 = buf_[3].data(), *u0 = buf_[4].data(), *v0 = buf_[5].data();
    react();  // with add_source of d, u and v
    if (p_.scheme == Scheme::seed) {
      diffuse(kScalar, d0, d, p_.diff);
      diffuse(kU, u0, u, p_.visc);
      diffuse(kV, v0, v, p_.visc);
      project(u0, v0, u, v);
      advect(u0, v0, d, d0, u, u0, v, v0);
      set_bnd(kU, u);
      set_bnd(kV, v);
      project(u, v, u0, v0);
    } else {
      diffuse(kU, u0, u, p_.visc);
      diffuse(kV, v0, v, p_.visc);
      project(u0, v0, u, v);
      advect(u0, v0, u, u0, v, v0, nullptr, nullptr);
      set_bnd(kU, u);
      set_bnd(kV, v);
      project(u, v, u0, v0);
      diffuse(kScalar, d0, d, p_.diff);  // d's add_source was fused into react
      advect(u, v, d, d0, nullptr, nullptr, nullptr, nullptr);
      set_bnd(kScalar, d);
    }
  }
};

}  // namespace

// The tile of the temporally blocked passes: K iterations fused per pass (halo
// 2K), RPT rows per thread (extended tile 128 x 8*RPT). fp32 default chosen by
// bench/fluid, which times the others through NUMPIPE_FLUID_TILE=KxRPT.
TileConfig tile_config(int element_size) {
  if (element_size == 8) return {5, 6};
  if (const char* e = std::getenv("NUMPIPE_FLUID_TILE")) {
    const std::string v = e;
    if (v == "5x16") return {5, 16};
    if (v == "10x16") return {10, 16};
    if (v == "10x20") return {10, 20};
    if (v == "10x24") return {10, 24};
  }
  return {5, 10};
}

double cuda_pass_bytes_per_cell(int iters, int element_size) {
  const TileConfig t = tile_config(element_size);
  int passes = (iters + t.k - 1) / t.k;
  if (passes % 2) ++passes;
  const double ew = kExtW, eh = kThreadsY * t.rpt;
  const double halo = (ew * eh) / ((ew - 4 * t.k) * (eh - 4 * t.k));
  return passes * (2 * halo + 1);
}

template <class T>
std::unique_ptr<Solver<T>> make_cuda_solver(const Params& p, const Fields<T>& initial, int device) {
  return std::make_unique<CudaSolver<T>>(p, initial, device);
}
template std::unique_ptr<Solver<float>> make_cuda_solver(const Params&, const Fields<float>&, int);
template std::unique_ptr<Solver<double>> make_cuda_solver(const Params&, const Fields<double>&, int);

}  // namespace numpipe::fluid
