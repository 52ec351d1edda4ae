// integrate: the CUDA backend. Two plans:
//
// The table plan (constant rate, faithful scheme; table.hpp), all policies of all
// devices in a few launches:
//   table_kernel:  one block per eta point of a middle grid: the RK4 trajectory of
//                  Inner(eta, 0) in one thread (coefficients computed by the block),
//                  then the tails of every indicator cut in parallel: the table
//                  G_eta(n) = Inner(eta, k) for every k in use
//   points_kernel: r(t), muF(x + t), tau and the year at every class stage point
//   table_middle_kernel: one block per class stage point: the middle weights
//                  -gp(tau) h(eta, tau) once in shared memory, then one warp per
//                  Middle value (family) of the point: lanes take runs of middle
//                  steps reading Inner at the family's depth of the table,
//                  warp-shuffle tree sum (fixed order)
//   table_outer_kernel / table_outer_warp_kernel: one thread per policy (many
//                  policies) or one warp per policy (up to 4096; 32 steps' inputs
//                  loaded at once): the outer RK4 recurrence
// With several devices (--devices, a device may repeat) the table rows, the Middle
// values (by whole classes) and the policies are split into contiguous ranges; each
// device computes its rows and Middle values once and copies them to the others
// (peer copies), so no shared value is computed twice and the bits do not depend
// on the split. The result comes back through pinned staging buffers.
//
// The column plan (a yield curve, --align-breaks, or k h3 > 600), a generalisation
// of the seed's OuterPar:
//   inner_kernel:  one thread per (column, eta stage point): Inner(eta, k, t), the
//                  inner RK4 loop (all columns of all policies in one launch)
//   middle_kernel: one warp per Middle call (outer stage point of a policy): lanes
//                  take the middle steps in turn, warp-shuffle tree sum (fixed order)
//   outer_kernel:  one thread per policy: the outer RK4 recurrence
// Policies are split into contiguous ranges over the devices given, each range
// planned and solved on its own device; a policy's bits do not depend on the split.
// fp64 throughout, no atomics: the same bits run to run.
// This unit is the host side (plans, uploads, launches, the result); the kernels are
// compiled by family in units of their own, launched through cuda_kernels.hpp.
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "common/cuda_check.hpp"
#include "common/cuda_stream.hpp"
#include "common/cuda_timer.hpp"
#include "common/device.hpp"
#include "common/device_array.hpp"
#include "common/threads.hpp"
#include "cuda_kernels.hpp"
#include "integrate.hpp"
#include "table.hpp"
#include "tuning.hpp"

namespace numpipe::integrate {

namespace {

// Host blobs: arrays packed at 256-byte offsets, uploaded in one copy. The arrays
// are only noted when added and copied once by write() (into a pinned upload
// buffer: no staging copy); they must be alive and unchanged until then.
class Blob {
 public:
  template <class T, class A>
  std::size_t add(const std::vector<T, A>& v) {
    std::size_t off = (bytes_ + 255) / 256 * 256;
    parts_.push_back({off, v.data(), v.size() * sizeof(T)});
    bytes_ = off + v.size() * sizeof(T);
    return off;
  }
  std::size_t reserve(std::size_t bytes) {  // space on the device only (not uploaded)
    std::size_t off = (std::max(bytes_, device_) + 255) / 256 * 256;
    device_ = off + bytes;
    return off;
  }
  std::size_t upload_bytes() const { return bytes_; }
  std::size_t device_bytes() const { return std::max(bytes_, device_) + 256; }
  // The uploaded bytes into dst[0, upload_bytes()) (the gaps left unwritten).
  void write(char* dst) const {
    for (const Part& p : parts_)
      if (p.bytes > 0) std::memcpy(dst + p.off, p.src, p.bytes);
  }

