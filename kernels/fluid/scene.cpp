// The scene path's host code shared by both backends and the tools: the
// obstacle's cell codes, the checks of a scene's arrays, the scene's attrs and
// records, and the diagnostics.
#include "scene.hpp"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <sstream>

#include "common/finite.hpp"
#include "common/strings.hpp"

namespace numpipe::fluid {

namespace {

std::string cell_name(std::size_t i, int nx) {
  const std::size_t w = static_cast<std::size_t>(nx) + 2;
  return "[" + std::to_string(i / w) + ", " + std::to_string(i % w) + "]";
}
std::string number(double x) {
  std::ostringstream o;
  o << x;
  return o.str();
}
bool on_boundary_layer(std::size_t i, int nx, int ny) {
  const std::size_t w = static_cast<std::size_t>(nx) + 2;
  const std::size_t y = i / w, x = i % w;
  return y == 0 || x == 0 || y == static_cast<std::size_t>(ny) + 1 || x == static_cast<std::size_t>(nx) + 1;
}
int side_index(const std::string& name) {
  for (int k = 0; k < 4; ++k)
    if (name == side_name(k)) return k;
  return -1;
}

}  // namespace

// ---- obstacle ------------------------------------------------------------------------------
std::vector<std::uint8_t> cell_codes(const Scene& s, const std::vector<std::uint8_t>& solid) {
  const int nx = s.nx, ny = s.ny, w = nx + 2;
  std::vector<std::uint8_t> code(solid.size(), 0);
  auto is_solid = [&](int i, int j) {
    if (i < 1 || i > nx) {
      if (!s.periodic_x()) return false;
      i = i < 1 ? nx : 1;
    }
    if (j < 1 || j > ny) {
      if (!s.periodic_y()) return false;
      j = j < 1 ? ny : 1;
    }
    return solid[static_cast<std::size_t>(ix(i, j, w))] != 0;
  };
  for (int j = 1; j <= ny; ++j)
    for (int i = 1; i <= nx; ++i) {
      std::uint8_t c = 0;
      if (is_solid(i, j)) {
        c = kSolidSelf;
      } else {
        if (is_solid(i - 1, j)) c |= kSolidL;
        if (is_solid(i + 1, j)) c |= kSolidR;
        if (is_solid(i, j - 1)) c |= kSolidD;
        if (is_solid(i, j + 1)) c |= kSolidU;
        if (c == (kSolidL | kSolidR | kSolidD | kSolidU)) c = kSolidSelf;  // no fluid can reach it
      }
      code[static_cast<std::size_t>(ix(i, j, w))] = c;
    }
  return code;
}

ObstacleLists obstacle_lists(const Scene& s, const std::vector<std::uint8_t>& solid) {
  ObstacleLists L;
  const int nx = s.nx, ny = s.ny, w = nx + 2;
  L.code = cell_codes(s, solid);
  auto neighbour = [&](int i, int j) -> std::int64_t {  // wrapped across periodic sides; -1 outside
    if (i < 1 || i > nx) {
      if (!s.periodic_x()) return -1;
      i = i < 1 ? nx : 1;
    }
    if (j < 1 || j > ny) {
      if (!s.periodic_y()) return -1;
      j = j < 1 ? ny : 1;
    }
    return ix(i, j, w);
  };
  L.row_begin.assign(static_cast<std::size_t>(ny + 3), 0);
  L.row_has.assign(static_cast<std::size_t>(ny + 2), 0);
  for (int j = 1; j <= ny; ++j) {
    L.row_begin[static_cast<std::size_t>(j)] = static_cast<int>(L.fix.size());
    for (int i = 1; i <= nx; ++i) {
      const std::int64_t c = ix(i, j, w);
      const int code = L.code[static_cast<std::size_t>(c)];
      if (code) L.row_has[static_cast<std::size_t>(j)] = 1;
      if (code & kSolidSelf) {
        L.solid.push_back(c);
        if (i == 1 || i == nx || j == 1 || j == ny) L.touches_side = true;
        ObstacleLists::Border b{c, {neighbour(i - 1, j), neighbour(i + 1, j), neighbour(i, j - 1), neighbour(i, j + 1)}, 0};
        for (int k = 0; k < 4; ++k)
          if (b.nb[k] >= 0 && !(L.code[static_cast<std::size_t>(b.nb[k])] & kSolidSelf)) b.fluid |= 1 << k;
        if (b.fluid) L.border.push_back(b);
      } else if (code) {
        L.fix.push_back(ObstacleLists::Fix{i, code});
      }
    }
  }
  for (int j = ny + 1; j <= ny + 2; ++j) L.row_begin[static_cast<std::size_t>(j)] = static_cast<int>(L.fix.size());
  return L;
}

template <class T>
void validate_scene(const Scene& s, const SceneFields<T>& f) {
  const int nx = s.nx, ny = s.ny;
  check_sides(s);
  if (!f.solid.empty()) {
    for (std::size_t i = 0; i < f.solid.size(); ++i) {
      const int x = f.solid[i];
      if (x > 1) fail_input("'solid' must hold 0 (fluid) or 1 (solid), got " + std::to_string(x) + " at " + cell_name(i, nx));
      if (x && on_boundary_layer(i, nx, ny))
        fail_input("'solid' must be 0 on the boundary layer (the sides are chosen by --bc), got 1 at " + cell_name(i, nx));
    }
    const std::vector<std::uint8_t> code = cell_codes(s, f.solid);
    std::size_t fluid = 0;
    for (std::size_t i = 0; i < code.size(); ++i)
      if (!on_boundary_layer(i, nx, ny) && !(code[i] & kSolidSelf)) ++fluid;
    if (fluid == 0)
      fail_input("'solid' covers every interior cell (" + std::to_string(ny) + " x " + std::to_string(nx) +
                 "): no fluid is left");
  }
  const FieldVector<T>* src[4] = {&f.src_d, &f.src_u, &f.src_v, &f.src_t};
  for (int k = 0; k < 4; ++k) {
    const FieldVector<T>& a = *src[k];
    for (std::size_t i = 0; i < a.size(); ++i) {
      const double x = static_cast<double>(a[i]);
      if (x == 0) continue;
      const auto where = [&] { return " at " + cell_name(i, nx); };  // built only for a message
      if (!std::isfinite(x)) fail_input(std::string("non-finite value in '") + kSourceNames[k] + "'" + where() + ": " + number(x));
      if ((k == 0 || k == 3) && x < 0)
        fail_input(std::string("'") + kSourceNames[k] + "' must be >= 0 (a rate per unit time), got " + number(x) + where());
      if (on_boundary_layer(i, nx, ny))
        fail_input(std::string("'") + kSourceNames[k] + "' must be 0 on the boundary layer, got " + number(x) + where());
      if (!f.solid.empty() && f.solid[i])
        fail_input(std::string("'") + kSourceNames[k] + "' must be 0 inside the obstacle, got " + number(x) + where());
    }
  }
  for (std::size_t i = 0; i < f.t.size(); ++i)
    if (!std::isfinite(static_cast<double>(f.t[i])))
      fail_input("non-finite value in 'T' at " + cell_name(i, nx) + ": " + number(static_cast<double>(f.t[i])));
}
template void validate_scene(const Scene&, const SceneFields<float>&);
template void validate_scene(const Scene&, const SceneFields<double>&);

// ---- sides -----------------------------------------------------------------------------------
void apply_bc_spec(Scene& s, const std::string& spec, bool set[4]) {
  for (const std::string& item : split_fields(spec, ',')) {
    const auto eq = item.find('=');
    if (eq == std::string::npos)
      fail_input("--bc: expected SIDE=KIND (SIDE left, right, bottom, top, x, y or all; KIND closed, open or periodic), got '" + item + "'");
    const std::string side = item.substr(0, eq), kind_name = item.substr(eq + 1);
    SideKind kind;
    if (kind_name == "closed") kind = SideKind::closed;
    else if (kind_name == "open") kind = SideKind::open;
    else if (kind_name == "periodic") kind = SideKind::periodic;
    else fail_input("--bc: the kind must be closed, open or periodic (inflow: --inflow SIDE:SPEED), got '" + kind_name + "' in '" + item + "'");
    bool pick[4] = {side == "x" || side == "all", side == "x" || side == "all", side == "y" || side == "all",
                    side == "y" || side == "all"};
    if (side_index(side) >= 0) pick[side_index(side)] = true;
    else if (side != "x" && side != "y" && side != "all")
      fail_input("--bc: the side must be left, right, bottom, top, x, y or all, got '" + side + "' in '" + item + "'");
    for (int k = 0; k < 4; ++k) {
      if (!pick[k]) continue;
      s.side[k] = kind;
      s.inflow[k] = 0;
      set[k] = true;
    }
  }
}

void apply_inflow_spec(Scene& s, const std::string& spec, bool set[4]) {
  const auto colon = spec.find(':');
  const int k = colon == std::string::npos ? -1 : side_index(spec.substr(0, colon));
  if (k < 0) fail_input("--inflow: expected SIDE:SPEED with SIDE left, right, bottom or top, got '" + spec + "'");
  const double speed = decimal_number(spec.substr(colon + 1), "--inflow '" + spec + "': SPEED");
  if (speed <= 0) fail_input("--inflow: SPEED must be finite and > 0, got " + number(speed) + " in '" + spec + "'");
  s.side[k] = SideKind::inflow;
  s.inflow[k] = speed;
  set[k] = true;
  const int opposite = k ^ 1;
  if (!set[opposite]) s.side[opposite] = SideKind::open;  // where the inflow leaves
}

void check_sides(const Scene& s) {
  for (int k = 0; k < 4; k += 2) {
    const bool a = s.side[k] == SideKind::periodic, b = s.side[k + 1] == SideKind::periodic;
    if (a != b)
      fail_input(std::string("periodic sides come in pairs: ") + side_name(k) + " is " + side_kind_name(s.side[k]) +
                 ", " + side_name(k + 1) + " is " + side_kind_name(s.side[k + 1]));
  }
  for (int k = 0; k < 4; ++k)
    if (s.side[k] == SideKind::inflow && !(std::isfinite(s.inflow[k]) && s.inflow[k] > 0))
      fail_input(std::string("inflow speed of the ") + side_name(k) + " side must be finite and > 0, got " + number(s.inflow[k]));
  if (!(std::isfinite(s.length) && s.length > 0)) fail_input("the domain length (--length) must be finite and > 0, got " + number(s.length));
}

json scene_attrs(const Scene& s) {
  json sides = json::object(), inflow = json::object();
  for (int k = 0; k < 4; ++k) {
    sides[side_name(k)] = side_kind_name(s.side[k]);
    if (s.side[k] == SideKind::inflow) inflow[side_name(k)] = s.inflow[k];
  }
  json a = {{"length", s.length}, {"sides", sides}};
  if (!inflow.empty()) a["inflow"] = inflow;
  return a;
}

json grid_attrs(const Scene& s) {
  const double h = s.length / s.nx;
  return {{"dims", {"y", "x"}}, {"origin", {-0.5 * h, -0.5 * h}}, {"spacing", {h, h}}};
}

Scene scene_from_attrs(const json& attrs, int nx, int ny) {
  Scene s;
  s.nx = nx;
  s.ny = ny;
  if (!attrs.contains("box")) return s;
  const json& a = attrs["box"];
  if (!a.is_object()) fail_input("input attrs: 'box' must be an object, got " + a.dump());
  if (a.contains("length")) {
    if (!a["length"].is_number()) fail_input("input attrs: box length must be a number, got " + a["length"].dump());
    s.length = a["length"].get<double>();
  }
  if (a.contains("sides")) {
    const json& sides = a["sides"];
    if (!sides.is_object()) fail_input("input attrs: box sides must be an object, got " + sides.dump());
    for (auto it = sides.begin(); it != sides.end(); ++it) {
      const int k = side_index(it.key());
      if (k < 0) fail_input("input attrs: unknown side '" + it.key() + "' (left, right, bottom, top)");
      const std::string kind = it.value().is_string() ? it.value().get<std::string>() : it.value().dump();
      if (kind == "closed") s.side[k] = SideKind::closed;
      else if (kind == "open") s.side[k] = SideKind::open;
      else if (kind == "periodic") s.side[k] = SideKind::periodic;
      else if (kind == "inflow") s.side[k] = SideKind::inflow;
      else fail_input("input attrs: side " + it.key() + " must be closed, open, periodic or inflow, got '" + kind + "'");
    }
  }
  if (a.contains("inflow")) {
    const json& in = a["inflow"];
    if (!in.is_object()) fail_input("input attrs: box inflow must be an object, got " + in.dump());
    for (auto it = in.begin(); it != in.end(); ++it) {
      const int k = side_index(it.key());
      if (k < 0 || !it.value().is_number()) fail_input("input attrs: bad inflow entry " + it.key() + ": " + it.value().dump());
      s.inflow[k] = it.value().get<double>();
    }
  }
  check_sides(s);
  return s;
}

// ---- records ---------------------------------------------------------------------------------
SceneRecords find_scene_records(const std::vector<Record>& records, const StateInput& in) {
  SceneRecords r;
  for (const auto& rec : records) {
    if (rec.name == "solid") r.solid = &rec;
    else if (rec.name == "T") r.t = &rec;
    for (int k = 0; k < 4; ++k)
      if (rec.name == kSourceNames[k]) r.src[k] = &rec;
  }
  const Record& d = *in.records[0];
  auto check_shape = [&](const Record* rec) {
    if (rec && rec->shape != d.shape)
      fail_input("shape of '" + rec->name + "' is " + shape_string(rec->shape) + ", expected " + shape_string(d.shape) +
                 " like 'd'");
  };
  check_shape(r.solid);
  check_shape(r.t);
  for (const Record* s : r.src) check_shape(s);
  if (r.solid && r.solid->dtype != DType::u1)
    fail_input(std::string("record 'solid' must be u1 (0 fluid, 1 solid), got ") + dtype_name(r.solid->dtype));
  auto check_float = [&](const Record* rec) {
    if (rec && rec->dtype != DType::f4 && rec->dtype != DType::f8)
      fail_input("record '" + rec->name + "' must be f4 or f8, got " + dtype_name(rec->dtype));
  };
  check_float(r.t);
  for (const Record* s : r.src) check_float(s);
  return r;
}

template <class T>
SceneFields<T> load_scene_fields(const StateInput& in, const SceneRecords& r) {
  SceneFields<T> f;
  f.resize_uninitialised(in.nx, in.ny);  // every value converted below
  FieldVector<T>* dst[6] = {&f.d, &f.u, &f.v, &f.d0, &f.u0, &f.v0};
  for (int k = 0; k < 6; ++k) in.records[k]->convert_to(dst[k]->data());
  if (r.solid) f.solid.assign(r.solid->data<std::uint8_t>(), r.solid->data<std::uint8_t>() + r.solid->size());
  if (r.t) f.t = record_values<T>(*r.t);
  else if (r.src[3]) f.t.assign(f.cells(), T(0));
  FieldVector<T>* src[4] = {&f.src_d, &f.src_u, &f.src_v, &f.src_t};
  for (int k = 0; k < 4; ++k)
    if (r.src[k]) *src[k] = record_values<T>(*r.src[k]);
  return f;
}
template SceneFields<float> load_scene_fields(const StateInput&, const SceneRecords&);
template SceneFields<double> load_scene_fields(const StateInput&, const SceneRecords&);

template <class T>
void write_scene_fields(StreamWriter& w, const SceneFields<T>& f, const json& attrs, const std::string& prefix,
                        bool all) {
  const Shape shape{f.ny + 2, f.nx + 2};
  const FieldVector<T>* main[6] = {&f.d, &f.u, &f.v, &f.d0, &f.u0, &f.v0};
  for (int k = 0; k < 3; ++k) w.write<T>(prefix + kFieldNames[k], shape, main[k]->data(), attrs);
  if (f.temperature()) w.write<T>(prefix + "T", shape, f.t.data(), attrs);
  if (!all) return;
  for (int k = 3; k < 6; ++k) w.write<T>(prefix + kFieldNames[k], shape, main[k]->data(), attrs);
  json plain = json::object();
  if (attrs.contains("grid")) plain["grid"] = attrs["grid"];
  if (!f.solid.empty()) {
    json a = plain;
    a["kind"] = "fluid.solid";
    w.write<std::uint8_t>("solid", shape, f.solid.data(), a);
  }
  const FieldVector<T>* src[4] = {&f.src_d, &f.src_u, &f.src_v, &f.src_t};
  for (int k = 0; k < 4; ++k)
    if (!src[k]->empty()) {
      json a = plain;
      a["kind"] = "fluid.source";
      a["units"] = "per unit time";
      w.write<T>(kSourceNames[k], shape, src[k]->data(), a);
    }
}
template void write_scene_fields(StreamWriter&, const SceneFields<float>&, const json&, const std::string&, bool);
template void write_scene_fields(StreamWriter&, const SceneFields<double>&, const json&, const std::string&, bool);

// ---- diagnostics -------------------------------------------------------------------------------
namespace {
// The diagnostics of an nx x ny interior (rows of nx + 2 with the halo) of cell size
// 1 / inv_h; `code` is the obstacle's cell codes (cell_codes), null without one: a
// solid cell's d counts in the total, its velocity in neither maximum, and a solid
// neighbour's velocity is the cell's own reflected (the no-slip wall).
template <class T>
Diagnostics diagnose_interior(int nx, int ny, double inv_h, const T* d, const T* u, const T* v,
                              const std::uint8_t* code) {
  Diagnostics g;
  const int w = nx + 2;
  // Fixed order: each row's sum in turn, then the rows' sums in turn (the rows on all
  // threads, the same bits on any number); maxima do not depend on the order.
  std::vector<double> rows(static_cast<std::size_t>(ny) + 1, 0.0);
  double max_speed = 0, max_divergence = 0;
#pragma omp parallel for schedule(static) reduction(max : max_speed, max_divergence)
  for (int j = 1; j <= ny; ++j) {
    double row = 0;
    for (int i = 1; i <= nx; ++i) {
      const std::int64_t c = ix(i, j, w);
      const int cd = code ? code[static_cast<std::size_t>(c)] : 0;
      row += static_cast<double>(d[c]);
      if (cd & kSolidSelf) continue;
      const double uc = u[c], vc = v[c];
      max_speed = std::max(max_speed, std::sqrt(uc * uc + vc * vc));
      const double ul = cd & kSolidL ? -uc : u[c - 1], ur = cd & kSolidR ? -uc : u[c + 1];
      const double vd = cd & kSolidD ? -vc : v[c - w], vu = cd & kSolidU ? -vc : v[c + w];
      max_divergence = std::max(max_divergence, std::fabs(0.5 * inv_h * (ur - ul + vu - vd)));
    }
    rows[static_cast<std::size_t>(j)] = row;
  }
  for (int j = 1; j <= ny; ++j) g.total_density += rows[static_cast<std::size_t>(j)];
  g.max_speed = max_speed;
  g.max_divergence = max_divergence;
  return g;
}
template <class T>
bool all_finite(std::initializer_list<const FieldVector<T>*> fields) {
  for (const auto* a : fields)
    if (first_non_finite(a->data(), a->size()) >= 0) return false;
  return true;
}
}  // namespace

template <class T>
Diagnostics diagnose(const Fields<T>& f) {
  // The unit square: the cell size is 1 / n.
  Diagnostics g = diagnose_interior(f.n, f.n, static_cast<double>(f.n), f.d.data(), f.u.data(), f.v.data(), nullptr);
  g.finite = all_finite<T>({&f.d, &f.u, &f.v});
  return g;
}
template Diagnostics diagnose(const Fields<float>&);
template Diagnostics diagnose(const Fields<double>&);

template <class T>
Diagnostics diagnose_scene(const Scene& s, const SceneFields<T>& f) {
  const std::vector<std::uint8_t> code = f.solid.empty() ? std::vector<std::uint8_t>() : cell_codes(s, f.solid);
  Diagnostics g = diagnose_interior(s.nx, s.ny, s.inv_h(), f.d.data(), f.u.data(), f.v.data(),
                                    code.empty() ? nullptr : code.data());
  g.finite = all_finite<T>({&f.d, &f.u, &f.v, &f.t});
  return g;
}
template Diagnostics diagnose_scene(const Scene&, const SceneFields<float>&);
template Diagnostics diagnose_scene(const Scene&, const SceneFields<double>&);

double scene_bytes_per_cell_step(const Params& p, const Scene& s, bool has_solid, int sources, bool temperature,
                                 int element_size) {
  // Elements read + written per interior cell and step by the scene path's
  // passes (docs/fluid.md): a half-sweep reads the row and its neighbours
  // (one element per cell from memory: the other colour's rows stay in cache),
  // x0 of its colour and writes its colour: 2 per cell and iteration... times
  // two half-sweeps; 5 solves (6 with a temperature); react 6; add_source 6;
  // two divergences 4 each, two gradients 5 each; the velocity's advection 6,
  // each scalar's 4; each emitter 2; forces 6 (confinement) or 3 (buoyancy).
  const double solves = temperature ? 6 : 5;
  double elements = solves * p.iters * 4 + 6 + 6 + 2 * 4 + 2 * 5 + 6 + 4 * (temperature ? 2 : 1) + 2 * sources;
  if (s.vorticity != 0) elements += 6;
  if (s.buoyancy_a != 0 || s.buoyancy_b != 0) elements += 3;
  double bytes = elements * element_size;
  if (has_solid) bytes += solves * p.iters * 2;  // the obstacle's cell codes (u1), read by the GPU's half-sweeps
  return bytes;
}

}  // namespace numpipe::fluid
