#pragma once
// ns-step, CUDA backend. One fused kernel per RK sub-step: every thread owns one
// (j, k) column of a 32 x 8 or 32 x 16 tile and marches along x (the seed's 2.5-D
// scheme): the five x-planes of its stencil live in registers and the current plane
// with a two-point halo in j and k in shared memory. The register kernels (--kernel
// 0-3, 5) load the next planes one iteration ahead into registers; the ring kernels
// (6, 7; the fp64 default) copy whole planes with their halos and Q into a ring of
// shared-memory planes by cp.async and write the ghost layers of their output too.
// The kernel reads Phi (with ghosts) and Q and writes Q and Phi into a second buffer:
// 128 bytes per point in fp64, the issue's floor. Otherwise (and under MPI) the
// ghost layers are filled by a small kernel before each sub-step. Diagnostics sum per
// (i, j) line in a fixed order (no atomics), so runs repeat bit for bit.
#include <cub/device/device_reduce.cuh>
#include <cuda_pipeline.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>
#include <memory>
#include <vector>

#include "bodies.hpp"
#include "common/cuda_check.hpp"
#include "common/cuda_stream.hpp"
#include "common/device_array.hpp"
#include "common/host_array.hpp"
#include "common/staging.hpp"
#include "common/workers.hpp"
#include "decomp.hpp"
#include "cuda_substep.hpp"  // the sub-step kernels: declared here, compiled in cuda_substep_*.cu
#include "ns.hpp"
#include "cuda_run.hpp"

namespace numpipe::ns {
namespace {

using namespace substep;  // the sub-step kernels' arguments and launches (cuda_substep.hpp)


// One face ghost point of AXIS: with the axis a compile-time constant every index into
// the geometry is too, so nothing is copied to local memory (with a run-time axis the
// kernel held a 152-byte stack frame).
template <class T, int AXIS>
__device__ __forceinline__ void ghost_point(const Geometry& g, T* const* p, long long e) {
  constexpr int b = AXIS == 0 ? 1 : 0, c = AXIS == 2 ? 1 : 2;
  const int w = int(e % g.n[c]);
  e /= g.n[c];
  const int layer = int(e % kGhost) + 1;
  e /= kGhost;
  const int u = int(e % g.n[b]);
  const int side = int(e / g.n[b]);
  fill_ghost_point(g, p, AXIS, side, layer, u, w);
}

template <class T>
__global__ void ghost_kernel(Geometry g, Ptrs<T> f, long long m0, long long m1, long long total) {
  const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= total) return;
  T* p[kVars] = {f.v[0], f.v[1], f.v[2], f.v[3]};
  if (idx < m0) ghost_point<T, 0>(g, p, idx);
  else if (idx < m0 + m1) ghost_point<T, 1>(g, p, idx - m0);
  else ghost_point<T, 2>(g, p, idx - m0 - m1);
}

// The forces' parts: one per surface crossing (model.hpp crossing_force), summed on the host.
template <class T>
__global__ void force_kernel(Geometry g, Ptrs<T> f, const Crossing* __restrict__ xs, long long count, double c2, double nu,
                             double* out) {
  const long long x = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (x >= count) return;
  const T* p[kVars] = {f.v[0], f.v[1], f.v[2], f.v[3]};
  crossing_force<T>(g, p, xs[x], c2, nu, out + 3 * x);
}

// Derived fields of the block's interior (ghosts filled), C order over the block, in
// dst[d] for each requested d (null: not asked for).
struct DerivedOut {
  void* dst[kDerivedCount];
};
template <class T, int ORDER>
__global__ void derived_kernel(Geometry g, Ptrs<T> f, DevTables<T> tb, DerivedOut out) {
  const long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= g.points()) return;
  const int k = int(e % g.n[2]), j = int((e / g.n[2]) % g.n[1]), i = int(e / ((long long)g.n[2] * g.n[1]));
  const int what = tb.row_start ? ib_lookup(tb.row_start, tb.entries, i * g.n[1] + j, k) : kIbFluid;
  double d[kDerivedCount] = {0, 0, 0, 0, 0};
  if (what != kIbSolid) {
    const long long c = g.at(i, j, k);
    const long long str[3] = {g.si(), g.sj(), g.flat_z() ? 0 : 1};
    PointStencil<T> p;
    for (int ax = 0; ax < 3; ++ax)
      for (int v = 0; v < kVars; ++v)
        for (int o = 0; o < 5; ++o) p.s[ax][v][o] = f.v[v][c + (o - 2) * str[ax]];
    if (what >= 0) apply_ib(p, tb.points[what]);
    double d1s[3];
    for (int a = 0; a < 3; ++a) d1s[a] = ORDER == 4 ? 1.0 / (12.0 * g.h[a]) : 1.0 / (2.0 * g.h[a]);
    derived_point<ORDER>(p, d1s, d);
  }
  for (int x = 0; x < kDerivedCount; ++x)
    if (out.dst[x]) static_cast<T*>(out.dst[x])[e] = T(d[x]);
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

// Halo faces under MPI (model.hpp face_point): pack and unpack one face.
template <class T>
__global__ void pack_face_kernel(Geometry g, Ptrs<T> f, int axis, int side, T* buf, long long count) {
  const long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= count) return;
  int v;
  const long long at = face_point(g, axis, side, false, e, &v);
  buf[e] = f.v[v][at];
}

template <class T>
__global__ void unpack_face_kernel(Geometry g, Ptrs<T> f, int axis, int side, const T* buf, long long count) {
  const long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= count) return;
  int v;
  const long long at = face_point(g, axis, side, true, e, &v);
  f.v[v][at] = buf[e];
}

// Line sums and maxima of the diagnostics of one geometry (the block, or on rank 0
// under MPI the whole grid), finished on the host in a fixed order.
// The line sums and maxima of each x-plane i (its lines j in order), so that a
// diagnostics row copies n0 values per quantity to the host, not n0 n1 (the forces
// ride on the diagnostics' steps, which a wake's Strouhal number wants frequent).
__global__ void diag_planes_kernel(int n0, int n1, const double* sums, const double* mdiv, const double* msp, double* psums,
                                   double* pmdiv, double* pmsp) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n0) return;
  double s[kDiagSums] = {0, 0, 0}, md = 0, ms = 0;
  for (int j = 0; j < n1; ++j) {
    const long long l = (long long)i * n1 + j;
    for (int d = 0; d < kDiagSums; ++d) s[d] += sums[l * kDiagSums + d];
    if (mdiv[l] > md || mdiv[l] != mdiv[l]) md = mdiv[l];
    if (msp[l] > ms || msp[l] != msp[l]) ms = msp[l];
  }
  for (int d = 0; d < kDiagSums; ++d) psums[(long long)i * kDiagSums + d] = s[d];
  pmdiv[i] = md;
  pmsp[i] = ms;
}