 private:
  struct Part {
    std::size_t off;
    const void* src;
    std::size_t bytes;
  };
  std::vector<Part> parts_;
  std::size_t bytes_ = 0, device_ = 0;
};

// The basis's arrays (tables' forces, the marriage and spouse-age tables) packed
// in a blob; the views point into the blob's copy on a device.
struct BasisBlob {
  BasisViews host;
  std::vector<std::size_t> law_off, select_off, improve_q_off, improve_ai_off, improve_cum_off;
  std::size_t marriage_age = 0, marriage_prob = 0, age_diff = 0, age_density = 0;
  void pack(Blob& b, const Problem& pb) {
    host = basis_views(pb);
    for (const MortalityLaw& m : pb.laws) {
      law_off.push_back(m.table ? b.add(m.force) : 0);
      select_off.push_back(m.select_force.empty() ? 0 : b.add(m.select_force));
      improve_q_off.push_back(m.improve_q.empty() ? 0 : b.add(m.improve_q));
      improve_ai_off.push_back(m.improve_q.empty() ? 0 : b.add(m.improvement));
      improve_cum_off.push_back(m.improve_cum.empty() ? 0 : b.add(m.improve_cum));
    }
    if (pb.spouse.marriage_table) {
      marriage_age = b.add(pb.spouse.marriage_age);
      marriage_prob = b.add(pb.spouse.marriage_prob);
    }
    if (pb.spouse.age_table) {
      age_diff = b.add(pb.spouse.age_diff);
      age_density = b.add(pb.spouse.age_density);
    }
  }
  MortalityView law(std::size_t i, const char* base) const {
    MortalityView v = host.laws[i];
    if (v.table) v.mu = reinterpret_cast<const double*>(base + law_off[i]);
    if (v.select_mu) v.select_mu = reinterpret_cast<const double*>(base + select_off[i]);
    if (v.improve_q) {
      v.improve_q = reinterpret_cast<const double*>(base + improve_q_off[i]);
      v.improve_ai = reinterpret_cast<const double*>(base + improve_ai_off[i]);
      if (v.improve_cum) v.improve_cum = reinterpret_cast<const double*>(base + improve_cum_off[i]);
    }
    return v;
  }
  std::vector<MortalityView> laws(const char* base) const {
    std::vector<MortalityView> v;
    for (std::size_t i = 0; i < host.laws.size(); ++i) v.push_back(law(i, base));
    return v;
  }
  SpouseView spouse(const char* base) const {
    SpouseView v = host.spouse;
    auto at = [&](std::size_t off) { return reinterpret_cast<const double*>(base + off); };
    if (v.marriage_table) {
      v.marriage_age = at(marriage_age);
      v.marriage_prob = at(marriage_prob);
    }
    if (v.age_table) {
      v.age_diff = at(age_diff);
      v.age_density = at(age_density);
    }
    return v;
  }
};

template <class T>
DeviceArray<T> upload(const std::vector<T>& v, cudaStream_t s) {
  DeviceArray<T> d(v.empty() ? 1 : v.size());
  if (!v.empty()) d.copy_from_host(v.data(), v.size(), s);
  return d;
}

// A problem's basis on a device, uploaded on stream s: the packed arrays, the laws'
// views into them (d_laws) and the spouse assumptions. The host copy stays alive
// with it, until the stream has read it.
struct DeviceBasis {
  BasisBlob basis;
  std::vector<char> bytes;
  DeviceArray<char> d_bytes;
  DeviceArray<MortalityView> d_laws;
  DeviceBasis(const Problem& pb, cudaStream_t s) {
    Blob blob;
    basis.pack(blob, pb);
    d_bytes = DeviceArray<char>(blob.upload_bytes() + 256);
    bytes.resize(blob.upload_bytes());
    blob.write(bytes.data());
    if (!bytes.empty()) d_bytes.copy_from_host(bytes.data(), bytes.size(), s);
    d_laws = upload(basis.laws(d_bytes.data()), s);
  }
  SpouseView spouse() const { return basis.spouse(d_bytes.data()); }
};

// Solves policies [first, last) on one device; writes their rows of `reserve`.
void solve_range(const Problem& pb, std::size_t first, std::size_t last, int device, const std::string& dev,
                 double* reserve, double* premium, PhaseLog& log, Result& counts) {
  NUMPIPE_CUDA_CHECK(cudaSetDevice(device));
  HostTimer plan_timer;
  Plan plan = make_plan(pb, first, last);
  log.add("plan", plan_timer.seconds());
  counts.inner_steps += plan.inner_steps;
  counts.inner_steps_unshared += plan.inner_steps_unshared;
  counts.columns += plan.columns();
  counts.requests += plan.requests();

  CudaStream stream;
  const cudaStream_t s = stream.get();
  CudaEventTimer t_up, t_inner, t_middle, t_outer, t_down;

  std::vector<Policy> pols(pb.policies.begin() + first, pb.policies.begin() + last);
  t_up.start(s);
  auto d_col_off = upload(plan.column_offset, s);
  auto d_col_k = upload(plan.column_k, s);
  auto d_col_t = upload(plan.column_t, s);
  auto d_col_h3 = upload(plan.column_h3, s);
  auto d_col_grid = upload(plan.column_grid, s);
  auto d_grid_off = upload(plan.grid_offset, s);
  auto d_grid_eta = upload(plan.grid_eta, s);
  auto d_grid_h = upload(plan.grid_h, s);
  auto d_req_tau = upload(plan.request_tau, s);
  auto d_req_col = upload(plan.request_column, s);
  auto d_out_off = upload(plan.outer_offset, s);
  auto d_out_t = upload(plan.outer_t, s);
  auto d_out_h = upload(plan.outer_h, s);
  auto d_out_year = upload(plan.outer_year, s);
  auto d_pol = upload(pols, s);
  auto d_knots = upload(plan.rate.knots, s);
  auto d_alpha = upload(plan.rate.alpha, s);
  auto d_beta = upload(plan.rate.beta, s);
  auto d_col_law = upload(plan.column_law, s);
  const DeviceBasis basis(pb, s);
  const MortalityView* d_laws_data = basis.d_laws.data();
  const SpouseView sv = basis.spouse();
  t_up.stop(s);
  RateView rv = plan.rate.view();
  rv.knots = d_knots.data();
  rv.alpha = d_alpha.data();
  rv.beta = d_beta.data();

  gpu::DevicePlan dp{d_col_off.data(),  d_col_k.data(),    d_col_t.data(),    d_col_h3.data(),
                d_col_grid.data(), d_grid_off.data(), d_grid_eta.data(), d_grid_h.data(),
                d_col_law.data(),  static_cast<std::int64_t>(plan.columns()), plan.align};
  std::int64_t items = static_cast<std::int64_t>(plan.inner_values());
  std::int64_t requests = static_cast<std::int64_t>(plan.requests());
  std::int64_t npol = static_cast<std::int64_t>(plan.policies);
  DeviceArray<double> d_inner(items > 0 ? items : 1), d_middle(requests > 0 ? requests : 1),
      d_reserve(npol * kYears > 0 ? npol * kYears : 1), d_premium(npol > 0 ? npol : 1);

  t_inner.start(s);
  if (items > 0) {
    gpu::launch_inner(dp, rv, d_laws_data, items, d_inner.data(), s);
  }
  t_inner.stop(s);
  t_middle.start(s);
  if (requests > 0) {
    gpu::launch_middle(dp, sv, d_req_tau.data(), d_req_col.data(), requests, d_inner.data(), d_middle.data(), s);
  }
  t_middle.stop(s);
  t_outer.start(s);
  if (npol > 0) {
    gpu::launch_outer(d_pol.data(), npol, rv, d_laws_data, plan.align, d_out_off.data(), d_out_t.data(), d_out_h.data(),
                      d_out_year.data(), d_middle.data(), d_reserve.data(), d_premium.data(), s);
  }
  t_outer.stop(s);
  t_down.start(s);
  if (npol > 0) d_reserve.copy_to_host(reserve, static_cast<std::size_t>(npol) * kYears, s);
  if (npol > 0) d_premium.copy_to_host(premium, static_cast<std::size_t>(npol), s);
  t_down.stop(s);
  NUMPIPE_CUDA_CHECK(cudaStreamSynchronize(s));

  double up_bytes = 0;
  up_bytes += 8.0 * (plan.column_offset.size() + plan.column_k.size() + plan.column_t.size() + plan.grid_offset.size() +
                     plan.grid_eta.size() + plan.grid_h.size() + plan.request_tau.size() + plan.outer_offset.size() +
                     plan.outer_t.size() + plan.outer_h.size());
  up_bytes += 4.0 * (plan.column_h3.size() + plan.column_grid.size() + plan.request_column.size() + plan.outer_year.size());
  log.add("upload" + dev, t_up.seconds(), up_bytes);
  log.add("inner" + dev, t_inner.seconds(), 8.0 * items, plan.inner_steps * kFlopsPerInnerStep);
  log.add("middle" + dev, t_middle.seconds(), 8.0 * (3 * items + 2 * requests));
  log.add("outer" + dev, t_outer.seconds(), 8.0 * (3 * requests + npol * kYears));
  log.add("download" + dev, t_down.seconds(), 8.0 * npol * kYears);
}

// The name suffix of device slot i's phases: none for one device, "@cudaN" for
// several, "@cudaN#i" where a device is listed more than once.
std::string device_suffix(const std::vector<int>& devices, std::size_t i) {
  if (devices.size() == 1) return {};
  std::string s = "@cuda" + std::to_string(devices[i]);
  if (std::count(devices.begin(), devices.end(), devices[i]) > 1) s += "#" + std::to_string(i);
  return s;
}

Result solve_columns(const Problem& pb, const std::vector<int>& devices, const RowSink* sink) {
  Result res;
  std::size_t n = pb.policies.size();
  res.reserve.assign(n * kYears, std::numeric_limits<double>::quiet_NaN());
  res.premium.assign(n, 0.0);
  std::size_t nd = devices.size() < n ? devices.size() : (n > 0 ? n : 1);
  std::vector<PhaseLog> logs(nd);
  std::vector<Result> counts(nd);
  run_parts_on_threads(nd, [&](std::size_t i) {
    std::size_t first = n * i / nd, last = n * (i + 1) / nd;
    solve_range(pb, first, last, devices[i], device_suffix(std::vector<int>(devices.begin(), devices.begin() + nd), i),
                res.reserve.data() + first * kYears, res.premium.data() + first, logs[i], counts[i]);
  });
  for (std::size_t i = 0; i < nd; ++i) {
    for (const auto& ph : logs[i].phases()) res.log.add(ph.name, ph.seconds, ph.bytes, ph.flops);
    res.inner_steps += counts[i].inner_steps;
    res.inner_steps_unshared += counts[i].inner_steps_unshared;
    res.columns += counts[i].columns;
    res.requests += counts[i].requests;
  }
  if (sink) {  // a part of a mixed problem: its rows into the whole result (OpenMP's threads)
    scatter_rows(*sink, res.reserve.data(), res.premium.data(), static_cast<std::int64_t>(n));
    res.reserve = ReserveArray();
    res.premium.clear();
  }
  return res;
}

// ---- the table plan ---------------------------------------------------------------

// Buffers kept for the process and reused by the next solve (--repeat, several
// groups, the tests): per device slot, its two device buffers (plain cudaMalloc,
// so that peer access covers them), and pinned host buffers for the uploads and
// for the profiles' rows. Grown when too small, never shrunk. Only solve_table
// uses them, under its mutex.
struct HeldDevice {
  int device = -1;
  char* p = nullptr;
  std::size_t bytes = 0;
};
// Leaves `device` current.
char* held_device(std::size_t slot, int use, int device, std::size_t bytes) {
  // The spouse pensions and the products of a mixed problem are solved at once.
  static std::mutex held_mutex;
  std::lock_guard<std::mutex> lock(held_mutex);
  static std::vector<std::array<HeldDevice, 3>> held;  // uses 0, 1: the table plan; 2: the products
  if (held.size() <= slot) held.resize(slot + 1);
  HeldDevice& h = held[slot][use];
  if (h.p && (h.device != device || h.bytes < bytes)) {
    NUMPIPE_CUDA_CHECK(cudaSetDevice(h.device));
    NUMPIPE_CUDA_CHECK(cudaFree(h.p));
    h = HeldDevice{};
  }
  NUMPIPE_CUDA_CHECK(cudaSetDevice(device));
  if (h.p) return h.p;
  const std::size_t want = bytes + bytes / 4 + 4096;  // room to grow a little without a new allocation
  h.p = static_cast<char*>(detail::allocate_device(want));
  h.device = device;
  h.bytes = want;
  return h.p;
}
enum HostUse { kHostUpload1 = 0, kHostUpload2 = 1, kHostRows = 2, kHostPremium = 3, kHostProducts = 4, kHostProductsUp = 5 };
char* held_host(HostUse use, std::size_t bytes) {
  static std::mutex held_mutex;
  std::lock_guard<std::mutex> lock(held_mutex);
  static std::array<std::pair<char*, std::size_t>, 6> held{};
  auto& h = held[use];
  if (h.first && h.second >= bytes) return h.first;
  if (h.first) {
    NUMPIPE_CUDA_CHECK(cudaFreeHost(h.first));
    h = {nullptr, 0};
  }
  const std::size_t want = bytes + bytes / 4 + 4096;
  void* p = nullptr;
  NUMPIPE_CUDA_CHECK(cudaHostAlloc(&p, want, cudaHostAllocPortable));
  h = {static_cast<char*>(p), want};
  return h.first;
}

// Once per device, the table plan's kernels loaded (lazy module loading would load
// each at its first launch, inside the timed phases); once per ordered pair of
// distinct devices, peer access where the hardware offers it, so that the peer
// copies (the profiles' rows, device result path) go device to device instead of
// through the host.
void prepare_devices(const std::vector<int>& devices) {
  wait_cuda_ready();  // the context made while the input was read and the plan begun (common/device.hpp)
  static std::mutex prepare_mutex;
  std::lock_guard<std::mutex> lock(prepare_mutex);
  static std::vector<int> loaded;
  static std::vector<std::pair<int, int>> peered;
  for (int d : devices) {
    if (std::find(loaded.begin(), loaded.end(), d) != loaded.end()) continue;
    NUMPIPE_CUDA_CHECK(cudaSetDevice(d));
    gpu::load_table_kernels();
    gpu::load_product_kernels();
    loaded.push_back(d);
  }
  for (int a : devices)
    for (int b : devices) {
      if (a == b || std::find(peered.begin(), peered.end(), std::make_pair(a, b)) != peered.end()) continue;
      int can = 0;
      NUMPIPE_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, a, b));
      if (can) {
        NUMPIPE_CUDA_CHECK(cudaSetDevice(a));
        cudaError_t e = cudaDeviceEnablePeerAccess(b, 0);
        if (e == cudaErrorPeerAccessAlreadyEnabled) cudaGetLastError();  // enabled before (not an error)
        else NUMPIPE_CUDA_CHECK(e);
      }
      peered.emplace_back(a, b);
    }
}

