// gen-input fluid: an initial state for fluid-step (kind "fluid.state").
//   react   all zeros; the react forcing injects on the first step
//   empty   all zeros, no forcing (the default for a scene of the user's own)
//   vortex  a Gaussian vortex at the centre and a density disc beside it
//   plume   a density disc near the bottom moving up
//   random  uniform random density in [0, 1) and velocities in [-0.5, 0.5)
// Scenes other than react carry forcing "none" (react's zeroing, no injection).
// A scene of the user's own: NX x NY cells (--n NX,NY), the box's length, its
// sides (--bc, --inflow), obstacles (--obstacle), emitters (--emit) and initial
// values in shapes (--set); docs/fluid.md "Scenes".
#include <algorithm>
#include <cmath>
#include <sstream>

#include "common/cli.hpp"
#include "common/memory.hpp"
#include "common/strings.hpp"
#include "common/random.hpp"
#include "generator.hpp"
#include "kernels/fluid/scene.hpp"
#include "kernels/fluid/state_io.hpp"
#include "kernels/fluid/units.hpp"

namespace numpipe {
namespace {

using fluid::Scene;
using fluid::SceneFields;


// A shape in the box's coordinates (x right, y up, from the box's lower left
// corner, in the units of --length): which cells have their centre inside.
struct Shape2 {
  enum { circle, box } kind;
  double a[4];
};
Shape2 parse_shape(const std::string& spec, const std::string& option) {
  const auto colon = spec.find(':');
  const std::string kind = spec.substr(0, colon);
  const std::vector<std::string> parts = colon == std::string::npos ? std::vector<std::string>{} : split_fields(spec.substr(colon + 1), ',');
  Shape2 s{};
  const std::string what = option + " '" + spec + "'";
  if (kind == "circle" && parts.size() == 3) {
    s.kind = Shape2::circle;
  } else if (kind == "box" && parts.size() == 4) {
    s.kind = Shape2::box;
  } else {
    fail_input(option + ": a shape is circle:X,Y,R or box:X0,Y0,X1,Y1" + (option == "--obstacle" ? " or png:FILE" : "") +
               ", got '" + spec + "'");
  }
  for (std::size_t k = 0; k < parts.size(); ++k) s.a[k] = finite_number(parts[k], what);
  if (s.kind == Shape2::circle && !(s.a[2] > 0)) fail_input(what + ": the radius must be > 0");
  if (s.kind == Shape2::box && !(s.a[2] > s.a[0] && s.a[3] > s.a[1])) fail_input(what + ": need X0 < X1 and Y0 < Y1");
  return s;
}
// Whether interior cell (i, j)'s centre lies in the shape.
bool covers(const Shape2& s, const Scene& sc, int i, int j) {
  const double h = sc.length / sc.nx;
  const double x = (i - 0.5) * h, y = (j - 0.5) * h;
  if (s.kind == Shape2::circle) return (x - s.a[0]) * (x - s.a[0]) + (y - s.a[1]) * (y - s.a[1]) <= s.a[2] * s.a[2];
  return x >= s.a[0] && x <= s.a[2] && y >= s.a[1] && y <= s.a[3];
}
// Whether the shape covers any interior cell's centre.
bool covers_any(const Shape2& s, const Scene& sc) {
  for (int j = 1; j <= sc.ny; ++j)
    for (int i = 1; i <= sc.nx; ++i)
      if (covers(s, sc, i, j)) return true;
  return false;
}

// FIELD=VALUE@SHAPE (--emit, --set).
struct Placed {
  std::string field;
  double value;
  Shape2 shape;
};
Placed parse_placed(const std::string& spec, const std::string& option) {
  const auto eq = spec.find('='), at = spec.find('@');
  if (eq == std::string::npos || at == std::string::npos || at < eq)
    fail_input(option + ": expected FIELD=VALUE@SHAPE (FIELD d, u, v or T), got '" + spec + "'");
  Placed p;
  p.field = spec.substr(0, eq);
  if (p.field != "d" && p.field != "u" && p.field != "v" && p.field != "T")
    fail_input(option + ": FIELD must be d, u, v or T, got '" + p.field + "' in '" + spec + "'");
  p.value = finite_number(spec.substr(eq + 1, at - eq - 1), option + " '" + spec + "'");
  p.shape = parse_shape(spec.substr(at + 1), option);
  return p;
}

std::vector<std::string> all_values(const Cli& cli, const std::string& option) {
  std::vector<std::string> out;
  for (const auto& kv : cli.args().arguments())
    if (kv.key() == option) out.push_back(kv.value());
  return out;
}

// ---- The state, cell by cell -------------------------------------------------------------
// Every array is written in pieces (StreamWriter::write_in_pieces): a cell's value is
// computed from the options where a piece needs it, so memory is a piece and a few
// rows, not the 7 to 12 arrays of the grid. A PNG obstacle alone is held whole (one
// byte a cell: fluid::read_png_mask decodes the image onto the grid).

enum Array { kD, kU, kV, kT, kSrcD };  // sources: kSrcD + field (d, u, v, T)
const char* const kFieldLetters[4] = {"d", "u", "v", "T"};
int field_index(const std::string& name) {
  for (int k = 0; k < 4; ++k)
    if (name == kFieldLetters[k]) return k;
  return -1;
}

// What the options make of the grid: the scene, the obstacles, --set and --emit.
struct SceneSpec {
  std::string scene;
  Scene sc;
  std::uint64_t seed = 1;
  std::vector<Shape2> obstacles;
  std::vector<std::uint8_t> png;  // the PNG obstacles' masks together; empty when none
  std::vector<Placed> sets, emits;
  bool solid() const { return !obstacles.empty() || !png.empty(); }
  bool source(int field) const {
    for (const Placed& p : emits)
      if (field_index(p.field) == field) return true;
    return false;
  }
  // A temperature field where --set or --emit names T.
  bool temperature() const {
    for (const auto* list : {&sets, &emits})
      for (const Placed& p : *list)
        if (p.field == "T") return true;
    return false;
  }
};

// The random scene's draws (d, u, v per interior cell, rows in order) from the start of
// any row: the rows are asked in order, the last one again where a piece ends inside it.
class RandomRows {
 public:
  RandomRows(std::uint64_t seed, int nx) : seed_(seed), nx_(nx), rng_(seed), saved_(seed) {}
  // Row j's draws: out[3 (i - 1) + k], k = 0 d, 1 u, 2 v.
  void row(int j, double* out) {
    if (j == saved_row_) rng_ = saved_, next_ = j;
    else if (j < next_) rng_ = Rng(seed_), next_ = 1;
    for (; next_ < j; ++next_)
      for (int c = 0; c < 3 * nx_; ++c) rng_.next_u64();  // one draw per uniform()
    saved_ = rng_;
    saved_row_ = j;
    for (int i = 0; i < nx_; ++i) {
      out[3 * i] = rng_.uniform();
      out[3 * i + 1] = rng_.uniform(-0.5, 0.5);
      out[3 * i + 2] = rng_.uniform(-0.5, 0.5);
    }
    next_ = j + 1;
  }