struct DiagBuffers {
  std::size_t lines = 0, planes = 0;
  DeviceArray<double> sums, mdiv, msp, psums, pmdiv, pmsp;
  explicit DiagBuffers(const Geometry& g)
      : lines(static_cast<std::size_t>(g.n[0]) * g.n[1]), planes(static_cast<std::size_t>(g.n[0])), sums(lines * kDiagSums),
        mdiv(lines), msp(lines), psums(planes * kDiagSums), pmdiv(planes), pmsp(planes) {}
};

template <class T>
DiagRow device_diagnostics(const Geometry& g, const Params& p, int order, Ptrs<T> f, DiagBuffers& d, cudaStream_t s,
                           long long step, double t, double* speed) {
  const int threads = 128;
  const unsigned blocks = (unsigned)((d.lines + threads - 1) / threads);
  if (order == 4) diag_kernel<T, 4><<<blocks, threads, 0, s>>>(g, f, d.sums.data(), d.mdiv.data(), d.msp.data());
  else diag_kernel<T, 2><<<blocks, threads, 0, s>>>(g, f, d.sums.data(), d.mdiv.data(), d.msp.data());
  NUMPIPE_CUDA_CHECK_LAUNCH();
  diag_planes_kernel<<<(unsigned)((d.planes + 63) / 64), 64, 0, s>>>(g.n[0], g.n[1], d.sums.data(), d.mdiv.data(),
                                                                      d.msp.data(), d.psums.data(), d.pmdiv.data(),
                                                                      d.pmsp.data());
  NUMPIPE_CUDA_CHECK_LAUNCH();
  std::vector<double> sums(d.planes * kDiagSums), mdiv(d.planes), msp(d.planes);
  d.psums.copy_to_host(sums.data(), sums.size(), s);
  d.pmdiv.copy_to_host(mdiv.data(), mdiv.size(), s);
  d.pmsp.copy_to_host(msp.data(), msp.size(), s);
  NUMPIPE_CUDA_CHECK(cudaStreamSynchronize(s));
  double m = 0;
  for (double x : msp) m = std::max(m, x);
  *speed = m;
  return finish_diagnostics(g, p, step, t, sums, mdiv, msp);
}

// The layout conversions of the upload and download, on the device: interior values
// of one variable (C order, double, elements [first, first + count)) into the padded
// layout of T, with wall nodes where the variable is odd held at zero and, with
// bodies (row_start not null), solid nodes at rest (every variable but rho zero), as
// the host-staged upload does; and back.
template <class T>
__global__ void scatter_interior_kernel(Geometry g, int var, const double* piece, long long first, long long count,
                                        const int* row_start, const IbEntry* entries, T* dst) {
  const long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= count) return;
  const long long idx = first + e, row = idx / g.n[2];
  const int k = int(idx - row * g.n[2]), j = int(row % g.n[1]), i = int(row / g.n[1]);
  const bool at_rest = var != kRho && row_start && ib_lookup(row_start, entries, int(row), k) == kIbSolid;
  dst[g.at(i, j, k)] = pinned_point(g, i, j, k, var) || at_rest ? T(0) : T(piece[e]);
}

template <class T>
__global__ void gather_interior_kernel(Geometry g, const T* src, long long first, long long count, double* piece) {
  const long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= count) return;
  const long long idx = first + e, row = idx / g.n[2];
  const int k = int(idx - row * g.n[2]), j = int(row % g.n[1]), i = int(row / g.n[1]);
  piece[e] = double(src[g.at(i, j, k)]);
}

template <class T>
void launch_fill_ghosts(const Geometry& g, Ptrs<T> f, cudaStream_t s) {
  const long long m[3] = {2LL * kGhost * g.n[1] * g.n[2], 2LL * kGhost * g.n[0] * g.n[2],
                          g.flat_z() ? 0LL : 2LL * kGhost * g.n[0] * g.n[1]};
  const long long total = m[0] + m[1] + m[2];
  const int threads = 256;
  ghost_kernel<T><<<(unsigned)((total + threads - 1) / threads), threads, 0, s>>>(g, f, m[0], m[1], total);
  NUMPIPE_CUDA_CHECK_LAUNCH();
}

// One run on one device: the whole grid in one process, or under MPI this rank's
// block of the decomposition (decomp.hpp) with its halo faces exchanged before
// every sub-step: on one node, packed straight into the neighbour's device buffer
// (CUDA IPC) with a small MPI notice per face; across nodes, through a CUDA-aware
// MPI when the library reports one, else staged through pinned host buffers.
// With overlap (the default) the part of the block whose stencils read no halo
// ghost is updated on a second stream while the halos travel.
template <class T>
class CudaRun final : public Solver {
 public:
  ~CudaRun() override {
    close_ipc();
    for (auto& e : evs_) cudaEventDestroy(e);
    for (auto& e : eve_) cudaEventDestroy(e);
  }
  CudaRun(const CudaRun&) = delete;
  CudaRun& operator=(const CudaRun&) = delete;
  CudaRun(const Problem& pr, const RunOptions& o, std::unique_ptr<Decomposition> d)
      : pr_(pr), o_(o), device_(select_device(o.device)), p_(pr.params), own_(std::move(d)), d_(own_.get()),
        g_(d_ ? d_->block : make_geometry(pr.params)),
        diag_(g_) {
    NUMPIPE_CUDA_CHECK(cudaGetDeviceProperties(&prop_, o.device));
    ready_ = std::make_unique<CudaEvent>();
    done_ = std::make_unique<CudaEvent>();
    // blocking streams: ordered with the legacy default stream
    main_ = std::make_unique<CudaStream>(cudaStreamDefault);
    side_ = std::make_unique<CudaStream>(cudaStreamDefault);
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
    dmax_ = DeviceArray<double>(1);
    NUMPIPE_CUDA_CHECK(cub::DeviceReduce::Max(nullptr, temp_bytes_, diag_.msp.data(), dmax_.data(), (long long)diag_.lines));
    temp_ = DeviceArray<unsigned char>(std::max<std::size_t>(temp_bytes_, 1));
    const std::vector<double> kold = kolmogorov_table(g_, p_);
    const std::vector<T> kol(kold.begin(), kold.end());
    kol_ = DeviceArray<T>(kol.size());
    kol_.copy_from_host(kol.data(), kol.size());
    cf_ = make_coefs<T>(g_, o.order, p_.c, p_.re, p_.force, p_.kol_amp);
    if (p_.free_stream) {
      cf_.sponge = true;
      for (int c = 0; c < 3; ++c) cf_.target[kVx + c] = T(p_.stream[c]);
    }
    setup_tables();
    if (o.kernel < 0 || o.kernel > kMaxVariant)
      fail_input("--kernel must be 0 to " + std::to_string(kMaxVariant) + ", got " + std::to_string(o.kernel));
    // the default (4): the fastest measured on an H100 in this precision (bench/results.md,
    // "ns-step: planes through a shared-memory ring"): the ring in fp64; in fp32 the
    // register kernel with Q by cp.async and the separate ghost kernel (2-3% ahead there).
    // A 2-D problem (no z ghosts) takes the flat kernel, whatever was asked.
    variant_ = o.kernel == 4 ? (sizeof(T) == 8 ? 6 : 5) : o.kernel;
    if (g_.flat_z()) variant_ = kFlatVariant;
    // the ring kernels write the ghosts of their output in one process (measured 3-5%
    // faster than the ghost kernel with them; no gain with the register kernels)
    fuse_ = !d_ && is_ring(variant_);
    chunk_ = pick_chunk(variant_, o.chunk);
    whole_box_ = whole_box(g_);
    if (d_) setup_halos();
    start();
  }