struct Range {
  std::int64_t begin = 0, end = 0;
  std::int64_t size() const { return end - begin; }
};
Range split(std::int64_t n, std::size_t parts, std::size_t i) {
  return {n * static_cast<std::int64_t>(i) / static_cast<std::int64_t>(parts),
          n * static_cast<std::int64_t>(i + 1) / static_cast<std::int64_t>(parts)};
}

// Per device slot: streams, buffers, events and its ranges. Created (with its
// device current) before any timed work, so that a device's context start is
// not inside another device's phases.
struct Slot {
  int device = 0;
  std::string suffix;
  CudaStream s, copy;
  char* d1 = nullptr;  // rows and table (held)
  char* d2 = nullptr;  // the rest (held)
  Range entries, profiles, policies;
  int c0 = 0, c1 = 0;  // its classes (Middle values and outer chains)
  CudaEventTimer t_up1, t_up2, t_inner, t_middle, t_outer, t_down;
  CudaEvent up2_done, chains_done;
};

// The slots; on the way out (normally or by an exception) every stream is drained
// before anything it uses is released.
struct SlotList {
  std::vector<std::unique_ptr<Slot>> v;
  void drain() {
    for (auto& sl : v) {
      cudaSetDevice(sl->device);
      cudaStreamSynchronize(sl->s.get());
      cudaStreamSynchronize(sl->copy.get());
    }
  }
  ~SlotList() {
    drain();
    for (auto& sl : v) {
      cudaSetDevice(sl->device);
      sl.reset();
    }
  }
};

// How the result reaches the host (NUMPIPE_INTEGRATE_RESULT, for benchmarks and
// tests; both give the same bits):
//   host:   each device downloads the rows of the profiles it computed (a few MB);
//           the host copies each policy's profile row into the result (expand_rows)
//           while no device has to wait for another.
//   device: every device gets every profile row (peer copies after the other
//           devices' chains), writes its policies' rows (expand_kernel) and
//           downloads them into the result, pinned in place in pieces
//           (cudaHostRegister) while the devices work.
using ResultPath = Tuning::ResultPath;
ResultPath result_path() { return tuning_from_environment().result; }