 private:
  std::uint64_t seed_;
  int nx_;
  Rng rng_, saved_;
  int next_ = 1, saved_row_ = -1;
};

// The vortex and plume scenes' d, u, v at cell centre (x, y) of the unit square.
void analytic_cell(bool vortex, double x, double y, double out[3]) {
  out[0] = out[1] = out[2] = 0;
  if (vortex) {
    const double rx = x - 0.5, ry = y - 0.5, g = std::exp(-(rx * rx + ry * ry) / 0.02);
    out[1] = -2.0 * ry * g;  // solid-body core, Gaussian envelope: max speed about 0.2
    out[2] = 2.0 * rx * g;
    const double dx = x - 0.65, dy = y - 0.5;
    out[0] = dx * dx + dy * dy < 0.01 ? 1.0 : 0.0;
  } else {  // plume
    const double dx = x - 0.5, dy = y - 0.15;
    if (dx * dx + dy * dy < 0.01) out[0] = 1.0, out[2] = 0.5;
  }
}

template <class T>
class SceneCells {
 public:
  explicit SceneCells(const SceneSpec& s)
      : s_(s), w_(s.sc.nx + 2), random_(s.seed, s.sc.nx),
        scene_(s.scene == "vortex" || s.scene == "plume" ? kAnalytic : s.scene == "random" ? kDrawn : kZeros) {
    for (const Placed& p : s.sets) sets_[field_index(p.field)].push_back(&p);
    for (const Placed& p : s.emits) emits_[field_index(p.field)].push_back(&p);
    if (scene_ != kDrawn) return;
    // Rows 1 and ny, which the ghost rows of every piece may need, drawn once.
    draws_.resize(3 * static_cast<std::size_t>(s.sc.nx));
    first_draws_ = last_draws_ = draws_;
    RandomRows edges(s.seed, s.sc.nx);
    edges.row(1, first_draws_.data());
    edges.row(s.sc.ny, last_draws_.data());
  }

