// The scene path of fluid-step: Stam's step (the stam scheme) on a user's scene.
// A scene in a square box with closed sides runs on the fused solver's temporally
// blocked passes (cpu.cpp's blocks, cuda.cu's tiles: the obstacle's codes and the
// emitters inside the solves' passes), any other on the scene path's own solver
// (scene_cpu.cpp: one pass per half-sweep; scene_cuda.cu: one kernel per
// operation); all compute the same bits.
//
// A scene is NX x NY interior cells of size h = length / NX, each side closed,
// open, periodic or an inflow, an optional obstacle mask (`solid`), optional
// emitters (`source_d`, `source_u`, `source_v`, `source_T`: rates per unit
// time), an optional temperature field `T`, buoyancy and vorticity confinement.
// docs/fluid.md states the step; scene_model.hpp holds the per-cell formulas.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/stream.hpp"
#include "fluid.hpp"
#include "scene_model.hpp"
#include "state_io.hpp"

namespace numpipe::fluid {

struct Scene {
  int nx = 0, ny = 0;
  double length = 1.0;  // the box's extent along x; the cell size is h = length / nx
  SideKind side[4] = {SideKind::closed, SideKind::closed, SideKind::closed, SideKind::closed};  // left right bottom top
  double inflow[4] = {0, 0, 0, 0};  // speed into the box at an inflow side
  double buoyancy_a = 0, buoyancy_b = 0, ambient = 0;  // f = -A d + B (T - ambient), upward
  double vorticity = 0;                                // confinement's epsilon
  double inv_h() const { return static_cast<double>(nx) / length; }
  bool periodic_x() const { return side[kLeft] == SideKind::periodic; }
  bool periodic_y() const { return side[kBottom] == SideKind::periodic; }
  bool all_closed() const {
    for (SideKind s : side)
      if (s != SideKind::closed) return false;
    return true;
  }
};

inline const char* side_name(int s) {
  static const char* const names[4] = {"left", "right", "bottom", "top"};
  return names[s];
}
inline const char* side_kind_name(SideKind k) {
  switch (k) {
    case SideKind::closed: return "closed";
    case SideKind::open: return "open";
    case SideKind::periodic: return "periodic";
    default: return "inflow";
  }
}

// The state and the scene's arrays, each (ny+2) x (nx+2), C order [y][x].
template <class T>
struct SceneFields {
  int nx = 0, ny = 0;
  FieldVector<T> d, u, v, d0, u0, v0;  // as in Fields
  FieldVector<T> t;                    // temperature, empty when the scene has none
  std::vector<std::uint8_t> solid;     // 1 inside an obstacle, empty when none
  FieldVector<T> src_d, src_u, src_v, src_t;  // emitters (rates per unit time), each empty when none
  SceneFields() = default;
  SceneFields(int nx_, int ny_) { resize(nx_, ny_); }
  // Every value of the six state fields zero.
  void resize(int nx_, int ny_) {
    resize_uninitialised(nx_, ny_);
    for (auto* f : {&d, &u, &v, &d0, &u0, &v0}) parallel_fill(f->data(), f->size(), T(0));
  }
  // For a state about to be overwritten whole: no pass over it.
  void resize_uninitialised(int nx_, int ny_) {
    nx = nx_;
    ny = ny_;
    for (auto* f : {&d, &u, &v, &d0, &u0, &v0}) f->resize(cells());
  }
  std::size_t cells() const { return static_cast<std::size_t>(nx + 2) * static_cast<std::size_t>(ny + 2); }
  bool temperature() const { return !t.empty(); }
};

// Whether a scene needs the scene path (anything Stam's square closed box lacks).
template <class T>
bool needs_scene_path(const Scene& s, const SceneFields<T>& f) {
  return s.nx != s.ny || s.length != 1.0 || !s.all_closed() || !f.solid.empty() || !f.src_d.empty() ||
         !f.src_u.empty() || !f.src_v.empty() || !f.src_t.empty() || f.temperature() || s.buoyancy_a != 0 ||
         s.buoyancy_b != 0 || s.vorticity != 0;
}

template <class T>
class SceneSolver {
 public:
  virtual ~SceneSolver() = default;
  virtual double advance(int steps) = 0;  // seconds
  virtual void fetch(SceneFields<T>& out) = 0;  // d, u, v, d0, u0, v0 and t
  virtual Counters counters() const = 0;
  virtual std::string kernels() const = 0;
};

// Whether a backend can run the scene on its fused solver's temporally blocked
// passes (GPU: tiles; CPU: blocks of rows and columns), the obstacle's codes and
// the emitters inside them, the forces before them: a square box with closed sides
// (the other scenes take the scene path's own solver: one kernel per operation on
// the GPU, one pass per half-sweep on the CPU). All compute the same bits.
template <class T>
bool scene_fits_tiles(const Scene& s, const SceneFields<T>&) {
  return s.nx == s.ny && s.all_closed();
}
// The OpenMP backend: the same bits for any thread count. The blocked passes where
// the scene fits them (NUMPIPE_FLUID_SCENE_TILES=0: never), else the scene path's rows.
template <class T>
std::unique_ptr<SceneSolver<T>> make_scene_cpu_solver(const Params& p, const Scene& s, const SceneFields<T>& init);
// The scene path's own solver (scene_cpu.cpp: colour planes, one pass per
// half-sweep), any scene.
template <class T>
std::unique_ptr<SceneSolver<T>> make_scene_cpu_rows_solver(const Params& p, const Scene& s, const SceneFields<T>& init);
// The fused solver's temporally blocked passes (cpu.cpp); the scene must fit them.
template <class T>
std::unique_ptr<SceneSolver<T>> make_scene_cpu_blocked_solver(const Params& p, const Scene& s,
                                                              const SceneFields<T>& init);
// NUMPIPE_FLUID_SCENE_TILES=0: the scene path's own solver on either backend.
bool scene_tiles_allowed();
#ifdef NUMPIPE_FLUID_CUDA
// The tiles where the scene fits them (NUMPIPE_FLUID_SCENE_TILES=0: never), else one
// kernel per operation.
template <class T>
std::unique_ptr<SceneSolver<T>> make_scene_cuda_solver(const Params& p, const Scene& s, const SceneFields<T>& init,
                                                      int device);
// The tiles' solver (cuda.cu); the scene must fit them.
template <class T>
std::unique_ptr<SceneSolver<T>> make_scene_tiled_solver(const Params& p, const Scene& s, const SceneFields<T>& init,
                                                       int device);
#endif

// Checks the scene's arrays against the rules docs/fluid.md states (exit 2
// naming the record, the cell and the value): solid 0 or 1, 0 on the boundary
// layer, not every interior cell; sources finite, 0 on the boundary layer and
// inside obstacles, source_d and source_T >= 0; periodic sides paired.
template <class T>
void validate_scene(const Scene& s, const SceneFields<T>& f);

// set_bnd(b, x) by the scene's sides: each side's ghost cells from the adjacent
// interior cells by its rule (scene_model.hpp), periodic sides from the opposite
// interior; corners the mean of their two edge neighbours (Stam's), or wrapped
// copies where an axis is periodic. `scalar_inflow`: a scalar's value at inflow
// sides (density 0, temperature the ambient one). Where every side is closed
// this is Stam's set_bnd, bit for bit.
// `at(i, j)` is the cell's T& in whatever layout the caller keeps.
template <class T, class At>
void scene_set_bnd_at(const Scene& s, int b, At&& at, T scalar_inflow) {
  const int nx = s.nx, ny = s.ny;
  int mode[4];
  T cst[4];
  for (int k = 0; k < 4; ++k) {
    mode[k] = ghost_mode(b, k, static_cast<int>(s.side[k]));
    cst[k] = b == kSceneScalar ? scalar_inflow : ghost_const(b, k, static_cast<T>(s.inflow[k]));
  }
  const bool px = s.periodic_x(), py = s.periodic_y();
  for (int j = 1; j <= ny; ++j) {
    if (px) {
      at(0, j) = at(nx, j);
      at(nx + 1, j) = at(1, j);
    } else {
      at(0, j) = ghost_value(mode[kLeft], at(1, j), cst[kLeft]);
      at(nx + 1, j) = ghost_value(mode[kRight], at(nx, j), cst[kRight]);
    }
  }
  for (int i = 1; i <= nx; ++i) {
    if (py) {
      at(i, 0) = at(i, ny);
      at(i, ny + 1) = at(i, 1);
    } else {
      at(i, 0) = ghost_value(mode[kBottom], at(i, 1), cst[kBottom]);
      at(i, ny + 1) = ghost_value(mode[kTop], at(i, ny), cst[kTop]);
    }
  }
  if (px) {
    at(0, 0) = at(nx, 0);
    at(nx + 1, 0) = at(1, 0);
    at(0, ny + 1) = at(nx, ny + 1);
    at(nx + 1, ny + 1) = at(1, ny + 1);
  } else if (py) {
    at(0, 0) = at(0, ny);
    at(nx + 1, 0) = at(nx + 1, ny);
    at(0, ny + 1) = at(0, 1);
    at(nx + 1, ny + 1) = at(nx + 1, 1);
  } else {
    at(0, 0) = corner(at(1, 0), at(0, 1));
    at(nx + 1, 0) = corner(at(nx, 0), at(nx + 1, 1));
    at(0, ny + 1) = corner(at(1, ny + 1), at(0, ny));
    at(nx + 1, ny + 1) = corner(at(nx, ny + 1), at(nx + 1, ny));
  }
}
template <class T>
void scene_set_bnd(const Scene& s, int b, T* x, T scalar_inflow = T(0)) {
  const int w = s.nx + 2;
  scene_set_bnd_at<T>(s, b, [&](int i, int j) -> T& { return x[ix(i, j, w)]; }, scalar_inflow);
}

// The per-cell codes of an obstacle (scene_model.hpp: which neighbours are
// solid, wrapping across periodic sides); a fluid cell whose four neighbours are
// all solid counts as solid (no fluid can reach it).
std::vector<std::uint8_t> cell_codes(const Scene& s, const std::vector<std::uint8_t>& solid);

// What the solvers keep of an obstacle: the cell codes; per row, the fluid
// cells beside it (column and code; rows [row_begin[j], row_begin[j + 1]));
// the solid cells (flat indices, set to zero after each operation); the solid
// cells beside fluid, with their four neighbours (wrapped where periodic, -1
// outside the box) and which of them are fluid (bit k), for the scalars'
// extrapolation; whether a solid cell touches a side of the box.
struct ObstacleLists {
  struct Fix {
    int i;
    int code;
  };
  struct Border {
    std::int64_t c;
    std::int64_t nb[4];
    int fluid;
  };
  std::vector<std::uint8_t> code;
  std::vector<std::uint8_t> row_has;  // [ny + 2]: 1 where the row has a solid cell or a cell beside one
  std::vector<Fix> fix;
  std::vector<int> row_begin;
  std::vector<std::int64_t> solid;
  std::vector<Border> border;
  bool touches_side = false;
};
ObstacleLists obstacle_lists(const Scene& s, const std::vector<std::uint8_t>& solid);

// A solid cell beside fluid during a scalar's advection: the mean of its fluid
// neighbours, summed in the order left, right, down, up (both backends, the same bits).
template <class T>
NUMPIPE_HD_INLINE T border_mean(const T* q, const ObstacleLists::Border& b) {
  T sum = T(0);
  int n = 0;
  for (int k = 0; k < 4; ++k)
    if (b.fluid & (1 << k)) {
      sum = n == 0 ? q[b.nb[k]] : sum + q[b.nb[k]];
      ++n;
    }
  return sum / static_cast<T>(n);
}

// What a scene adds to a plain state for the fused solvers of both backends
// (scene_fits_tiles): 1/h, the obstacle (null: none), the emitters d, u, v, T (null:
// none), the initial temperature (null: none) and the forces. It points into `init`
// and `obstacle`, which must outlive it.
// A scene's forces: vorticity confinement, buoyancy against the ambient temperature.
struct SceneForces {
  double vorticity = 0, buoyancy_a = 0, buoyancy_b = 0, ambient = 0;
  bool vorticity_on() const { return vorticity != 0; }
  bool buoyancy_on() const { return buoyancy_a != 0 || buoyancy_b != 0; }
};
template <class T>
struct FusedScene {
  T inv_h;
  const ObstacleLists* obstacle;
  const T* emit[4];
  const T* temperature;
  SceneForces forces;
};
template <class T>
FusedScene<T> fused_scene(const Scene& s, const SceneFields<T>& init, const ObstacleLists* obstacle) {
  auto ptr = [](const FieldVector<T>& a) { return a.empty() ? nullptr : a.data(); };
  return {static_cast<T>(s.inv_h()),
          obstacle,
          {ptr(init.src_d), ptr(init.src_u), ptr(init.src_v), ptr(init.src_t)},
          ptr(init.t),
          SceneForces{s.vorticity, s.buoyancy_a, s.buoyancy_b, s.ambient}};
}

// A scene on a fused solver of either backend (cpu.cpp's CpuSolver, cuda.cu's
// CudaSolver; the scene must fit its tiles, scene_fits_tiles): Stam's step on the
// square box, the solver made by make(params, state d u v d0 u0 v0, setup) and read
// back through its fetch_scene(d u v d0 u0 v0, t).
template <class T, class Fused>
class FusedSceneSolver final : public SceneSolver<T> {
 public:
  template <class Make>
  FusedSceneSolver(const Params& p, const Scene& s, const SceneFields<T>& init, Make make) : n_(s.nx) {
    ObstacleLists ob;
    if (!init.solid.empty()) ob = obstacle_lists(s, init.solid);
    const FusedScene<T> setup = fused_scene(s, init, init.solid.empty() ? nullptr : &ob);
    Params q = p;
    q.n = s.nx;
    q.scheme = Scheme::stam;
    const T* const state[6] = {init.d.data(), init.u.data(), init.v.data(), init.d0.data(), init.u0.data(), init.v0.data()};
    solver_ = make(q, state, setup);
  }
  double advance(int steps) override { return solver_->advance(steps); }
  void fetch(SceneFields<T>& out) override {
    if (out.nx != n_ || out.ny != n_ || out.d.size() != out.cells()) out.resize_uninitialised(n_, n_);  // overwritten below
    T* const dst[6] = {out.d.data(), out.u.data(), out.v.data(), out.d0.data(), out.u0.data(), out.v0.data()};
    solver_->fetch_scene(dst, out.t);
  }
  Counters counters() const override { return solver_->counters(); }
  std::string kernels() const override { return solver_->kernels(); }

