// ns-step, CUDA backend. One fused kernel per RK sub-step: every thread owns one
// (j, k) column of a 32 x 8 tile and marches along x (the seed's 2.5-D scheme):
// the five x-planes of its stencil live in registers, the current plane with a
// two-point halo in j and k lives in shared memory, and the next planes are loaded
// one iteration ahead. The kernel reads Phi (with ghosts) and Q and writes Q and
// Phi into a second buffer: 128 bytes per point in fp64, the issue's floor.
// The ghost layers are filled by a small kernel before each sub-step. Diagnostics
// sum per (i, j) line in a fixed order (no atomics), so runs repeat bit for bit.
#include <cub/device/device_reduce.cuh>

#include <algorithm>
#include <chrono>
#include <vector>

#include "common/cuda_check.hpp"
#include "common/device_array.hpp"
#include "common/host_array.hpp"
#include "ns.hpp"

namespace numpipe::ns {
namespace {

template <class T>
struct Ptrs {
  T* v[kVars];
};

constexpr int kTK = 32;  // tile columns along k (coalesced); rows along j are a template parameter

template <class T>
__global__ void ghost_kernel(Geometry g, Ptrs<T> f, long long m0, long long m1, long long total) {
  const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= total) return;
  int axis;
  long long e;
  if (idx < m0) axis = 0, e = idx;
  else if (idx < m0 + m1) axis = 1, e = idx - m0;
  else axis = 2, e = idx - m0 - m1;
  const int b = axis == 0 ? 1 : 0, c = axis == 2 ? 1 : 2;
  const int w = int(e % g.n[c]);
  e /= g.n[c];
  const int layer = int(e % kGhost) + 1;
  e /= kGhost;
  const int u = int(e % g.n[b]);
  const int side = int(e / g.n[b]);
  T* p[kVars] = {f.v[0], f.v[1], f.v[2], f.v[3]};
  fill_ghost_point(g, p, axis, side, layer, u, w);
}

// Variants (--kernel): TJ rows of 32 columns per block, MINB blocks per SM for the
// register budget (__launch_bounds__), LDG: read Phi through the read-only data path
// (Phi is not written by the kernel: the new values go to the other buffer).
template <bool LDG, class T>
__device__ __forceinline__ T load_in(const T* p) {
  if constexpr (LDG) return __ldg(p);
  else return *p;
}

template <class T, int ORDER, bool FIRST, int kTJ, int MINB, bool LDG>
__global__ void __launch_bounds__(kTK* kTJ, MINB)
    substep_kernel(Geometry g, Coefs<T> cf, T a, T b, T dt, const T* __restrict__ kol, Ptrs<T> in, Ptrs<T> out, Ptrs<T> q,
                   int chunk) {
  constexpr int SK = kTK + 4, SJ = kTJ + 4;
  // Two plane buffers used in turn: one barrier per plane (a buffer is rewritten two
  // iterations after it was read, with a barrier in between).
  __shared__ T sh[2][kVars][SJ][SK];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int k0 = blockIdx.x * kTK, j0 = blockIdx.y * kTJ;
  const int i0 = blockIdx.z * chunk;
  const int i1 = min(i0 + chunk, g.n[0]);
  const int j = j0 + ty, k = k0 + tx;
  const bool active = j < g.n[1] && k < g.n[2];
  const bool loadable = j < g.n[1] + kGhost && k < g.n[2] + kGhost;
  const long long si = g.si(), sj = g.sj();
  const long long col = (long long)(j + kGhost) * sj + (k + kGhost) + kGhost * si;  // at(0, j, k)

  // Halo duty: 4 rows of TK (j-halo) then TJ rows of 4 (k-halo).
  const int tid = ty * kTK + tx;
  int sr = 0, sc = 0;
  bool has_halo = false;
  if (tid < 4 * kTK) {
    const int r = tid / kTK;
    sr = r < 2 ? r : kTJ + r;
    sc = tid % kTK + 2;
    has_halo = true;
  } else if (tid < 4 * kTK + 4 * kTJ) {
    const int e = tid - 4 * kTK;
    sr = e / 4 + 2;
    const int cc = e % 4;
    sc = cc < 2 ? cc : kTK + cc;
    has_halo = true;
  }
  const int hj = j0 + sr - 2, hk = k0 + sc - 2;
  has_halo = has_halo && hj < g.n[1] + kGhost && hk < g.n[2] + kGhost;
  const long long hoff = (long long)(hj + kGhost) * sj + (hk + kGhost) + kGhost * si;

  T r[kVars][5], nxt[kVars], hal[kVars], qv[kVars];
#pragma unroll
  for (int v = 0; v < kVars; ++v) {
    nxt[v] = T(0);
    hal[v] = T(0);
    qv[v] = T(0);
#pragma unroll
    for (int o = 0; o < 5; ++o) r[v][o] = loadable && i0 < i1 ? load_in<LDG>(&in.v[v][col + (long long)(i0 + o - 2) * si]) : T(0);
    if (has_halo && i0 < i1) hal[v] = load_in<LDG>(&in.v[v][hoff + (long long)i0 * si]);
  }
  const T kj = active ? kol[j] : T(0);

  for (int i = i0; i < i1; ++i) {
    const long long c = col + (long long)i * si;
    T(*s)[SJ][SK] = sh[(i - i0) & 1];
#pragma unroll
    for (int v = 0; v < kVars; ++v) {
      if (loadable) s[v][ty + 2][tx + 2] = r[v][2];
      if (has_halo) s[v][sr][sc] = hal[v];
    }
    const bool more = i + 1 < i1;
#pragma unroll
    for (int v = 0; v < kVars; ++v) {
      if (loadable && more) nxt[v] = load_in<LDG>(&in.v[v][c + 3 * si]);
      if (has_halo && more) hal[v] = load_in<LDG>(&in.v[v][hoff + (long long)(i + 1) * si]);
      if (!FIRST && active) qv[v] = q.v[v][c];
    }
    __syncthreads();
    if (active) {
      PointStencil<T> p;
#pragma unroll
      for (int v = 0; v < kVars; ++v)
#pragma unroll
        for (int o = 0; o < 5; ++o) {
          p.s[0][v][o] = r[v][o];
          p.s[1][v][o] = s[v][ty + o][tx + 2];
          p.s[2][v][o] = s[v][ty + 2][tx + o];
        }
      T l[kVars];
      rhs<ORDER>(p, cf, kj, l);
#pragma unroll
      for (int v = 0; v < kVars; ++v) {
        T qn;
        if constexpr (FIRST) qn = dt * l[v];
        else qn = a * qv[v] + dt * l[v];
        T on = r[v][2] + b * qn;
        if (pinned_point(g, i, j, k, v)) qn = on = T(0);
        q.v[v][c] = qn;
        out.v[v][c] = on;
      }
    }
#pragma unroll
    for (int v = 0; v < kVars; ++v) {
#pragma unroll
      for (int o = 0; o < 4; ++o) r[v][o] = r[v][o + 1];
      r[v][4] = nxt[v];
    }
  }
}

template <class T, int ORDER>
__global__ void diag_kernel(Geometry g, Ptrs<T> f, double* sums, double* mdiv, double* msp) {
  const long long l = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (l >= (long long)g.n[0] * g.n[1]) return;
  const int i = int(l / g.n[1]), j = int(l % g.n[1]);
  double d1s[3];
  for (int a = 0; a < 3; ++a) d1s[a] = ORDER == 4 ? 1.0 / (12.0 * g.h[a]) : 1.0 / (2.0 * g.h[a]);
  const T* p[kVars] = {f.v[0], f.v[1], f.v[2], f.v[3]};
  diag_line<ORDER>(g, p, i, j, d1s, sums + l * kDiagSums, mdiv[l], msp[l]);
}

template <class T>
__global__ void speed_kernel(Geometry g, Ptrs<T> f, double* msp) {
  const long long l = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (l >= (long long)g.n[0] * g.n[1]) return;
  const int i = int(l / g.n[1]), j = int(l % g.n[1]);
  double m = 0;
  for (int k = 0; k < g.n[2]; ++k) {
    const long long c = g.at(i, j, k);
    const double vx = double(f.v[kVx][c]), vy = double(f.v[kVy][c]), vz = double(f.v[kVz][c]);
    m = fmax(m, sqrt(vx * vx + vy * vy + vz * vz));
  }
  msp[l] = m;
}

template <class T>
class CudaRun {
 public:
  CudaRun(const Problem& pr, const RunOptions& o) : pr_(pr), o_(o), p_(pr.params), g_(make_geometry(pr.params)) {
    NUMPIPE_CUDA_CHECK(cudaSetDevice(o.device));
    NUMPIPE_CUDA_CHECK(cudaGetDeviceProperties(&prop_, o.device));
    const std::size_t padded = static_cast<std::size_t>(g_.padded());
    for (int v = 0; v < kVars; ++v) {
      bufa_[v] = DeviceArray<T>(padded);
      bufb_[v] = DeviceArray<T>(padded);
      bufq_[v] = DeviceArray<T>(padded);
      NUMPIPE_CUDA_CHECK(cudaMemset(bufa_[v].data(), 0, padded * sizeof(T)));
      NUMPIPE_CUDA_CHECK(cudaMemset(bufb_[v].data(), 0, padded * sizeof(T)));
      NUMPIPE_CUDA_CHECK(cudaMemset(bufq_[v].data(), 0, padded * sizeof(T)));
      a_.v[v] = bufa_[v].data();
      b_.v[v] = bufb_[v].data();
      q_.v[v] = bufq_[v].data();
    }
    lines_ = static_cast<std::size_t>(g_.n[0]) * g_.n[1];
    sums_ = DeviceArray<double>(lines_ * kDiagSums);
    mdiv_ = DeviceArray<double>(lines_);
    msp_ = DeviceArray<double>(lines_);
    dmax_ = DeviceArray<double>(1);
    NUMPIPE_CUDA_CHECK(cub::DeviceReduce::Max(nullptr, temp_bytes_, msp_.data(), dmax_.data(), (long long)lines_));
    temp_ = DeviceArray<unsigned char>(std::max<std::size_t>(temp_bytes_, 1));
    const std::vector<double> kold = kolmogorov_table(g_, p_);
    const std::vector<T> kol(kold.begin(), kold.end());
    kol_ = DeviceArray<T>(kol.size());
    kol_.copy_from_host(kol.data(), kol.size());
    cf_ = make_coefs<T>(g_, o.order, p_.c, p_.re, p_.force, p_.kol_amp);
    // chunk of x-planes per block: enough blocks to fill the device several times over,
    // at most 64 planes (measured on an H100: 256 planes per block ran 15% slower)
    variant_ = o.kernel;
    if (variant_ < 0 || variant_ > 3) fail_input("--kernel must be 0, 1, 2 or 3, got " + std::to_string(variant_));
    const int tj = variant_ == 2 ? 16 : 8;
    const long long tiles = (long long)((g_.n[2] + kTK - 1) / kTK) * ((g_.n[1] + tj - 1) / tj);
    chunk_ = o.chunk;
    if (chunk_ <= 0) {
      const long long want = 8LL * prop_.multiProcessorCount;
      const long long nchunks = std::max<long long>({1, (want + tiles - 1) / tiles, (g_.n[0] + 63) / 64});
      chunk_ = int(std::max<long long>(16, (g_.n[0] + nchunks - 1) / nchunks));
    }
    chunk_ = std::min(chunk_, g_.n[0]);
  }