  // The sponge's rates and the immersed-boundary tables on the device.
  void setup_tables() {
    const auto sig = sponge_tables(p_, g_);
    for (int a = 0; a < 3; ++a) {
      const std::vector<T> st(sig[a].begin(), sig[a].end());
      sigma_[a] = DeviceArray<T>(std::max<std::size_t>(st.size(), 1));
      sigma_[a].copy_from_host(st.data(), st.size());
      tb_.sigma[a] = sigma_[a].data();
    }
    tb_.row_start = nullptr;
    tb_.entries = nullptr;
    tb_.points = nullptr;
    tb_.qsite = nullptr;
    if (!pr_.bodies.any()) return;
    ib_ = build_ib_tables<T>(p_, pr_.bodies, g_);
    row_start_ = DeviceArray<int>(ib_.row_start.size());
    row_start_.copy_from_host(ib_.row_start.data(), ib_.row_start.size());
    entries_ = DeviceArray<IbEntry>(std::max<std::size_t>(ib_.entries.size(), 1));
    if (!ib_.entries.empty()) entries_.copy_from_host(ib_.entries.data(), ib_.entries.size());
    points_ = DeviceArray<IbPoint<T>>(std::max<std::size_t>(ib_.points.size(), 1));
    if (!ib_.points.empty()) points_.copy_from_host(ib_.points.data(), ib_.points.size());
    crossings_ = DeviceArray<Crossing>(std::max<std::size_t>(ib_.crossings.size(), 1));
    if (!ib_.crossings.empty()) crossings_.copy_from_host(ib_.crossings.data(), ib_.crossings.size());
    force_parts_ = DeviceArray<double>(std::max<std::size_t>(3 * ib_.crossings.size(), 1));
    std::vector<IbSite> sites;
    for (int i = 0; i < g_.n[0]; ++i)
      for (int j = 0; j < g_.n[1]; ++j) {
        const int r = i * g_.n[1] + j;
        for (int e = ib_.row_start[r]; e < ib_.row_start[r + 1]; ++e)
          for (int k = ib_.entries[e].k0; k < ib_.entries[e].k1; ++k) sites.push_back({i, j, k, ib_.entries[e].point});
      }
    site_count_ = static_cast<long long>(sites.size());
    sites_ = DeviceArray<IbSite>(std::max<std::size_t>(sites.size(), 1));
    if (!sites.empty()) sites_.copy_from_host(sites.data(), sites.size());
    qsite_ = DeviceArray<T>(std::max<std::size_t>(kVars * sites.size(), 1));
    NUMPIPE_CUDA_CHECK(cudaMemset(qsite_.data(), 0, qsite_.size() * sizeof(T)));
    tb_.qsite = qsite_.data();
    tb_.row_start = row_start_.data();
    tb_.entries = entries_.data();
    tb_.points = points_.data();
  }

  static bool is_ring(int variant) { return variant == 6 || variant == 7; }
  static int tile_rows(int variant) { return variant == 2 || variant == 5 || variant == 6 ? 16 : 8; }

  // chunk of x-planes per block. The ring kernels: 16 (measured on an H100 at 256^3 and
  // 512^3, fp64: 16 planes 58.2 / 60.6, 24 59.1 / 61.4, 32 60.1 / 62.5, 40 60.8 / 63.2
  // ps/point/sub-step). The register kernels: enough blocks to fill the device several
  // times over, at most 32 planes (kernel 5 at 512^3: 32 planes 67.8-68.0, 48 68.1, 64
  // 69.0; earlier, 256 planes per block ran 15% slower).
  int pick_chunk(int variant, int asked) const {
    int chunk = asked;
    if (chunk <= 0 && is_ring(variant)) chunk = 16;
    if (chunk <= 0) {
      const int tj = tile_rows(variant);
      const long long tiles = (long long)((g_.n[2] + kTK - 1) / kTK) * ((g_.n[1] + tj - 1) / tj);
      const long long want = 8LL * prop_.multiProcessorCount;
      const long long nchunks = std::max<long long>({1, (want + tiles - 1) / tiles, (g_.n[0] + 31) / 32});
      chunk = int(std::max<long long>(16, (g_.n[0] + nchunks - 1) / nchunks));
    }
    return std::min(chunk, g_.n[0]);
  }

  double next_dt() override {
    if (o_.dt <= 0 && steps_ > 0) {
      max_speed_now_ = max_speed(cur_);
      if (d_) max_speed_now_ = par::max_all(max_speed_now_);
    }
    return choose_dt(g_, p_, o_, max_speed_now_);
  }