// The pinned pieces of a result (device path): interior boundaries on multiples of
// kPinPiece (page aligned, so that no page is in two pieces). Unpinned on the way
// out after every stream has drained (no copy may still write them).
constexpr std::size_t kPinPiece = std::size_t{16} << 20;
struct Piece {
  char* p = nullptr;
  std::size_t bytes = 0;
  bool pinned = false;
};
struct PinnedPieces {
  std::vector<Piece> v;
  SlotList* slots = nullptr;
  int device = 0;  // current while pinning and unpinning
  void cut(char* base, std::size_t bytes) {
    const std::uintptr_t b = reinterpret_cast<std::uintptr_t>(base), e = b + bytes;
    std::uintptr_t at = b, next = (b / kPinPiece + 1) * kPinPiece;
    while (at < e) {
      std::uintptr_t end = std::min<std::uintptr_t>(next, e);
      v.push_back({reinterpret_cast<char*>(at), static_cast<std::size_t>(end - at), false});
      at = end;
      next += kPinPiece;
    }
  }
  static void pin_one(std::int64_t k, void* arg) {
    auto& self = *static_cast<PinnedPieces*>(arg);
    Piece& pc = self.v[static_cast<std::size_t>(k)];
    if (cudaSetDevice(self.device) != cudaSuccess) {
      cudaGetLastError();
      return;
    }
    for (std::size_t off = 0; off < pc.bytes; off += 4096) pc.p[off] = 0;  // its page faults, in parallel
    if (cudaHostRegister(pc.p, pc.bytes, cudaHostRegisterPortable) == cudaSuccess) pc.pinned = true;
    else cudaGetLastError();  // not sticky: cleared; the result then comes by the host path
  }
  static void unpin_one(std::int64_t k, void* arg) {
    auto& self = *static_cast<PinnedPieces*>(arg);
    Piece& pc = self.v[static_cast<std::size_t>(k)];
    if (!pc.pinned) return;
    if (cudaSetDevice(self.device) != cudaSuccess) {
      cudaGetLastError();
      return;
    }
    if (cudaHostUnregister(pc.p) == cudaSuccess) pc.pinned = false;
    else cudaGetLastError();
  }
  bool all_pinned() const {
    for (const Piece& pc : v)
      if (!pc.pinned) return false;
    return true;
  }
  void pin() { parallel_items(static_cast<std::int64_t>(v.size()), pin_one, this); }
  void unpin() { parallel_items(static_cast<std::int64_t>(v.size()), unpin_one, this); }
  ~PinnedPieces() {
    bool any = false;
    for (const Piece& pc : v) any = any || pc.pinned;
    if (!any) return;
    if (slots) slots->drain();
    for (Piece& pc : v)
      if (pc.pinned) cudaHostUnregister(pc.p);
  }
};

// Few profiles: one warp per profile (table_outer_warp_kernel); decided on the whole
// batch so that every split of it runs the same kernel.
constexpr std::int64_t kOuterWarpMaxProfiles = 4096;

// A spouse-pension batch by the table plan, in two steps (solve_split): start()
// plans it and sets every device's work going; finish() takes the result's pages,
// waits, and writes the rows. Held by its PartFinish between the two; destroyed
// unfinished (the other part threw), it drains its streams (SlotList).
std::mutex& table_solve_mutex() {
  static std::mutex m;  // the held buffers serve one solve at a time
  return m;
}
struct TableSolve {
  const Problem& pb;
  const std::vector<int>& devices;
  const RowSink* sink;
  std::unique_lock<std::mutex> lock{table_solve_mutex()};
  Result res;
  std::size_t nd = 0, total = 0;
  std::int64_t npol = 0, nprof = 0;
  bool large = false, general = false;
  ResultPath path = ResultPath::host;
  TablePlan tp;
  SlotList slot_list;
  Blob b1, b2;
  static constexpr std::size_t row_bytes = kYears * sizeof(double);
  std::size_t o_prow = 0, o_reserve = 0;
  char* prem_host = nullptr;
  char* rows_host = nullptr;
  double pages_seconds = 0;
  TeamShare team;                        // the plan's OpenMP team beside the page helpers
  std::unique_ptr<PageFaulter> faulter;  // the result's pages (no sink, host path)

  TableSolve(const Problem& problem, const std::vector<int>& devs, const RowSink* part_sink)
      : pb(problem), devices(devs), sink(part_sink) {}