  void upload(Result& r) {
    cudaEvent_t e0, e1;
    NUMPIPE_CUDA_CHECK(cudaEventCreate(&e0));
    NUMPIPE_CUDA_CHECK(cudaEventCreate(&e1));
    HostArray<T> host(static_cast<std::size_t>(g_.padded()), true);
    NUMPIPE_CUDA_CHECK(cudaEventRecord(e0));
    for (int v = 0; v < kVars; ++v) {
      std::fill(host.begin(), host.end(), T(0));
      const double* src = pr_.fields[v].data();
      for (int i = 0; i < g_.n[0]; ++i)
        for (int j = 0; j < g_.n[1]; ++j)
          for (int k = 0; k < g_.n[2]; ++k)
            host[g_.at(i, j, k)] =
                pinned_point(g_, i, j, k, v) ? T(0) : T(src[(static_cast<std::size_t>(i) * g_.n[1] + j) * g_.n[2] + k]);
      bufa_[v].copy_from_host(host.data(), host.size());
      NUMPIPE_CUDA_CHECK(cudaStreamSynchronize(nullptr));
    }
    NUMPIPE_CUDA_CHECK(cudaEventRecord(e1));
    NUMPIPE_CUDA_CHECK(cudaEventSynchronize(e1));
    float ms = 0;
    NUMPIPE_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    r.upload_seconds = ms * 1e-3;
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
  }