  bool solid(int i, int j) const {
    if (!s_.png.empty() && s_.png[static_cast<std::size_t>(fluid::ix(i, j, w_))]) return true;
    for (const Shape2& o : s_.obstacles)
      if (covers(o, s_.sc, i, j)) return true;
    return false;
  }

  // Interior row j (1 to ny) of array a into row[1..nx]: the scene's value, then --set
  // in order, 0 inside obstacles; a source the sum of its emitters in T, in order.
  void row(int a, int j, T* row) {
    const int nx = s_.sc.nx;
    if (a >= kSrcD) {
      std::fill(row + 1, row + nx + 1, T(0));
      for (const Placed* e : emits_[a - kSrcD])
        for (int i = 1; i <= nx; ++i)
          if (covers(e->shape, s_.sc, i, j)) row[i] = row[i] + static_cast<T>(e->value);
      return;
    }
    if (a == kT || scene_ == kZeros) {
      std::fill(row + 1, row + nx + 1, T(0));
    } else if (scene_ == kDrawn) {
      const double* d = j == 1 ? first_draws_.data() : j == s_.sc.ny ? last_draws_.data() : draws_.data();
      if (j != 1 && j != s_.sc.ny) random_.row(j, draws_.data());
      for (int i = 1; i <= nx; ++i) row[i] = static_cast<T>(d[3 * static_cast<std::size_t>(i - 1) + static_cast<std::size_t>(a)]);
    } else {
      const bool vortex = s_.scene == "vortex";
      for (int i = 1; i <= nx; ++i) {
        double base[3];
        analytic_cell(vortex, (i - 0.5) / nx, (j - 0.5) / s_.sc.ny, base);
        row[i] = static_cast<T>(base[a]);
      }
    }
    for (const Placed* p : sets_[a])
      for (int i = 1; i <= nx; ++i)
        if (covers(p->shape, s_.sc, i, j)) row[i] = static_cast<T>(p->value);
    if (s_.solid())
      for (int i = 1; i <= nx; ++i)
        if (solid(i, j)) row[i] = T(0);
  }

  // Cells [first, first + count) of array a's record ((ny+2) x (nx+2), C order); d, u, v
  // and T with their ghost cells by the scene's sides (bnd: fluid::scene_set_bnd_at,
  // which reads rows 1 and ny for rows 0 and ny+1: kept from the first piece on).
  void piece(int a, int bnd, std::size_t first, std::size_t count, T* dst) {
    const std::size_t w = static_cast<std::size_t>(w_);
    const int ny = s_.sc.ny, ja = static_cast<int>(first / w), jb = static_cast<int>((first + count - 1) / w);
    auto interior = [&](int j, T* r) {
      std::fill(r, r + w, T(0));
      if (j >= 1 && j <= ny) row(a, j, r);
    };
    head_.resize(w), tail_.resize(w);
    interior(ja, head_.data());
    for (int j = ja + 1; j < jb; ++j) interior(j, dst + (static_cast<std::size_t>(j) * w - first));
    if (jb != ja) interior(jb, tail_.data());
    if (bnd >= 0) {
      if (edge_for_ != a) make_edges(a, bnd);
      T dummy{};
      fluid::scene_set_bnd_at<T>(s_.sc, bnd, [&](int i, int j) -> T& {
        T* r = j == ja ? head_.data() : j == jb ? tail_.data()
             : j > ja && j < jb ? dst + (static_cast<std::size_t>(j) * w - first) : edge_row(j);
        return r ? r[i] : dummy;
      }, T(0));
    }
    const std::size_t head_from = first - static_cast<std::size_t>(ja) * w;
    std::copy(head_.begin() + head_from, head_.begin() + std::min(w, head_from + count), dst);
    if (jb != ja) {
      const std::size_t tail_at = static_cast<std::size_t>(jb) * w - first;
      std::copy(tail_.begin(), tail_.begin() + (count - tail_at), dst + tail_at);
    }
  }