  // scan_seconds: the scan's time (counted in the plan).
  void start(const TableScan& scan, double scan_seconds) {
    nd = devices.size();
    npol = static_cast<std::int64_t>(pb.policies.size());
    total = static_cast<std::size_t>(npol) * kYears;
    // A part of a mixed problem (sink) goes by the host path: its rows are scattered
    // into the whole result, whose pages the caller has touched.
    large = !sink && total >= (std::size_t{1} << 20);
    path = sink ? (result_path(), ResultPath::host) : result_path();
    if (!sink) res.reserve.resize(total);
    if (large && path == ResultPath::host) {
      // The result's page faults from here on, beside the plan (whose OpenMP team
      // gives the helpers their share); the rest after the launches (finish).
      HostTimer pages_timer;
      faulter = fault_pages_early(res.reserve.data(), total, team);
      pages_seconds = pages_timer.seconds();
    }
    HostTimer plan_timer;
    plan_table_rows(pb, scan, tp);
    double plan_seconds = scan_seconds + plan_timer.seconds();
    RateTable rate_table = make_rate_table(pb);
    RateView rv = rate_table.view();  // constant rate: no device arrays

    // Set up outside the timed phases: kernels loaded, peer access, every slot's
    // streams and events (a device's context starts here).
    prepare_devices(devices);
    auto& slots = slot_list.v;
    for (std::size_t i = 0; i < nd; ++i) {
      NUMPIPE_CUDA_CHECK(cudaSetDevice(devices[i]));
      slots.push_back(std::make_unique<Slot>());
      slots.back()->device = devices[i];
      slots.back()->suffix = device_suffix(devices, i);
    }

    // 1. Every device computes the whole table: the table kernel is latency-bound
    //    (one thread runs each row's trajectory), so a share of its rows would take
    //    as long, and no device waits for another's table.
    const std::size_t o_rows = b1.add(tp.rows);
    const std::size_t o_full = b1.add(tp.row_full);
    BasisBlob basis;  // one law per life (table_plan_applies), the spouse assumptions
    basis.pack(b1, pb);
    const std::size_t insured_law = npol > 0 ? static_cast<std::size_t>(pb.policies.front().insured) : 0;
    const std::size_t spouse_law = npol > 0 ? static_cast<std::size_t>(pb.policies.front().spouse) : 1;
    const std::size_t o_table = b1.reserve(static_cast<std::size_t>(tp.table_size) * sizeof(double));
    const std::int64_t nrows = static_cast<std::int64_t>(tp.rows.size());
    const int tail_points = std::max(tp.max_tail_points, 1), tail_states = std::max(tp.max_tail_states, 1);
    const std::size_t table_smem = sizeof(double) * (2 * kTableChunk + 1 + tail_points + tail_states);
    if (table_smem > 48 * 1024) fail_internal("integrate: table rows too long for shared memory");
    char* up1 = held_host(kHostUpload1, b1.upload_bytes());
    b1.write(up1);
    for (std::size_t i = 0; i < nd; ++i) {
      Slot& sl = *slots[i];
      sl.d1 = held_device(i, 0, sl.device, b1.device_bytes());  // the slot's device current
      sl.t_up1.start(sl.s.get());
      NUMPIPE_CUDA_CHECK(cudaMemcpyAsync(sl.d1, up1, b1.upload_bytes(), cudaMemcpyHostToDevice, sl.s.get()));
      sl.t_up1.stop(sl.s.get());
      sl.t_inner.start(sl.s.get());
      if (nrows > 0) {
        gpu::launch_table(static_cast<unsigned>(nrows), table_smem, rv, basis.law(spouse_law, sl.d1),
                          reinterpret_cast<const TableRow*>(sl.d1 + o_rows), reinterpret_cast<double*>(sl.d1 + o_table),
                          tail_points, tail_states, sl.s.get());
      }
      sl.t_inner.stop(sl.s.get());
    }

    // 2. The rest of the plan on the host while the tables run.
    HostTimer plan2_timer;
    plan_table_families(pb, tp);
    plan_seconds += plan2_timer.seconds();
    res.log.add("plan", plan_seconds);

    // Stage points per middle block: as many as 8 whose weights fit in 48 KiB.
    const int group = static_cast<int>(std::min<std::size_t>(8, (48 * 1024) / (sizeof(double) * std::max(tp.max_rows, 1))));
    if (group < 1) fail_internal("integrate: middle grid too fine for the middle kernel's shared memory");
    const int weights_smem = static_cast<int>(sizeof(double)) * std::max(tp.max_rows, 1) * group;
    const int nclass = static_cast<int>(tp.classes.size());
    const std::int64_t blocks = assign_middle_blocks(tp, group);
    nprof = static_cast<std::int64_t>(tp.profiles.size());
    const std::size_t o_types = b2.add(tp.types);
    const std::size_t o_classes = b2.add(tp.classes);
    const std::size_t o_fams = b2.add(tp.families);
    const std::size_t o_profiles = b2.add(tp.profiles);
    const std::size_t o_profile_of = path == ResultPath::device ? b2.add(tp.profile_of) : 0;
    const std::size_t cp = static_cast<std::size_t>(tp.class_points);
    const std::size_t o_tau = b2.reserve(cp * sizeof(double));
    const std::size_t o_rate = b2.reserve(cp * sizeof(double));
    const std::size_t o_muf = b2.reserve(cp * sizeof(double));
    const std::size_t o_year = b2.reserve(cp * sizeof(int));
    const std::size_t o_middle = b2.reserve(static_cast<std::size_t>(tp.entries) * sizeof(double));
    o_prow = b2.reserve(static_cast<std::size_t>(nprof) * row_bytes);
    general = tp.general_profiles > 0;  // premiums per profile
    const std::size_t o_prem = general ? b2.reserve(static_cast<std::size_t>(nprof) * sizeof(double)) : 0;
    prem_host = general ? held_host(kHostPremium, static_cast<std::size_t>(nprof) * sizeof(double)) : nullptr;
    std::int64_t max_pol = 0;
    for (std::size_t i = 0; i < nd; ++i) max_pol = std::max(max_pol, split(npol, nd, i).size());
    o_reserve = path == ResultPath::device ? b2.reserve(static_cast<std::size_t>(max_pol) * row_bytes) : 0;
    const bool warp_outer = nprof <= kOuterWarpMaxProfiles;
    auto class_block = [&](int c) { return c < nclass ? tp.classes[c].block0 : static_cast<int>(blocks); };
    char* up2 = held_host(kHostUpload2, b2.upload_bytes());
    b2.write(up2);
    rows_host = path == ResultPath::host ? held_host(kHostRows, static_cast<std::size_t>(nprof) * row_bytes) : nullptr;

    // 3. Per device: r, muF, tau at every class stage point; the Middle values of its
    //    classes; the outer chains of those classes' profiles.
    for (std::size_t i = 0; i < nd; ++i) {
      Slot& sl = *slots[i];
      table_class_split(tp, nd, i, sl.c0, sl.c1);
      sl.entries = {tp.class_entry[sl.c0], tp.class_entry[sl.c1]};
      sl.profiles = {tp.class_profile[sl.c0], tp.class_profile[sl.c1]};
      sl.policies = split(npol, nd, i);
      sl.d2 = held_device(i, 1, sl.device, b2.device_bytes());  // the slot's device current
      // Uploaded on the copy stream, beside the table kernel.
      sl.t_up2.start(sl.copy.get());
      NUMPIPE_CUDA_CHECK(cudaMemcpyAsync(sl.d2, up2, b2.upload_bytes(), cudaMemcpyHostToDevice, sl.copy.get()));
      sl.t_up2.stop(sl.copy.get());
      NUMPIPE_CUDA_CHECK(cudaEventRecord(sl.up2_done.get(), sl.copy.get()));
      NUMPIPE_CUDA_CHECK(cudaStreamWaitEvent(sl.s.get(), sl.up2_done.get(), 0));
      auto* classes = reinterpret_cast<const TableClass*>(sl.d2 + o_classes);
      auto* tau = reinterpret_cast<double*>(sl.d2 + o_tau);
      auto* rate = reinterpret_cast<double*>(sl.d2 + o_rate);
      auto* muf = reinterpret_cast<double*>(sl.d2 + o_muf);
      auto* year = reinterpret_cast<int*>(sl.d2 + o_year);
      auto* middle = reinterpret_cast<double*>(sl.d2 + o_middle);
      auto* prow = reinterpret_cast<double*>(sl.d2 + o_prow);
      sl.t_middle.start(sl.s.get());
      if (cp > 0) {
        gpu::launch_points(classes, nclass, static_cast<std::int64_t>(cp), rv, basis.law(insured_law, sl.d1), tau, rate,
                           muf, year, sl.s.get());
      }
      const int blk0 = class_block(sl.c0), blk1 = class_block(sl.c1);
      if (blk1 > blk0) {
        gpu::launch_table_middle(static_cast<unsigned>(blk1 - blk0), weights_smem, classes, sl.c0, sl.c1, blk0, group,
                                 reinterpret_cast<const TableType*>(sl.d2 + o_types),
                                 reinterpret_cast<const TableRow*>(sl.d1 + o_rows),
                                 reinterpret_cast<const std::int32_t*>(sl.d1 + o_full),
                                 reinterpret_cast<const double*>(sl.d1 + o_table), basis.spouse(sl.d1), tau,
                                 reinterpret_cast<const TableFamily*>(sl.d2 + o_fams), middle, sl.s.get());
      }
      sl.t_middle.stop(sl.s.get());
      sl.t_outer.start(sl.s.get());
      if (sl.profiles.size() > 0) {
        auto* profiles = reinterpret_cast<const TablePolicy*>(sl.d2 + o_profiles);
        gpu::launch_table_outer(warp_outer, profiles, classes, rate, muf, year, middle, sl.profiles.begin,
                                sl.profiles.size(), prow, sl.s.get());
        if (general) {
          auto* prem = reinterpret_cast<double*>(sl.d2 + o_prem);
          gpu::launch_table_outer_general(profiles, classes, rate, muf, year, middle, sl.profiles.begin,
                                          sl.profiles.size(), prow, prem, sl.s.get());
          NUMPIPE_CUDA_CHECK(cudaMemcpyAsync(prem_host + static_cast<std::size_t>(sl.profiles.begin) * sizeof(double),
                                             prem + sl.profiles.begin,
                                             static_cast<std::size_t>(sl.profiles.size()) * sizeof(double),
                                             cudaMemcpyDeviceToHost, sl.s.get()));
        }
      }
      NUMPIPE_CUDA_CHECK(cudaEventRecord(sl.chains_done.get(), sl.s.get()));
    }

    // 4. The rows to the host.
    for (std::size_t dst = 0; dst < nd; ++dst) {
      Slot& d = *slots[dst];
      NUMPIPE_CUDA_CHECK(cudaSetDevice(d.device));
      if (path == ResultPath::device) {
        // Every other slot's profile rows (after its chains), then this slot's policies' rows.
        for (std::size_t src = 0; src < nd; ++src) {
          const Slot& sr = *slots[src];
          if (src == dst || sr.profiles.size() == 0) continue;
          const std::size_t off = o_prow + static_cast<std::size_t>(sr.profiles.begin) * row_bytes;
          const std::size_t bytes = static_cast<std::size_t>(sr.profiles.size()) * row_bytes;
          NUMPIPE_CUDA_CHECK(cudaStreamWaitEvent(d.s.get(), sr.chains_done.get(), 0));
          if (sr.device == d.device)
            NUMPIPE_CUDA_CHECK(cudaMemcpyAsync(d.d2 + off, sr.d2 + off, bytes, cudaMemcpyDeviceToDevice, d.s.get()));
          else
            NUMPIPE_CUDA_CHECK(cudaMemcpyPeerAsync(d.d2 + off, d.device, sr.d2 + off, sr.device, bytes, d.s.get()));
        }
        if (d.policies.size() > 0) {
          gpu::launch_expand(reinterpret_cast<const std::int32_t*>(d.d2 + o_profile_of),
                             reinterpret_cast<const double*>(d.d2 + o_prow), d.policies.begin, d.policies.size(),
                             reinterpret_cast<double*>(d.d2 + o_reserve), d.s.get());
        }
        d.t_outer.stop(d.s.get());
        d.t_down.start(d.s.get());  // stopped after the download, once the host has pinned the result
      } else {
        d.t_outer.stop(d.s.get());
        d.t_down.start(d.s.get());
        if (d.profiles.size() > 0)
          NUMPIPE_CUDA_CHECK(cudaMemcpyAsync(rows_host + static_cast<std::size_t>(d.profiles.begin) * row_bytes,
                                             d.d2 + o_prow + static_cast<std::size_t>(d.profiles.begin) * row_bytes,
                                             static_cast<std::size_t>(d.profiles.size()) * row_bytes,
                                             cudaMemcpyDeviceToHost, d.s.get()));
        d.t_down.stop(d.s.get());
      }
    }
  }