  // per-step start and end events: host work between steps (dt, diagnostics) is not timed
  void step(double dt) override {
    const std::size_t s = evs_.size();
    HostTimerLike wall;
    evs_.emplace_back();
    eve_.emplace_back();
    NUMPIPE_CUDA_CHECK(cudaEventCreate(&evs_[s]));
    NUMPIPE_CUDA_CHECK(cudaEventCreate(&eve_[s]));
    NUMPIPE_CUDA_CHECK(cudaEventRecord(evs_[s], main()));
    for (int stage = 0; stage < 3; ++stage) {
      if (d_) substep_distributed(stage, T(dt), cur_, nxt_);
      else {
        if (!fuse_) launch_fill_ghosts<T>(g_, cur_, main());
        substep(whole_box_, stage, T(dt), cur_, nxt_, main());
        ib_step(stage, T(dt), cur_, nxt_, main());
      }
      std::swap(cur_, nxt_);
    }
    NUMPIPE_CUDA_CHECK(cudaEventRecord(eve_[s], main()));
    if (d_) {
      NUMPIPE_CUDA_CHECK(cudaEventSynchronize(eve_[s]));
      host_step_.push_back(wall.seconds());
      r_.exchange_seconds.push_back(exchange_step_);
      exchange_step_ = 0;
    }
    ++steps_;
    r_.dt_last = dt;
    r_.max_dt = std::max(r_.max_dt, dt);
    // the fused ghosts of cur were written by the last sub-step; a diagnostic or
    // snapshot step fills them again (the same values)
  }

  void diagnose(long long step, double t) override {
    r_.step = step;
    r_.t = t;
    diagnose();
  }

  const BlockFields& snapshot(long long step, double t) override {
    r_.step = step;
    r_.t = t;
    snapshot(cur_, nxt_, r_);
    return snap_;
  }

  // The steps whose end event has passed (the host runs ahead of the GPU;
  // cudaEventQuery does not wait, so no synchronisation is added).
  long long steps_finished(long long queued) override {
    while (reported_ < static_cast<std::size_t>(queued) && reported_ < eve_.size() &&
           cudaEventQuery(eve_[reported_]) == cudaSuccess)
      ++reported_;
    return static_cast<long long>(reported_);
  }

  Result finish(long long step, double t) override {
    Result& r = r_;
    r.step = step;
    r.t = t;
    // The result's host memory (page faults, zeroing) while the last steps run on the GPU:
    // resize leaves it untouched (HostVector), so its pages are touched here, on the io
    // threads (the download then runs at the ring's speed, about twice what it reaches
    // into fresh memory).
    if (!d_)
      for (int v = 0; v < kVars; ++v) {
        r.fields[v].resize(static_cast<std::size_t>(g_.points()));
        touch_pages(r.fields[v].data(), r.fields[v].size() * sizeof(double));
      }
    NUMPIPE_CUDA_CHECK(cudaDeviceSynchronize());
    for (std::size_t s = 0; s < evs_.size(); ++s) {
      float ms = 0;
      NUMPIPE_CUDA_CHECK(cudaEventElapsedTime(&ms, evs_[s], eve_[s]));
      // under MPI the slowest rank sets the pace: the step time is the largest over ranks
      r.step_seconds.push_back(d_ ? par::max_all(host_step_[s]) : ms * 1e-3);
      if (d_) r.exchange_seconds[s] = par::max_all(r.exchange_seconds[s]);
    }
    for (auto& e : evs_) cudaEventDestroy(e);
    for (auto& e : eve_) cudaEventDestroy(e);
    evs_.clear();
    eve_.clear();
    if (ipc_) {  // every rank is done writing into the others' buffers before any frees its own
      close_ipc();
      par::world().barrier();
    }
    HostTimerLike t0;
    for (int a = 0; a < 3; ++a) {
      r.block_offset[a] = g_.offset[a];
      r.block_n[a] = g_.n[a];
    }
    if (!d_) {
      download_staged(cur_, r);
      r.download_seconds = t0.seconds();
      return std::move(r_);
    }
    std::vector<T> mine = download_interior(cur_);
    const std::size_t n = static_cast<std::size_t>(g_.points());
    for (int v = 0; v < kVars; ++v) r.fields[v].assign(mine.begin() + v * n, mine.begin() + (v + 1) * n);
    r.download_seconds = t0.seconds();
    return std::move(r_);
  }

 private:
  // The input state on the device, the first diagnostics row and the stability estimate.
  void start() {
    r_.t = pr_.t0;
    r_.step = pr_.step0;
    if (d_) r_.halo_path = ipc_ ? "cuda-ipc" : gpu_aware_ ? "cuda-aware-mpi" : "host-staged";
    upload(r_);
    cur_ = a_;
    nxt_ = b_;
    diagnose();
    r_.stable_dt = stable_dt(g_, o_.order, max_speed_now_, p_.c, p_.re);
    // (made as the steps go: with --t-end and a CFL dt the count is known only at the end)
    const long long total = StepClock(step_plan(o_), pr_.t0, pr_.step0).total_steps();
    if (total > 0) {
      evs_.reserve(static_cast<std::size_t>(total));
      eve_.reserve(static_cast<std::size_t>(total));
    }
    // the ring kernels write the ghosts of their output: those of the input state once here
    if (fuse_) launch_fill_ghosts<T>(g_, cur_, main());
  }

  // A diagnostics row at r_'s step and time, and the forces on the bodies.
  void diagnose() {
    HostTimerLike t0;
    if (d_) {
      max_speed_now_ = par::max_all(diagnose_distributed(cur_, r_));
    } else {
      launch_fill_ghosts<T>(g_, cur_, main());
      r_.diag.push_back(device_diagnostics<T>(g_, p_, o_.order, cur_, diag_, main(), r_.step, r_.t, &max_speed_now_));
    }
    if (pr_.bodies.any()) {
      // the halos of cur (F1, F2 may lie there; the diagnostics exchanged them with whole lines)
      if (d_ && !lines_whole(*d_)) substep_distributed(0, T(0), cur_, nxt_, false);
      forces(cur_, r_);
    }
    r_.diag_seconds += t0.seconds();
  }