 private:
  T* edge_row(int j) {
    const int ny = s_.sc.ny;
    const int e = j == 0 ? 0 : j == 1 ? 1 : j == ny ? 2 : j == ny + 1 ? 3 : -1;
    return e < 0 ? nullptr : edges_[e].data();
  }
  // Rows 0, 1, ny and ny+1 of array a with their ghost cells.
  void make_edges(int a, int bnd) {
    const int ny = s_.sc.ny;
    for (auto& e : edges_) e.assign(static_cast<std::size_t>(w_), T(0));
    row(a, 1, edges_[1].data());
    row(a, ny, edges_[2].data());
    T dummy{};
    fluid::scene_set_bnd_at<T>(s_.sc, bnd, [&](int i, int j) -> T& {
      T* r = edge_row(j);
      return r ? r[i] : dummy;
    }, T(0));
    edge_for_ = a;
  }

  enum Base { kZeros, kAnalytic, kDrawn };
  const SceneSpec& s_;
  int w_;
  RandomRows random_;
  Base scene_;
  std::vector<const Placed*> sets_[4], emits_[4];
  std::vector<double> draws_, first_draws_, last_draws_;
  std::vector<T> head_, tail_, edges_[4];
  int edge_for_ = -1;
};

std::string cell_name(int i, int j) { return "[" + std::to_string(j) + ", " + std::to_string(i) + "]"; }
std::string number(double x) {
  std::ostringstream o;
  o << x;
  return o.str();
}

// fluid::validate_scene's checks (kernels/fluid/scene.cpp), cell by cell, in its order and
// with its words, for what the options can make: shapes and PNG masks mark interior cells
// with 1 and emitters cover interior cells, so 'solid' needs only a fluid cell (one not
// solid with a neighbour not solid, wrapped across periodic sides), the sources their
// values and the obstacle.
template <class T>
void validate_cells(const SceneSpec& s, SceneCells<T>& cells) {
  const int nx = s.sc.nx, ny = s.sc.ny;
  if (s.solid()) {
    auto solid_at = [&](int i, int j) {
      if (i < 1 || i > nx) {
        if (!s.sc.periodic_x()) return false;
        i = i < 1 ? nx : 1;
      }
      if (j < 1 || j > ny) {
        if (!s.sc.periodic_y()) return false;
        j = j < 1 ? ny : 1;
      }
      return cells.solid(i, j);
    };
    bool fluid_left = false;
    for (int j = 1; j <= ny && !fluid_left; ++j)
      for (int i = 1; i <= nx && !fluid_left; ++i)
        fluid_left = !solid_at(i, j) && !(solid_at(i - 1, j) && solid_at(i + 1, j) && solid_at(i, j - 1) && solid_at(i, j + 1));
    if (!fluid_left)
      fail_input("'solid' covers every interior cell (" + std::to_string(ny) + " x " + std::to_string(nx) + "): no fluid is left");
  }
  std::vector<T> r(static_cast<std::size_t>(nx) + 2);
  for (int k = 0; k < 4; ++k) {
    if (!s.source(k)) continue;
    const std::string name = fluid::kSourceNames[k];
    for (int j = 1; j <= ny; ++j) {
      cells.row(kSrcD + k, j, r.data());
      for (int i = 1; i <= nx; ++i) {
        const double x = static_cast<double>(r[static_cast<std::size_t>(i)]);
        if (x == 0) continue;
        if (!std::isfinite(x)) fail_input("non-finite value in '" + name + "' at " + cell_name(i, j) + ": " + number(x));
        if ((k == 0 || k == 3) && x < 0)
          fail_input("'" + name + "' must be >= 0 (a rate per unit time), got " + number(x) + " at " + cell_name(i, j));
        if (cells.solid(i, j)) fail_input("'" + name + "' must be 0 inside the obstacle, got " + number(x) + " at " + cell_name(i, j));
      }
    }
  }
  if (!s.temperature()) return;
  for (int j = 1; j <= ny; ++j) {
    cells.row(kT, j, r.data());
    for (int i = 1; i <= nx; ++i)
      if (!std::isfinite(static_cast<double>(r[static_cast<std::size_t>(i)])))
        fail_input("non-finite value in 'T' at " + cell_name(i, j) + ": " + number(static_cast<double>(r[static_cast<std::size_t>(i)])));
  }
}

// The records of write_scene_fields (kernels/fluid/scene.cpp: d, u, v, T, d0, u0, v0,
// solid, the sources), each in pieces.
template <class T>
void write_cells(const SceneSpec& s, const json& attrs, OutputFile& out) {
  SceneCells<T> cells(s);
  validate_cells(s, cells);
  const Shape shape{s.sc.ny + 2, s.sc.nx + 2};
  StreamWriter writer(out);
  writer.set_units(fluid::units());
  auto write_array = [&](const std::string& name, int a, int bnd, const json& a_attrs) {
    writer.write_in_pieces(name, dtype_of<T>(), shape, a_attrs, [&](std::uint64_t offset, std::size_t bytes, void* dst) {
      cells.piece(a, bnd, static_cast<std::size_t>(offset / sizeof(T)), bytes / sizeof(T), static_cast<T*>(dst));
    });
  };
  auto write_zeros = [&](const std::string& name) {
    writer.write_in_pieces(name, dtype_of<T>(), shape, attrs, [](std::uint64_t, std::size_t bytes, void* dst) {
      std::fill_n(static_cast<T*>(dst), bytes / sizeof(T), T(0));
    });
  };
  write_array("d", kD, fluid::kSceneScalar, attrs);
  write_array("u", kU, fluid::kSceneU, attrs);
  write_array("v", kV, fluid::kSceneV, attrs);
  if (s.temperature()) write_array("T", kT, fluid::kSceneScalar, attrs);
  for (const char* name : {"d0", "u0", "v0"}) write_zeros(name);
  json plain = json::object();
  if (attrs.contains("grid")) plain["grid"] = attrs["grid"];
  if (s.solid()) {
    json a = plain;
    a["kind"] = "fluid.solid";
    const std::size_t w = static_cast<std::size_t>(s.sc.nx) + 2;
    writer.write_in_pieces("solid", DType::u1, shape, a, [&](std::uint64_t offset, std::size_t bytes, void* dst) {
      auto* m = static_cast<std::uint8_t*>(dst);
      for (std::size_t c = 0; c < bytes; ++c) {
        const std::size_t cell = static_cast<std::size_t>(offset) + c;
        const int j = static_cast<int>(cell / w), i = static_cast<int>(cell % w);
        m[c] = j >= 1 && j <= s.sc.ny && i >= 1 && i <= s.sc.nx && cells.solid(i, j) ? 1 : 0;
      }
    });
  }
  for (int k = 0; k < 4; ++k)
    if (s.source(k)) {
      json a = plain;
      a["kind"] = "fluid.source";
      a["units"] = "per unit time";
      write_array(fluid::kSourceNames[k], kSrcD + k, -1, a);
    }
  writer.finish();
}

// --obstacle, --set and --emit in the order given (each shape must cover a cell's centre).
void read_placements(const Cli& cli, SceneSpec& s) {
  const Scene& sc = s.sc;
  for (const std::string& spec : all_values(cli, "obstacle")) {
    if (spec.rfind("png:", 0) == 0) {
      const std::vector<std::uint8_t> m = fluid::read_png_mask(spec.substr(4), sc.nx, sc.ny);
      if (s.png.empty()) s.png.assign(m.size(), 0);
      for (std::size_t i = 0; i < m.size(); ++i) s.png[i] |= m[i];
      continue;
    }
    s.obstacles.push_back(parse_shape(spec, "--obstacle"));
    if (!covers_any(s.obstacles.back(), sc))
      fail_input("--obstacle '" + spec + "' covers no cell's centre (cell size " + std::to_string(sc.length / sc.nx) + ")");
  }
  for (const char* option : {"set", "emit"})
    for (const std::string& spec : all_values(cli, option)) {
      const Placed p = parse_placed(spec, std::string("--") + option);
      if (!covers_any(p.shape, sc)) fail_input(std::string("--") + option + " '" + spec + "' covers no cell's centre");
      (option == std::string("set") ? s.sets : s.emits).push_back(p);
    }
}

Cli fluid_cli() {
  Cli cli({"gen-input fluid", "Write an initial state or scene for fluid-step", "",
           "  gen-input fluid --n 512 --scene react | fluid-step --steps 100 | render -o d.png\n"
           "  gen-input fluid --n 256,64 --length 4 --inflow left:1 --obstacle circle:1,0.5,0.1 | fluid-step --steps 50 -o tunnel.nps",
           "the initial state or scene for fluid-step"},
          kOutput | kNoProgressLine);
  cli.add("Fluid")("n,size", "Interior cells: N (N x N) or NX,NY, each >= 16 (arrays are (NY+2) x (NX+2))",
                   cxxopts::value<std::string>()->default_value("256"), "N")(
      "scene", "react (zeros, the react forcing; the default), empty (zeros, no forcing; the default with --bc, "
               "--inflow, --obstacle, --emit or --set), vortex, plume or random",
      cxxopts::value<std::string>(), "NAME")(
      "seed", "Random seed (scene random)", cxxopts::value<std::uint64_t>()->default_value("1"), "S")(
      "force", "react forcing: velocity scale", cxxopts::value<double>()->default_value("5"), "F")(
      "source", "react forcing: density scale", cxxopts::value<double>()->default_value("100"), "S")(
      "length", "The box's length along x (the cell size is LENGTH / NX)", cxxopts::value<double>()->default_value("1"), "L")(
      "bc", "Sides: SIDE=KIND[,...], SIDE left, right, bottom, top, x, y or all, KIND closed, open or periodic",
      cxxopts::value<std::string>(), "SPEC")(
      "inflow", "A wind tunnel: fluid enters at SIDE at SPEED (the opposite side opens unless --bc names it)",
      cxxopts::value<std::string>(), "SIDE:SPEED")(
      "obstacle", "Solid cells: circle:X,Y,R, box:X0,Y0,X1,Y1 or png:FILE (dark pixels); repeatable",
      cxxopts::value<std::string>(), "SHAPE")(
      "emit", "An emitter: FIELD=RATE@SHAPE adds RATE per unit time to d, u, v or T in the shape; repeatable",
      cxxopts::value<std::string>(), "SPEC")(
      "set", "Initial values: FIELD=VALUE@SHAPE sets d, u, v or T in the shape; repeatable",
      cxxopts::value<std::string>(), "SPEC")(
      "precision", "fp32 (f4 arrays) or fp64 (f8)", cxxopts::value<std::string>()->default_value("fp32"), "P");
  return cli;
}

// The box: --n, --length, --bc and --inflow.
Scene box_of(const Cli& cli) {
  const std::string size = cli.get<std::string>("size");
  const std::vector<std::string> dims = split_fields(size, ',');
  if (dims.size() > 2) fail_input("--n must be N or NX,NY, got '" + size + "'");
  int n[2] = {0, 0};
  for (std::size_t k = 0; k < dims.size(); ++k) {
    // a number in another notation or with a fraction ("0x10", "1.5"): the integer rule's message
    if (number_in_any_notation(dims[k]) && !decimal_integer(dims[k])) fail_not_decimal_integer("--n", dims[k]);
    const double x = finite_number(dims[k], "--n");
    if (x != std::floor(x) || x < fluid::kMinN || x > fluid::kMaxN)
      fail_input("--n must be in [" + std::to_string(fluid::kMinN) + ", " + std::to_string(fluid::kMaxN) + "], got " + dims[k]);
    n[k] = static_cast<int>(x);
  }
  Scene sc;
  sc.nx = n[0];
  sc.ny = dims.size() == 2 ? n[1] : n[0];
  sc.length = cli.get<double>("length");
  bool set[4] = {false, false, false, false};
  if (cli.has("bc")) fluid::apply_bc_spec(sc, cli.get<std::string>("bc"), set);
  if (cli.has("inflow")) fluid::apply_inflow_spec(sc, cli.get<std::string>("inflow"), set);
  fluid::check_sides(sc);
  return sc;
}

// The attrs of the state's records.
json state_attrs(const SceneSpec& s, double force, double source) {
  const Scene& sc = s.sc;
  json attrs = {{"kind", "fluid.state"},
                {"scene", s.scene},
                {"seed", s.seed},
                {"step", 0},
                {"time", 0.0},
                {"layout", "[y][x], (ny+2) x (nx+2), boundary layer included"},
                {"grid", fluid::grid_attrs(sc)},
                {"forcing", {{"type", s.scene == "react" ? "react" : "none"}, {"force", force}, {"source", source}}}};
  if (sc.nx == sc.ny) attrs["n"] = sc.nx;
  attrs["nx"] = sc.nx;
  attrs["ny"] = sc.ny;
  if (sc.length != 1.0 || !sc.all_closed()) attrs["box"] = fluid::scene_attrs(sc);
  return attrs;
}

int run_fluid(int argc, char** argv) {
  // 1. The options: the box, the scene, the precision and the forcing.
  Cli cli = fluid_cli();
  cli.parse(argc, argv);  // --n N works too (Cli reads --n as -n)
  SceneSpec s;
  s.sc = box_of(cli);
  const bool user_scene = cli.has("bc") || cli.has("inflow") || cli.has("obstacle") || cli.has("emit") || cli.has("set");
  s.scene = cli.has("scene") ? cli.get<std::string>("scene") : user_scene ? "empty" : "react";
  if (s.scene != "react" && s.scene != "empty" && s.scene != "vortex" && s.scene != "plume" && s.scene != "random")
    fail_input("--scene must be react, empty, vortex, plume or random, got '" + s.scene + "'");
  const std::string precision = cli.get<std::string>("precision");
  if (precision != "fp32" && precision != "fp64") fail_input("--precision must be fp32 or fp64, got '" + precision + "'");
  const double force = cli.get<double>("force"), source = cli.get<double>("source");
  if (!std::isfinite(force) || !std::isfinite(source)) fail_input("--force and --source must be finite");
  s.seed = cli.get<std::uint64_t>("seed");
  const json attrs = cli.stamp(state_attrs(s, force, source));
  // 2. The output (a terminal refused before the work), and the memory: a piece of a
  //    record and a few rows, and a PNG obstacle's mask (a byte a cell).
  OutputFile out(cli.output());
  const double cells = double(s.sc.nx + 2) * double(s.sc.ny + 2), value = precision == "fp32" ? 4 : 8;
  bool png = false;
  for (const std::string& spec : all_values(cli, "obstacle")) png = png || spec.rfind("png:", 0) == 0;
  const double piece = std::min(cells * value, double(StreamWriter::kPieceBytes)) + 8 * (s.sc.nx + 2) * value;
  const std::string what = "a grid of " + std::to_string(s.sc.nx) + " x " + std::to_string(s.sc.ny) +
                           " cells (written in pieces of " + format_bytes(double(StreamWriter::kPieceBytes)) + ")";
  require_host_memory(png ? MemoryEstimate{what, cells, 1.0, "cell", piece} : MemoryEstimate{what, piece, 1.0, "byte"});
  // 3. The obstacles, initial values and emitters; 4. the records, checked, then written.
  read_placements(cli, s);
  if (precision == "fp32") write_cells<float>(s, attrs, out);
  else write_cells<double>(s, attrs, out);
  out.commit();
  return 0;
}

const RegisterGenerator reg{{"fluid", "stable-fluids state or scene for fluid-step: react, empty, vortex, plume or random; obstacles, emitters, sides", run_fluid}};

}  // namespace
}  // namespace numpipe