  Result finish() {
    auto& slots = slot_list.v;
    // 5. On the host while the devices work: the result's pages (host path: touched;
    //    device path: touched and pinned in pieces, then each slot's rows downloaded
    //    straight into them).
    double expand_seconds = 0, unpin_seconds = 0;
    bool host_expand = path == ResultPath::host;
    PinnedPieces pins;
    pins.slots = &slot_list;
    pins.device = devices.front();
    if (path == ResultPath::host) {
      HostTimer pages_timer;
      if (faulter) faulter->help();  // the pages the helpers have not done yet
      faulter.reset();
      team.restore();
      if (sink && !sink->touched) touch_rows(*sink, npol);  // a part: the pages of its rows in the whole result
      pages_seconds += pages_timer.seconds();
    } else {
      HostTimer pages_timer;
      if (large) {
        advise_huge_pages(res.reserve.data(), total * sizeof(double));
        pins.cut(reinterpret_cast<char*>(res.reserve.data()), total * sizeof(double));
        pins.pin();
      }
      pages_seconds = pages_timer.seconds();
      if (large && !pins.all_pinned()) {
        // Not pinned (the host refused): slot 0 holds every profile row; the host path.
        host_expand = true;
        rows_host = held_host(kHostRows, static_cast<std::size_t>(nprof) * row_bytes);
        Slot& s0 = *slots[0];
        NUMPIPE_CUDA_CHECK(cudaSetDevice(s0.device));
        NUMPIPE_CUDA_CHECK(cudaMemcpyAsync(rows_host, s0.d2 + o_prow, static_cast<std::size_t>(nprof) * row_bytes,
                                           cudaMemcpyDeviceToHost, s0.s.get()));
      } else {
        // Each slot's rows: one copy per piece it meets (a copy stays within one
        // registration), or one pageable copy for a small result.
        char* const base = reinterpret_cast<char*>(res.reserve.data());
        for (auto& slp : slots) {
          Slot& sl = *slp;
          if (sl.policies.size() == 0) continue;
          NUMPIPE_CUDA_CHECK(cudaSetDevice(sl.device));
          char* const lo = base + static_cast<std::size_t>(sl.policies.begin) * row_bytes;
          char* const hi = base + static_cast<std::size_t>(sl.policies.end) * row_bytes;
          auto copy = [&](char* a, char* b) {
            NUMPIPE_CUDA_CHECK(cudaMemcpyAsync(a, sl.d2 + o_reserve + (a - lo), static_cast<std::size_t>(b - a),
                                               cudaMemcpyDeviceToHost, sl.s.get()));
          };
          if (!large) copy(lo, hi);
          for (const Piece& pc : pins.v) {
            char* a = std::max(lo, pc.p);
            char* b = std::min(hi, pc.p + pc.bytes);
            if (a < b) copy(a, b);
          }
        }
      }
      for (auto& slp : slots) {
        NUMPIPE_CUDA_CHECK(cudaSetDevice(slp->device));
        slp->t_down.stop(slp->s.get());
      }
    }
    for (auto& slp : slots) {
      NUMPIPE_CUDA_CHECK(cudaSetDevice(slp->device));
      NUMPIPE_CUDA_CHECK(cudaStreamSynchronize(slp->s.get()));
    }
    const double* prem_rows = reinterpret_cast<const double*>(prem_host);
    if (host_expand) {
      HostTimer expand_timer;
      if (sink)
        expand_rows(*sink, reinterpret_cast<const double*>(rows_host), prem_rows, tp.profile_of.data(), npol);
      else
        expand_rows(res.reserve.data(), reinterpret_cast<const double*>(rows_host), tp.profile_of.data(), npol);
      expand_seconds = expand_timer.seconds();
    }
    if (general && !sink) {
      res.premium.resize(static_cast<std::size_t>(npol));
      for (std::int64_t i = 0; i < npol; ++i) res.premium[static_cast<std::size_t>(i)] = prem_rows[tp.profile_of[i]];
    }
    if (!pins.v.empty()) {
      HostTimer unpin_timer;
      pins.unpin();
      unpin_seconds = unpin_timer.seconds();
      if (!std::none_of(pins.v.begin(), pins.v.end(), [](const Piece& pc) { return pc.pinned; }))
        fail_internal("integrate: cudaHostUnregister failed on the result");
    }

    // Phases per device (CUDA events); flops as counted in integrate.hpp, each item
    // on the device that computed it (the table on every device).
    TableWork w;
    for (const TableRow& r : tp.rows) w.add(r);
    for (std::size_t i = 0; i < nd; ++i) {
      Slot& sl = *slots[i];
      NUMPIPE_CUDA_CHECK(cudaSetDevice(sl.device));
      double weights = 0, products = 0, msteps = 0, osteps = 0;
      for (int c = sl.c0; c < sl.c1; ++c) {
        const TableClass& cl = tp.classes[c];
        const TableType& ty = tp.types[cl.type];
        double values = static_cast<double>(tp.class_entry[c + 1] - tp.class_entry[c]);
        weights += static_cast<double>(cl.points) * ty.rows;
        products += values * table_middle_products(segment_steps(ty.mseg));
        msteps += values * segment_steps(ty.mseg);
        osteps += static_cast<double>(tp.class_profile[c + 1] - tp.class_profile[c]) * segment_steps(cl.seg);
      }
      const double prow_bytes = static_cast<double>(sl.profiles.size()) * row_bytes;
      const double pol_bytes = static_cast<double>(sl.policies.size()) * row_bytes;
      const bool dev = path == ResultPath::device;
      res.log.add("upload" + sl.suffix, sl.t_up1.seconds() + sl.t_up2.seconds(),
                  static_cast<double>(b1.upload_bytes() + b2.upload_bytes()));
      res.log.add("inner" + sl.suffix, sl.t_inner.seconds(), 8.0 * static_cast<double>(tp.table_size),
                  w.coefficients * kFlopsCoefficient + (w.trajectory + w.tail) * kFlopsLinearStep);
      res.log.add("middle" + sl.suffix, sl.t_middle.seconds(), 8.0 * static_cast<double>(sl.entries.size()),
                  static_cast<double>(tp.class_points) * kFlopsOuterPoint + weights * kFlopsMiddleWeight +
                      products * kFlopsMiddleProduct + msteps * kFlopsMiddleStep);
      res.log.add("outer" + sl.suffix, sl.t_outer.seconds(), prow_bytes + (dev ? pol_bytes : 0.0),
                  osteps * kFlopsOuterStep);
      res.log.add("download" + sl.suffix, sl.t_down.seconds(), dev && !host_expand ? pol_bytes : prow_bytes);
    }
    res.log.add(path == ResultPath::device ? "result pin" : "result pages", pages_seconds);
    if (host_expand) res.log.add("result expand", expand_seconds);
    if (!pins.v.empty()) res.log.add("result unpin", unpin_seconds);
    res.inner_steps = tp.trajectory_steps + tp.tail_steps;
    res.inner_steps_unshared = 0;
    res.columns = tp.rows.size();
    res.requests = static_cast<std::size_t>(tp.requests);
    res.table = true;
    res.middle_values = static_cast<std::size_t>(tp.entries);
    return std::move(res);
  }
};