  void fill_ghosts(Ptrs<T> f) {
    const long long m[3] = {2LL * kGhost * g_.n[1] * g_.n[2], 2LL * kGhost * g_.n[0] * g_.n[2], 2LL * kGhost * g_.n[0] * g_.n[1]};
    const long long total = m[0] + m[1] + m[2];
    const int threads = 256;
    ghost_kernel<T><<<(unsigned)((total + threads - 1) / threads), threads>>>(g_, f, m[0], m[1], total);
    NUMPIPE_CUDA_CHECK_LAUNCH();
  }

  template <int TJ, int MINB, bool LDG>
  void launch(int stage, T dt, Ptrs<T> in, Ptrs<T> out) {
    const dim3 block(kTK, TJ);
    const dim3 grid((g_.n[2] + kTK - 1) / kTK, (g_.n[1] + TJ - 1) / TJ, (g_.n[0] + chunk_ - 1) / chunk_);
    const T a = T(kRkA[stage]), b = T(kRkB[stage]);
    if (o_.order == 4) {
      if (stage == 0) substep_kernel<T, 4, true, TJ, MINB, LDG><<<grid, block>>>(g_, cf_, a, b, dt, kol_.data(), in, out, q_, chunk_);
      else substep_kernel<T, 4, false, TJ, MINB, LDG><<<grid, block>>>(g_, cf_, a, b, dt, kol_.data(), in, out, q_, chunk_);
    } else {
      if (stage == 0) substep_kernel<T, 2, true, TJ, MINB, LDG><<<grid, block>>>(g_, cf_, a, b, dt, kol_.data(), in, out, q_, chunk_);
      else substep_kernel<T, 2, false, TJ, MINB, LDG><<<grid, block>>>(g_, cf_, a, b, dt, kol_.data(), in, out, q_, chunk_);
    }
    NUMPIPE_CUDA_CHECK_LAUNCH();
  }