  struct HostTimerLike {
    std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
    double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); }
  };
  cudaStream_t main() const { return main_->get(); }

  // The forces on the bodies from the state f (ghosts and halos filled): every
  // crossing's part on the device, summed on the host in the global crossing order
  // (under MPI on rank 0 from every rank's parts), as the CPU does.
  void forces(Ptrs<T> f, Result& r) {
    const long long count = static_cast<long long>(ib_.crossings.size());
    std::vector<double> host(static_cast<std::size_t>(3 * count));
    if (count > 0) {
      const int threads = 128;
      force_kernel<T><<<(unsigned)((count + threads - 1) / threads), threads, 0, main()>>>(
          g_, f, crossings_.data(), count, p_.c * p_.c, 1.0 / p_.re, force_parts_.data());
      NUMPIPE_CUDA_CHECK_LAUNCH();
      force_parts_.copy_to_host(host.data(), host.size(), main());
    }
    NUMPIPE_CUDA_CHECK(cudaStreamSynchronize(main()));
    std::vector<ForcePart> parts(static_cast<std::size_t>(count));
    for (std::size_t x = 0; x < parts.size(); ++x) {
      parts[x].key = ib_.crossings[x].key;
      parts[x].body = ib_.crossings[x].body;
      parts[x].pad = 0;
      for (int c = 0; c < 3; ++c) parts[x].f[c] = host[3 * x + c];
    }
    ForceRow row;
    if (sum_force_parts(std::move(parts), d_ != nullptr, pr_.bodies.list.size(), r.t, row)) r.forces.push_back(std::move(row));
  }

  // The snapshot fields of the block into snap_ (every rank).
  void snapshot(Ptrs<T> cur, Ptrs<T> nxt, const Result& r) {
    const std::size_t n = static_cast<std::size_t>(g_.points());
    std::vector<T>& state = snap_state_;
    std::vector<std::vector<T>>& derived = snap_derived_;
    state.clear();
    derived.assign(o_.snapshot_fields.size(), {});
    bool need_state = false, need_derived = false;
    for (const std::string& name : o_.snapshot_fields) {
      bool is_var = false;
      for (int v = 0; v < kVars; ++v) is_var = is_var || name == kVarNames[v];
      need_state = need_state || is_var;
      need_derived = need_derived || !is_var;
    }
    if (need_state) state = download_interior(cur);
    if (need_derived) {
      if (d_) substep_distributed(0, T(0), cur, nxt, false);
      else launch_fill_ghosts<T>(g_, cur, main());
      DerivedOut out{};
      std::vector<DeviceArray<T>> dev;
      std::vector<int> which(o_.snapshot_fields.size(), -1);
      for (std::size_t f = 0; f < o_.snapshot_fields.size(); ++f)
        for (int x = 0; x < kDerivedCount; ++x)
          if (o_.snapshot_fields[f] == kDerivedNames[x] && !out.dst[x]) {
            dev.emplace_back(std::max<std::size_t>(n, 1));
            out.dst[x] = dev.back().data();
            which[f] = x;
          }
      const int threads = 128;
      const unsigned blocks = (unsigned)((n + threads - 1) / threads);
      if (n > 0) {
        if (o_.order == 4) derived_kernel<T, 4><<<blocks, threads, 0, main()>>>(g_, cur, tb_, out);
        else derived_kernel<T, 2><<<blocks, threads, 0, main()>>>(g_, cur, tb_, out);
        NUMPIPE_CUDA_CHECK_LAUNCH();
      }
      for (std::size_t f = 0; f < which.size(); ++f)
        if (which[f] >= 0) {
          derived[f].resize(n);
          NUMPIPE_CUDA_CHECK(cudaMemcpyAsync(derived[f].data(), out.dst[which[f]], n * sizeof(T), cudaMemcpyDeviceToHost, main()));
        }
      NUMPIPE_CUDA_CHECK(cudaStreamSynchronize(main()));
    }
    BlockFields& bf = snap_;
    bf = snapshot_of(g_, r.step, r.t, sizeof(T) == 4);
    for (std::size_t f = 0; f < o_.snapshot_fields.size(); ++f) {
      const std::string& name = o_.snapshot_fields[f];
      bf.names.push_back(name);
      const T* data = nullptr;
      for (int v = 0; v < kVars; ++v)
        if (name == kVarNames[v]) data = state.data() + v * n;
      if (!data) data = derived[f].data();
      bf.data.push_back(data);
    }
  }

  // One process: each variable's interior values stream to the device through the
  // pinned staging ring (common/staging.hpp) and a kernel puts each piece into the
  // padded layout while the next piece crosses the bus. Under MPI, the block's
  // values come through a padded pinned buffer filled on the host.
  void upload(Result& r) {
    HostTimerLike t0;
    if (!d_) {
      const std::size_t n = static_cast<std::size_t>(g_.points());
      for (int v = 0; v < kVars; ++v) {
        T* dst = bufa_[v].data();
        stream_to_device(pr_.fields[v].data(), n * sizeof(double), sizeof(double), main(),
                         [&](const void* piece, std::size_t offset, std::size_t length) {
                           const long long count = static_cast<long long>(length / sizeof(double));
                           scatter_interior_kernel<T><<<unsigned((count + 255) / 256), 256, 0, main()>>>(
                               g_, v, static_cast<const double*>(piece), static_cast<long long>(offset / sizeof(double)),
                               count, tb_.row_start, tb_.entries, dst);
                           NUMPIPE_CUDA_CHECK_LAUNCH();
                         });
      }
      r.upload_seconds = t0.seconds();
      return;
    }
    HostArray<T> host(static_cast<std::size_t>(g_.padded()), true);
    for (int v = 0; v < kVars; ++v) {
      std::fill(host.begin(), host.end(), T(0));
      const double* src = pr_.fields[v].data();
      for (int i = 0; i < g_.n[0]; ++i)
        for (int j = 0; j < g_.n[1]; ++j)
          for (int k = 0; k < g_.n[2]; ++k)
            host[g_.at(i, j, k)] = pinned_point(g_, i, j, k, v) ? T(0) : T(src[global_index(p_, g_, i, j, k)]);
      if (v != kRho && pr_.bodies.any())  // solid nodes: at rest
        for (int i = 0; i < g_.n[0]; ++i)
          for (int j = 0; j < g_.n[1]; ++j) {
            const int r = i * g_.n[1] + j;
            for (int e = ib_.row_start[r]; e < ib_.row_start[r + 1]; ++e)
              if (ib_.entries[e].point < 0)
                for (int k = ib_.entries[e].k0; k < ib_.entries[e].k1; ++k) host[g_.at(i, j, k)] = T(0);
          }
      bufa_[v].copy_from_host(host.data(), host.size(), main());
      NUMPIPE_CUDA_CHECK(cudaStreamSynchronize(main()));
    }
    r.upload_seconds = t0.seconds();
  }

  // One process: the interior values of each variable, gathered from the padded
  // layout on the device piece by piece and streamed into the result through the
  // pinned staging ring.
  void download_staged(Ptrs<T> f, Result& r) {
    const std::size_t n = static_cast<std::size_t>(g_.points());
    for (int v = 0; v < kVars; ++v) {
      r.fields[v].resize(n);  // done during the steps (run()): no work here
      const T* src = f.v[v];
      stream_from_device(r.fields[v].data(), n * sizeof(double), sizeof(double), main(),
                         [&](void* piece, std::size_t offset, std::size_t length) {
                           const long long count = static_cast<long long>(length / sizeof(double));
                           gather_interior_kernel<T><<<unsigned((count + 255) / 256), 256, 0, main()>>>(
                               g_, src, static_cast<long long>(offset / sizeof(double)), count, static_cast<double*>(piece));
                           NUMPIPE_CUDA_CHECK_LAUNCH();
                         });
    }
  }

  // The block's interior values, C order per variable, the variables concatenated.
  std::vector<T> download_interior(Ptrs<T> f) {
    HostArray<T> host(static_cast<std::size_t>(g_.padded()), true);
    const std::size_t n = static_cast<std::size_t>(g_.points());
    std::vector<T> out(n * kVars);
    for (int v = 0; v < kVars; ++v) {
      NUMPIPE_CUDA_CHECK(cudaMemcpyAsync(host.data(), f.v[v], host.size() * sizeof(T), cudaMemcpyDeviceToHost, main()));
      NUMPIPE_CUDA_CHECK(cudaStreamSynchronize(main()));
      T* dst = out.data() + v * n;
      for (int i = 0; i < g_.n[0]; ++i)
        for (int j = 0; j < g_.n[1]; ++j)
          for (int k = 0; k < g_.n[2]; ++k) *dst++ = host[g_.at(i, j, k)];
    }
    return out;
  }

  // The solid nodes and IB points (ib_kernel), after the sub-step kernels of the block.
  void ib_step(int stage, T dt, Ptrs<T> in, Ptrs<T> out, cudaStream_t s) {
    if (site_count_ == 0) return;
    const SubstepCall<T> c{g_, whole_box_, cf_, o_.order, stage, dt, kol_.data(), in, out, q_, chunk_, fuse_ && !d_, tb_, s};
    launch_ib_step(c, sites_.data(), site_count_);  // compiled in cuda_bodies_*.cu
  }

  void substep(const Box& box, int stage, T dt, Ptrs<T> in, Ptrs<T> out, cudaStream_t s) {
    if (box.empty()) return;
    const SubstepCall<T> c{g_, box, cf_, o_.order, stage, dt, kol_.data(), in, out, q_, chunk_, fuse_ && !d_, tb_, s};
    // the kernels of each variant are compiled in cuda_substep_*.cu
    switch (variant_) {
      case 0: launch_substep<T, 8, 2, false, false, 0>(c); break;
      case 1: launch_substep<T, 8, 2, true, false, 0>(c); break;
      case 2: launch_substep<T, 16, 1, true, false, 0>(c); break;
      case 5: launch_substep<T, 16, 1, true, true, 0>(c); break;
      // the ring one plane ahead (two or three planes ahead measured 5-10% slower)
      case 6: launch_substep<T, 16, 1, true, false, 1>(c); break;
      case 7: launch_substep<T, 8, 2, true, false, 1>(c); break;
      case kFlatVariant: launch_substep_flat<T>(c); break;
      default: launch_substep<T, 8, 1, true, false, 0>(c); break;
    }
  }

  double max_speed(Ptrs<T> f) {
    const int threads = 128;
    speed_kernel<T><<<(unsigned)((diag_.lines + threads - 1) / threads), threads, 0, main()>>>(g_, f, diag_.msp.data());
    NUMPIPE_CUDA_CHECK_LAUNCH();
    std::size_t bytes = temp_bytes_;
    NUMPIPE_CUDA_CHECK(
        cub::DeviceReduce::Max(temp_.data(), bytes, diag_.msp.data(), dmax_.data(), (long long)diag_.lines, main()));
    double m = 0;
    dmax_.copy_to_host(&m, 1, main());
    NUMPIPE_CUDA_CHECK(cudaStreamSynchronize(main()));
    return m;
  }

  // ---- under MPI ----------------------------------------------------------------
  struct HaloFace {
    int axis, side;
    long long count;                   // values: kVars * kGhost * face points
    DeviceArray<T> dsend, drecv;
    HostArray<T> hsend, hrecv;         // pinned staging (empty when MPI is CUDA-aware)
    // CUDA IPC: two receive buffers used in turn, and the neighbour's two receive
    // buffers for this rank's face (opened from its IPC handles)
    DeviceArray<T> ipc_recv[2];
    T* ipc_remote[2] = {nullptr, nullptr};
    long long note = -1;               // the sub-step number the neighbour's notice names
  };
  struct IpcHandles {
    cudaIpcMemHandle_t h[2];
  };

  // Same-node ranks whose GPUs can reach each other (or share one) write their
  // faces straight into the neighbour's device buffers (CUDA IPC): no host
  // staging, one small MPI message per face to say the data is there.
  // NUMPIPE_MPI_IPC=0 turns it off. Every rank takes the same decision.
  bool use_ipc() const {
    const par::Group& w = par::world();
    bool ok = w.local_size() == w.size();
    ok = ok && o_.mpi_ipc;
    int n = 0;
    NUMPIPE_CUDA_CHECK(cudaGetDeviceCount(&n));
    for (int dev = 0; dev < n && ok; ++dev) {
      if (dev == o_.device) continue;
      int can = 0;
      NUMPIPE_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, o_.device, dev));
      ok = can != 0;
    }
    return par::all_ranks(ok);
  }

  void setup_ipc() {
    std::vector<IpcHandles> mine(faces_.size()), theirs(faces_.size());
    std::vector<par::Cart3::Face> msgs;
    for (std::size_t i = 0; i < faces_.size(); ++i) {
      HaloFace& f = *faces_[i];
      for (int b = 0; b < 2; ++b) {
        f.ipc_recv[b] = DeviceArray<T>(static_cast<std::size_t>(f.count));
        NUMPIPE_CUDA_CHECK(cudaMemset(f.ipc_recv[b].data(), 0, static_cast<std::size_t>(f.count) * sizeof(T)));
        NUMPIPE_CUDA_CHECK(cudaIpcGetMemHandle(&mine[i].h[b], f.ipc_recv[b].data()));
      }
      msgs.push_back({f.axis, f.side, &mine[i], &theirs[i], sizeof(IpcHandles)});
    }
    NUMPIPE_CUDA_CHECK(cudaDeviceSynchronize());
    d_->cart->exchange(msgs);
    for (std::size_t i = 0; i < faces_.size(); ++i)
      for (int b = 0; b < 2; ++b) {
        void* p = nullptr;
        NUMPIPE_CUDA_CHECK(cudaIpcOpenMemHandle(&p, theirs[i].h[b], cudaIpcMemLazyEnablePeerAccess));
        faces_[i]->ipc_remote[b] = static_cast<T*>(p);
      }
  }

  void close_ipc() {
    for (auto& f : faces_)
      for (T*& p : f->ipc_remote)
        if (p) {
          cudaIpcCloseMemHandle(p);
          p = nullptr;
        }
  }

  void setup_halos() {
    ipc_ = use_ipc();
    gpu_aware_ = !ipc_ && par::gpu_aware_mpi();
    overlap_ = o_.overlap;
    for (int axis = 0; axis < 3; ++axis)
      for (int side = 0; side < 2; ++side) {
        if ((side == 0 ? g_.lo[axis] : g_.hi[axis]) != Face::halo) continue;
        auto f = std::make_unique<HaloFace>();
        f->axis = axis;
        f->side = side;
        f->count = face_values(g_, axis);
        if (!ipc_) {
          f->dsend = DeviceArray<T>(static_cast<std::size_t>(f->count));
          f->drecv = DeviceArray<T>(static_cast<std::size_t>(f->count));
        }
        if (!ipc_ && !gpu_aware_) {
          f->hsend = HostArray<T>(static_cast<std::size_t>(f->count), true);
          f->hrecv = HostArray<T>(static_cast<std::size_t>(f->count), true);
        }
        faces_.push_back(std::move(f));
      }
    if (ipc_) setup_ipc();
    Box shell[6];
    const int count = overlap_boxes(g_, inner_, shell);
    shell_.assign(shell, shell + count);
  }

  // compute = false: the ghosts and halos of `in` only (for forces and derived fields)
  void substep_distributed(int stage, T dt, Ptrs<T> in, Ptrs<T> out, bool compute = true) {
    const int threads = 256;
    // boundary-rule ghosts (walls, a periodic axis held by one rank): the inner box may read them
    launch_fill_ghosts<T>(g_, in, main());
    const int parity = static_cast<int>(substep_count_ & 1);
    for (auto& f : faces_) {
      T* dst = ipc_ ? f->ipc_remote[parity] : f->dsend.data();
      pack_face_kernel<T><<<(unsigned)((f->count + threads - 1) / threads), threads, 0, main()>>>(g_, in, f->axis, f->side,
                                                                                                dst, f->count);
      NUMPIPE_CUDA_CHECK_LAUNCH();
    }
    if (overlap_ && compute) {
      NUMPIPE_CUDA_CHECK(cudaEventRecord(ready_->get(), main()));
      NUMPIPE_CUDA_CHECK(cudaStreamWaitEvent(side_->get(), ready_->get(), 0));
      substep(inner_, stage, dt, in, out, side_->get());
    }
    std::vector<par::Cart3::Face> msgs;
    for (auto& f : faces_) {
      const std::size_t bytes = static_cast<std::size_t>(f->count) * sizeof(T);
      if (ipc_) {
        // the face is in the neighbour's buffer once the pack kernel is done: say so
        msgs.push_back({f->axis, f->side, &substep_count_, &f->note, sizeof(long long)});
      } else if (gpu_aware_) {
        msgs.push_back({f->axis, f->side, f->dsend.data(), f->drecv.data(), bytes});
      } else {
        f->dsend.copy_to_host(f->hsend.data(), static_cast<std::size_t>(f->count), main());
        msgs.push_back({f->axis, f->side, f->hsend.data(), f->hrecv.data(), bytes});
      }
    }
    HostTimerLike wait;
    NUMPIPE_CUDA_CHECK(cudaStreamSynchronize(main()));
    d_->cart->exchange(msgs);
    exchange_step_ += wait.seconds();
    for (auto& f : faces_) {
      if (ipc_ && f->note != substep_count_)
        fail_internal("ns-step: halo notice for sub-step " + std::to_string(f->note) + " during sub-step " +
                      std::to_string(substep_count_));
      if (!ipc_ && !gpu_aware_) f->drecv.copy_from_host(f->hrecv.data(), static_cast<std::size_t>(f->count), main());
      const T* src = ipc_ ? f->ipc_recv[parity].data() : f->drecv.data();
      unpack_face_kernel<T><<<(unsigned)((f->count + threads - 1) / threads), threads, 0, main()>>>(g_, in, f->axis, f->side,
                                                                                                  src, f->count);
      NUMPIPE_CUDA_CHECK_LAUNCH();
    }
    ++substep_count_;
    if (!compute) return;
    if (overlap_) {
      for (const Box& b : shell_) substep(b, stage, dt, in, out, main());
      NUMPIPE_CUDA_CHECK(cudaEventRecord(done_->get(), side_->get()));
      NUMPIPE_CUDA_CHECK(cudaStreamWaitEvent(main(), done_->get(), 0));
    } else {
      substep(whole_box_, stage, dt, in, out, main());
    }
    ib_step(stage, dt, in, out, main());
  }

  // Rank 0 computes the row on the whole grid (gathered) with the one-process
  // kernels, so the diagnostics are the same bits for any rank count; returns
  // rank 0's max |v| (0 elsewhere).
  // With whole lines (z not split) every rank computes its lines' terms on the device
  // and rank 0 reduces them per plane and finishes the row in the one-process order
  // (device_diagnostics and diag_planes_kernel), so no state is gathered; else (--dims
  // splitting z) rank 0 computes the row on the gathered state.
  double diagnose_distributed(Ptrs<T> cur, Result& r) {
    if (lines_whole(*d_)) {
      substep_distributed(0, T(0), cur, cur, false);  // ghosts and halos of cur
      const int threads = 128;
      const unsigned blocks = (unsigned)((diag_.lines + threads - 1) / threads);
      if (diag_.lines > 0) {
        if (o_.order == 4) diag_kernel<T, 4><<<blocks, threads, 0, main()>>>(g_, cur, diag_.sums.data(), diag_.mdiv.data(), diag_.msp.data());
        else diag_kernel<T, 2><<<blocks, threads, 0, main()>>>(g_, cur, diag_.sums.data(), diag_.mdiv.data(), diag_.msp.data());
        NUMPIPE_CUDA_CHECK_LAUNCH();
      }
      LineTerms mine;
      mine.resize(diag_.lines);
      diag_.sums.copy_to_host(mine.sums.data(), mine.sums.size(), main());
      diag_.mdiv.copy_to_host(mine.mdiv.data(), mine.mdiv.size(), main());
      diag_.msp.copy_to_host(mine.msp.data(), mine.msp.size(), main());
      NUMPIPE_CUDA_CHECK(cudaStreamSynchronize(main()));
      LineTerms all = gather_lines(p_, *d_, mine);
      if (!par::world().is_root()) return 0;
      // diag_planes_kernel's order, on the host
      const std::size_t n0 = static_cast<std::size_t>(p_.n[0]), n1 = static_cast<std::size_t>(p_.n[1]);
      std::vector<double> ps(n0 * kDiagSums, 0.0), pd(n0, 0.0), pm(n0, 0.0);
      for (std::size_t i = 0; i < n0; ++i) {
        double sm[kDiagSums] = {0, 0, 0}, md = 0, ms = 0;
        for (std::size_t j = 0; j < n1; ++j) {
          const std::size_t l = i * n1 + j;
          for (int d = 0; d < kDiagSums; ++d) sm[d] += all.sums[l * kDiagSums + d];
          if (all.mdiv[l] > md || all.mdiv[l] != all.mdiv[l]) md = all.mdiv[l];
          if (all.msp[l] > ms || all.msp[l] != all.msp[l]) ms = all.msp[l];
        }
        for (int d = 0; d < kDiagSums; ++d) ps[i * kDiagSums + d] = sm[d];
        pd[i] = md;
        pm[i] = ms;
      }
      r.diag.push_back(finish_diagnostics(d_->whole, p_, r.step, r.t, ps, pd, pm));
      double m = 0;
      for (double x : pm) m = std::max(m, x);
      return m;
    }
    std::array<std::vector<T>, kVars> all = gather_blocks<T>(p_, *d_, download_interior(cur));
    if (!par::world().is_root()) return 0;
    const Geometry& w = d_->whole;
    const std::size_t padded = static_cast<std::size_t>(w.padded());
    if (!whole_diag_) {
      whole_diag_ = std::make_unique<DiagBuffers>(w);
      for (int v = 0; v < kVars; ++v) {
        whole_f_[v] = DeviceArray<T>(padded);
        whole_ptrs_.v[v] = whole_f_[v].data();
      }
    }
    HostArray<T> host(padded, true);
    for (int v = 0; v < kVars; ++v) {
      std::fill(host.begin(), host.end(), T(0));
      for (int i = 0; i < w.n[0]; ++i)
        for (int j = 0; j < w.n[1]; ++j)
          for (int k = 0; k < w.n[2]; ++k) host[w.at(i, j, k)] = all[v][(static_cast<std::size_t>(i) * w.n[1] + j) * w.n[2] + k];
      whole_f_[v].copy_from_host(host.data(), padded, main());
      NUMPIPE_CUDA_CHECK(cudaStreamSynchronize(main()));
    }
    launch_fill_ghosts<T>(w, whole_ptrs_, main());
    double speed = 0;
    r.diag.push_back(device_diagnostics<T>(w, p_, o_.order, whole_ptrs_, *whole_diag_, main(), r.step, r.t, &speed));
    return speed;
  }

  // before any member that allocates on the device
  static int select_device(int device) {
    NUMPIPE_CUDA_CHECK(cudaSetDevice(device));
    return device;
  }

  const Problem& pr_;
  RunOptions o_;
  int device_;
  Params p_;
  std::unique_ptr<Decomposition> own_;
  const Decomposition* d_;
  Geometry g_;
  DiagBuffers diag_;
  cudaDeviceProp prop_{};
  std::unique_ptr<CudaStream> main_, side_;
  DeviceArray<T> bufa_[kVars], bufb_[kVars], bufq_[kVars];
  Ptrs<T> a_{}, b_{}, q_{};
  DeviceArray<double> dmax_;
  DeviceArray<unsigned char> temp_;
  std::size_t temp_bytes_ = 0;
  DeviceArray<T> kol_;
  Coefs<T> cf_{};
  int chunk_ = 16;
  int variant_ = 6;
  bool fuse_ = false;  // one process, ring kernels: the sub-step kernel writes the ghosts of its output
  Box whole_box_{}, inner_{};
  std::vector<Box> shell_;
  std::vector<std::unique_ptr<HaloFace>> faces_;
  bool gpu_aware_ = false, overlap_ = true, ipc_ = false;
  long long substep_count_ = 0;
  double exchange_step_ = 0;
  std::unique_ptr<CudaEvent> ready_, done_;
  std::unique_ptr<DiagBuffers> whole_diag_;
  DeviceArray<T> whole_f_[kVars];
  Ptrs<T> whole_ptrs_{};
  IbTables<T> ib_;
  DeviceArray<T> sigma_[3];
  DeviceArray<int> row_start_;
  DeviceArray<IbEntry> entries_;
  DeviceArray<IbPoint<T>> points_;
  DeviceArray<Crossing> crossings_;
  DeviceArray<double> force_parts_;
  DeviceArray<IbSite> sites_;
  DeviceArray<T> qsite_;
  long long site_count_ = 0;
  DevTables<T> tb_{};
  // the run as it goes
  Result r_;
  Ptrs<T> cur_{}, nxt_{};
  long long steps_ = 0;
  double max_speed_now_ = 0;
  std::vector<cudaEvent_t> evs_, eve_;  // each step's start and end
  std::vector<double> host_step_;  // MPI: the host waits on every exchange, so a step's wall time is the measure
  std::size_t reported_ = 0;  // steps known finished, for the progress line
  BlockFields snap_;
  std::vector<T> snap_state_;
  std::vector<std::vector<T>> snap_derived_;
};

}  // namespace

// One precision's solver (cuda_run.hpp): instantiated in cuda_run_f32.cu and cuda_run_f64.cu.
template <class T>
std::unique_ptr<Solver> make_cuda_run(const Problem& pr, const RunOptions& o, std::unique_ptr<Decomposition> d) {
  return std::make_unique<CudaRun<T>>(pr, o, std::move(d));
}

}  // namespace numpipe::ns