// The single-life products: policies split into contiguous ranges over the devices
// (a policy's bits do not depend on the split), one thread per policy, the rows
// through a pinned buffer kept for the process into the result or the sink. In two
// steps as TableSolve: start() writes the specs and sets the kernels and downloads
// going; finish() waits and copies the rows into place.
std::mutex& products_solve_mutex() {
  static std::mutex m;  // the held buffers serve one solve at a time
  return m;
}
struct ProductsSolve {
  struct Part {
    int device = 0;
    std::string suffix;
    CudaStream s;
    char* d = nullptr;
    Range range;
    CudaEventTimer t_up, t_run, t_down;
  };
  const Problem& pb;
  const std::vector<int>& devices;
  const RowSink* sink;
  std::unique_lock<std::mutex> lock{products_solve_mutex()};
  Result res;
  std::int64_t n = 0;
  double steps = 0;
  std::size_t up_bytes = 0;
  double* rows_host = nullptr;
  double* prem_host = nullptr;
  static constexpr std::size_t row_bytes = kYears * sizeof(double);
  std::vector<std::unique_ptr<Part>> parts;

  ProductsSolve(const Problem& problem, const std::vector<int>& devs, const RowSink* part_sink)
      : pb(problem), devices(devs), sink(part_sink) {}
  ~ProductsSolve() {  // every stream drained before its buffers are released (also on an exception)
    for (auto& p : parts) {
      cudaSetDevice(p->device);
      cudaStreamSynchronize(p->s.get());
    }
  }