  void substep(int stage, T dt, Ptrs<T> in, Ptrs<T> out) {
    switch (variant_) {
      case 0: launch<8, 2, false>(stage, dt, in, out); break;
      case 1: launch<8, 2, true>(stage, dt, in, out); break;
      case 2: launch<16, 1, true>(stage, dt, in, out); break;
      default: launch<8, 1, true>(stage, dt, in, out); break;
    }
  }

  // Diagnostics of `f` (fills its ghosts); max |v| through *speed.
  DiagRow diagnostics(Ptrs<T> f, long long step, double t, double* speed) {
    fill_ghosts(f);
    const int threads = 128;
    const unsigned blocks = (unsigned)((lines_ + threads - 1) / threads);
    if (o_.order == 4) diag_kernel<T, 4><<<blocks, threads>>>(g_, f, sums_.data(), mdiv_.data(), msp_.data());
    else diag_kernel<T, 2><<<blocks, threads>>>(g_, f, sums_.data(), mdiv_.data(), msp_.data());
    NUMPIPE_CUDA_CHECK_LAUNCH();
    std::vector<double> sums(lines_ * kDiagSums), mdiv(lines_), msp(lines_);
    sums_.copy_to_host(sums.data(), sums.size());
    mdiv_.copy_to_host(mdiv.data(), mdiv.size());
    msp_.copy_to_host(msp.data(), msp.size());
    NUMPIPE_CUDA_CHECK(cudaStreamSynchronize(nullptr));
    double m = 0;
    for (double x : msp) m = std::max(m, x);
    *speed = m;
    return finish_diagnostics(g_, p_, step, t, sums, mdiv, msp);
  }

  double max_speed(Ptrs<T> f) {
    const int threads = 128;
    speed_kernel<T><<<(unsigned)((lines_ + threads - 1) / threads), threads>>>(g_, f, msp_.data());
    NUMPIPE_CUDA_CHECK_LAUNCH();
    std::size_t bytes = temp_bytes_;
    NUMPIPE_CUDA_CHECK(cub::DeviceReduce::Max(temp_.data(), bytes, msp_.data(), dmax_.data(), (long long)lines_));
    double m = 0;
    dmax_.copy_to_host(&m, 1);
    NUMPIPE_CUDA_CHECK(cudaStreamSynchronize(nullptr));
    return m;
  }