 private:
  int n_;
  std::unique_ptr<Fused> solver_;
};

// An obstacle from a PNG image: dark (grey < 128), opaque (alpha >= 128) pixels
// are solid; the image is scaled to nx x ny by the nearest pixel to each cell's
// centre, its top row at the top of the box. Exit 2 when it cannot be read.
std::vector<std::uint8_t> read_png_mask(const std::string& path, int nx, int ny);

// Diagnostics of a scene state (host, double, fixed order): total density over
// the fluid cells, maximum speed, maximum |div| with the obstacle's zero-flux
// faces (scene_model.hpp's divergence, times -1/h^2... as |0.5/h (du + dv)|).
template <class T>
Diagnostics diagnose_scene(const Scene& s, const SceneFields<T>& f);

// ---- The scene in the stream ------------------------------------------------------------
// Attrs of record 'd': "box" {"length", "sides" {"left": "closed", ...},
// "inflow" {"left": SPEED, ...}} and "grid" (docs/DEVELOPING.md's convention).
// Records: solid (u1), source_d, source_u, source_v, source_T, T (like 'd').
inline const char* const kSourceNames[4] = {"source_d", "source_u", "source_v", "source_T"};

// --bc SIDE=KIND[,SIDE=KIND...] (SIDE: left, right, bottom, top, x, y, all; KIND:
// closed, open, periodic) and --inflow SIDE:SPEED (the opposite side becomes
// open unless `set` says it was given). `set[k]`: side k was named. Exit 2 naming the item.
void apply_bc_spec(Scene& s, const std::string& spec, bool set[4]);
void apply_inflow_spec(Scene& s, const std::string& spec, bool set[4]);
void check_sides(const Scene& s);  // periodic sides in pairs; exit 2 otherwise
json scene_attrs(const Scene& s);
json grid_attrs(const Scene& s);
// The scene of a state: its attrs' "box" (defaults: length 1, closed sides), exit 2 on bad values.
Scene scene_from_attrs(const json& attrs, int nx, int ny);

struct SceneRecords {
  const Record* solid = nullptr;
  const Record* t = nullptr;
  const Record* src[4] = {nullptr, nullptr, nullptr, nullptr};
  bool any() const { return solid || t || src[0] || src[1] || src[2] || src[3]; }
};
// The scene's records (the last of each name), checked for shape and dtype like 'd'.
SceneRecords find_scene_records(const std::vector<Record>& records, const StateInput& in);
template <class T>
SceneFields<T> load_scene_fields(const StateInput& in, const SceneRecords& r);
// Writes d, u, v (and T where present) under prefix; with all, also d0, u0, v0
// and the scene's records (solid, sources), so that a run's output runs on.
template <class T>
void write_scene_fields(StreamWriter& w, const SceneFields<T>& f, const json& attrs, const std::string& prefix,
                        bool all);

// Bytes a scene step moves at the least (for the profile): see docs/fluid.md.
double scene_bytes_per_cell_step(const Params& p, const Scene& s, bool has_solid, int sources, bool temperature,
                                 int element_size);

}  // namespace numpipe::fluid