  void start() {
    n = static_cast<std::int64_t>(pb.policies.size());
    const std::size_t nd = std::max<std::size_t>(1, std::min<std::size_t>(devices.size(), static_cast<std::size_t>(n)));
    HostTimer plan_timer;
    RateTable rate_table = make_rate_table(pb);
    Blob blob;
    BasisBlob basis;
    basis.pack(blob, pb);
    const std::size_t o_knots = blob.add(rate_table.knots), o_alpha = blob.add(rate_table.alpha),
                      o_beta = blob.add(rate_table.beta);
    // The specs are written straight into the pinned upload buffer (below the laws'
    // views, so inside the uploaded range): no vector and blob copies of them.
    const std::size_t o_specs = blob.reserve(static_cast<std::size_t>(n) * sizeof(ProductSpec));
    const std::size_t nlaws = pb.laws.size();
    const std::size_t o_laws = blob.reserve(nlaws * sizeof(MortalityView));
    std::int64_t max_range = 0;
    for (std::size_t i = 0; i < nd; ++i) max_range = std::max(max_range, split(n, nd, i).size());
    const std::size_t o_rows = blob.reserve(static_cast<std::size_t>(max_range) * row_bytes);
    const std::size_t o_prem = blob.reserve(static_cast<std::size_t>(max_range) * sizeof(double));
    double plan_seconds = plan_timer.seconds();

    const std::vector<int> used(devices.begin(), devices.begin() + static_cast<std::ptrdiff_t>(nd));
    prepare_devices(used);
    // Uploaded: the blob's arrays, then the laws' views (written per device below).
    up_bytes = o_laws + nlaws * sizeof(MortalityView);
    char* up = held_host(kHostProductsUp, up_bytes);
    HostTimer specs_timer;
    blob.write(up);
    product_specs(pb, reinterpret_cast<ProductSpec*>(up + o_specs), steps);
    plan_seconds += specs_timer.seconds();
    res.log.add("plan", plan_seconds);
    char* down = held_host(kHostProducts, static_cast<std::size_t>(n) * (row_bytes + sizeof(double)));
    rows_host = reinterpret_cast<double*>(down);
    prem_host = rows_host + n * kYears;
    for (std::size_t i = 0; i < nd; ++i) {
      NUMPIPE_CUDA_CHECK(cudaSetDevice(devices[i]));
      parts.push_back(std::make_unique<Part>());
      parts.back()->device = devices[i];
      parts.back()->suffix = device_suffix(used, i);
    }
    for (std::size_t i = 0; i < nd; ++i) {
      Part& pt = *parts[i];
      pt.range = split(n, nd, i);
      pt.d = held_device(i, 2, pt.device, blob.device_bytes());  // the part's device current
      // The laws' views point into this device's copy of the blob.
      std::vector<MortalityView> laws = basis.laws(pt.d);
      std::memcpy(up + o_laws, laws.data(), nlaws * sizeof(MortalityView));
      pt.t_up.start(pt.s.get());
      NUMPIPE_CUDA_CHECK(cudaMemcpyAsync(pt.d, up, up_bytes, cudaMemcpyHostToDevice, pt.s.get()));
      pt.t_up.stop(pt.s.get());
      // The next part's views differ: wait until this upload has read the buffer.
      if (i + 1 < nd) NUMPIPE_CUDA_CHECK(cudaStreamSynchronize(pt.s.get()));
      RateView rv = rate_table.view();
      if (rv.n > 0) {
        rv.knots = reinterpret_cast<const double*>(pt.d + o_knots);
        rv.alpha = reinterpret_cast<const double*>(pt.d + o_alpha);
        rv.beta = reinterpret_cast<const double*>(pt.d + o_beta);
      }
      auto* rows = reinterpret_cast<double*>(pt.d + o_rows);
      auto* prem = reinterpret_cast<double*>(pt.d + o_prem);
      pt.t_run.start(pt.s.get());
      if (pt.range.size() > 0) {
        gpu::launch_products(reinterpret_cast<const ProductSpec*>(pt.d + o_specs) + pt.range.begin, pt.range.size(), rv,
                             reinterpret_cast<const MortalityView*>(pt.d + o_laws), pb.align_breaks, rows, prem,
                             pt.s.get());
      }
      pt.t_run.stop(pt.s.get());
      pt.t_down.start(pt.s.get());
      if (pt.range.size() > 0) {
        NUMPIPE_CUDA_CHECK(cudaMemcpyAsync(rows_host + pt.range.begin * kYears, rows,
                                           static_cast<std::size_t>(pt.range.size()) * row_bytes,
                                           cudaMemcpyDeviceToHost, pt.s.get()));
        NUMPIPE_CUDA_CHECK(cudaMemcpyAsync(prem_host + pt.range.begin, prem,
                                           static_cast<std::size_t>(pt.range.size()) * sizeof(double),
                                           cudaMemcpyDeviceToHost, pt.s.get()));
      }
      pt.t_down.stop(pt.s.get());
    }
  }

  Result finish() {
    // While the devices work: this part's pages of the whole result (unless the
    // caller has faulted them in).
    HostTimer pages_timer;
    if (sink && !sink->touched) touch_rows(*sink, n);
    const double pages_seconds = pages_timer.seconds();
    for (auto& p : parts) {
      NUMPIPE_CUDA_CHECK(cudaSetDevice(p->device));
      NUMPIPE_CUDA_CHECK(cudaStreamSynchronize(p->s.get()));
    }
    HostTimer expand_timer;
    if (sink) {
      scatter_rows(*sink, rows_host, prem_host, n);
    } else {
      res.reserve.resize(static_cast<std::size_t>(n) * kYears);
      RowSink whole{res.reserve.data(), nullptr, nullptr};
      scatter_rows(whole, rows_host, nullptr, n);
      res.premium.assign(prem_host, prem_host + n);
    }
    const double expand_seconds = expand_timer.seconds();
    for (auto& p : parts) {
      const double rows_b = static_cast<double>(p->range.size()) * (row_bytes + sizeof(double));
      res.log.add("upload" + p->suffix, p->t_up.seconds(), static_cast<double>(up_bytes));
      res.log.add("products" + p->suffix, p->t_run.seconds(), rows_b);
      res.log.add("download" + p->suffix, p->t_down.seconds(), rows_b);
    }
    if (sink && !sink->touched) res.log.add("result pages", pages_seconds);
    res.log.add("result expand", expand_seconds, static_cast<double>(n) * row_bytes);
    res.product_steps = steps;
    res.products = static_cast<std::size_t>(n);
    return std::move(res);
  }
};

// A mixed problem's two parts (NUMPIPE_INTEGRATE_SPLIT, for benchmarks): solved one
// after the other (sequential, the default), or at once from two host threads
// (concurrent). On the H100 host (16 cores, bench/integrate basis-quick, 100000 mixed
// policies) in turn took 20.0 ms, at once 25.1 to 36.7 ms: the two parts' host work
// (plans, result pages) competes for the cores more than their GPU work overlaps.
bool split_concurrent() { return tuning_from_environment().split_concurrent; }

}  // namespace

Result solve_cuda(const Problem& pb, const std::vector<int>& devices) {
  if (devices.empty()) fail_input("integrate: no CUDA device given");
  const bool concurrent = split_concurrent();
  // Each part's state lives in its PartFinish until it is finished (or dropped: its
  // destructor drains its streams).
  PartStarter spouse = [&](const Problem& sub, const RowSink* sink) -> PartFinish {
    HostTimer scan_timer;
    const TableScan scan = scan_table(sub);  // one pass: applies? its types, payments
    const double scan_seconds = scan_timer.seconds();
    if (!scan.applies) return [&sub, &devices, sink] { return solve_columns(sub, devices, sink); };
    auto t = std::make_shared<TableSolve>(sub, devices, sink);
    t->start(scan, scan_seconds);
    return [t] { return t->finish(); };
  };
  PartStarter products = [&](const Problem& sub, const RowSink* sink) -> PartFinish {
    auto p = std::make_shared<ProductsSolve>(sub, devices, sink);
    p->start();
    return [p] { return p->finish(); };
  };
  return solve_split(pb, spouse, products, concurrent, /*touch_pages=*/true);
}

std::vector<double> cash_flows_cuda(const Problem& pb, const std::vector<ProductSpec>& specs, int device) {
  NUMPIPE_CUDA_CHECK(cudaSetDevice(device));
  CudaStream stream;
  const cudaStream_t s = stream.get();
  const std::int64_t n = static_cast<std::int64_t>(specs.size());
  std::vector<double> flows(specs.size() * kYears * kCashFlowKinds);
  if (n == 0) return flows;
  const RateTable rate = make_rate_table(pb);
  auto d_knots = upload(rate.knots, s);
  auto d_alpha = upload(rate.alpha, s);
  auto d_beta = upload(rate.beta, s);
  RateView rv = rate.view();
  rv.knots = d_knots.data();
  rv.alpha = d_alpha.data();
  rv.beta = d_beta.data();
  const DeviceBasis basis(pb, s);
  auto d_specs = upload(specs, s);
  DeviceArray<double> d_flows(flows.size());
  gpu::launch_cash_flows(d_specs.data(), n, rv, basis.d_laws.data(), d_flows.data(), s);
  d_flows.copy_to_host(flows.data(), flows.size(), s);
  NUMPIPE_CUDA_CHECK(cudaStreamSynchronize(s));
  return flows;
}
}  // namespace numpipe::integrate