  Result run() {
    Result r;
    r.t = pr_.t0;
    r.step = pr_.step0;
    upload(r);
    Ptrs<T> cur = a_, nxt = b_;
    double max_speed_now = 0;
    auto diagnose = [&]() {
      HostTimerLike t0;
      r.diag.push_back(diagnostics(cur, r.step, r.t, &max_speed_now));
      r.diag_seconds += t0.seconds();
    };
    diagnose();
    r.stable_dt = stable_dt(g_, o_.order, max_speed_now, p_.c, p_.re);
    // per-step start and end events: host work between steps (dt, diagnostics) is not timed
    std::vector<cudaEvent_t> evs(static_cast<std::size_t>(o_.steps)), eve(static_cast<std::size_t>(o_.steps));
    for (auto& e : evs) NUMPIPE_CUDA_CHECK(cudaEventCreate(&e));
    for (auto& e : eve) NUMPIPE_CUDA_CHECK(cudaEventCreate(&e));
    for (int s = 0; s < o_.steps; ++s) {
      if (o_.dt <= 0 && s > 0) max_speed_now = max_speed(cur);
      const double dt = choose_dt(g_, p_, o_, max_speed_now);
      NUMPIPE_CUDA_CHECK(cudaEventRecord(evs[s]));
      for (int stage = 0; stage < 3; ++stage) {
        fill_ghosts(cur);
        substep(stage, T(dt), cur, nxt);
        std::swap(cur, nxt);
      }
      NUMPIPE_CUDA_CHECK(cudaEventRecord(eve[s]));
      r.t += dt;
      r.step += 1;
      r.dt_last = dt;
      r.max_dt = std::max(r.max_dt, dt);
      const bool last = s + 1 == o_.steps;
      if (last || (o_.diag_every > 0 && (s + 1) % o_.diag_every == 0)) diagnose();
    }
    NUMPIPE_CUDA_CHECK(cudaDeviceSynchronize());
    for (int s = 0; s < o_.steps; ++s) {
      float ms = 0;
      NUMPIPE_CUDA_CHECK(cudaEventElapsedTime(&ms, evs[s], eve[s]));
      r.step_seconds.push_back(ms * 1e-3);
    }
    for (auto& e : evs) cudaEventDestroy(e);
    for (auto& e : eve) cudaEventDestroy(e);
    // download the interior
    HostTimerLike t0;
    HostArray<T> host(static_cast<std::size_t>(g_.padded()), true);
    for (int v = 0; v < kVars; ++v) {
      DeviceArray<T>& src = cur.v[v] == bufa_[v].data() ? bufa_[v] : bufb_[v];
      src.copy_to_host(host.data(), host.size());
      NUMPIPE_CUDA_CHECK(cudaStreamSynchronize(nullptr));
      r.fields[v].resize(static_cast<std::size_t>(g_.points()));
      double* dst = r.fields[v].data();
      for (int i = 0; i < g_.n[0]; ++i)
        for (int j = 0; j < g_.n[1]; ++j)
          for (int k = 0; k < g_.n[2]; ++k)
            dst[(static_cast<std::size_t>(i) * g_.n[1] + j) * g_.n[2] + k] = double(host[g_.at(i, j, k)]);
    }
    r.download_seconds = t0.seconds();
    return r;
  }

 private:
  struct HostTimerLike {
    std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
    double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); }
  };
  const Problem& pr_;
  RunOptions o_;
  Params p_;
  Geometry g_;
  cudaDeviceProp prop_{};
  DeviceArray<T> bufa_[kVars], bufb_[kVars], bufq_[kVars];
  Ptrs<T> a_{}, b_{}, q_{};
  std::size_t lines_ = 0;
  DeviceArray<double> sums_, mdiv_, msp_, dmax_;
  DeviceArray<unsigned char> temp_;
  std::size_t temp_bytes_ = 0;
  DeviceArray<T> kol_;
  Coefs<T> cf_{};
  int chunk_ = 16;
  int variant_ = 2;
};

}  // namespace

Result solve_cuda(const Problem& pr, const RunOptions& o) {
  validate(pr, o);
  if (o.fp32) {
    CudaRun<float> run(pr, o);
    return run.run();
  }
  CudaRun<double> run(pr, o);
  return run.run();
}

}  // namespace numpipe::ns
