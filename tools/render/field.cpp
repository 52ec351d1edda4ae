#include "render/field.hpp"

#include <algorithm>
#include <cmath>

#include "common/units.hpp"

namespace numpipe::render {
namespace {

using exporter::Dataset;
using exporter::Variable;

// A record seen as a volume [n0, n1, n2] (a 2-D record as [1, n0, n1]).
struct Volume {
  const Record* r;
  std::int64_t n[3];
  double at(const std::int64_t i[3]) const {
    return r->value_as_double(static_cast<std::size_t>((i[0] * n[1] + i[1]) * n[2] + i[2]));
  }
};

Volume volume_of(const Record& r) {
  Volume v{&r, {1, 1, 1}};
  if (r.shape.size() == 2) v.n[1] = r.shape[0], v.n[2] = r.shape[1];
  else for (int k = 0; k < 3; ++k) v.n[k] = r.shape[static_cast<std::size_t>(k)];
  return v;
}

// d f / d(axis a) at i: central differences inside, one-sided at the ends.
double derivative(const Volume& f, int a, const std::int64_t i[3], double h) {
  const std::int64_t n = f.n[a];
  if (n < 2) return 0;
  std::int64_t lo[3] = {i[0], i[1], i[2]}, hi[3] = {i[0], i[1], i[2]};
  lo[a] = std::max<std::int64_t>(i[a] - 1, 0);
  hi[a] = std::min<std::int64_t>(i[a] + 1, n - 1);
  return (f.at(hi) - f.at(lo)) / (static_cast<double>(hi[a] - lo[a]) * h);
}

std::string list_names(const Dataset& ds) {
  std::string s;
  for (const auto& v : ds.variables) s += (s.empty() ? "" : ", ") + v.name;
  return s;
}

// The records of `name` to draw: every one of a series (or of snap_NAME's), else the last.
std::vector<const Record*> records_of(const Dataset& ds, const std::string& name, bool series, bool required = true) {
  const Variable* v = ds.variable(name);
  const Variable* snap = ds.variable("snap_" + name);
  if (series) {
    // One copy for the three cases (GCC 13 saw a copy known to hold at most one pointer
    // as out of bounds: -Warray-bounds).
    const Variable* pick = v && v->records.size() > 1 ? v : snap ? snap : v;
    if (pick) return pick->records;
  } else {
    if (v) return {v->records.back()};
    if (snap) return {snap->records.back()};
  }
  if (required) fail_input("no record named '" + name + "' (records: " + list_names(ds) + ")");
  return {};
}

// The names of a record's axes (its series axis left out).
std::vector<std::string> axes_of(const Dataset& ds, const Record& r) {
  const Variable* v = ds.variable(r.name);
  std::vector<std::string> dims = v ? v->dims : std::vector<std::string>{};
  if (v && v->records.size() > 1) dims.erase(dims.begin());
  if (dims.size() != r.shape.size()) {
    dims.clear();
    for (std::size_t i = 0; i < r.shape.size(); ++i) dims.push_back(r.name + "_dim" + std::to_string(i));
  }
  return dims;
}

double spacing_of(const Dataset& ds, const std::string& axis) {
  const exporter::Axis* a = ds.axis(axis);
  if (a && a->coordinate.size() > 1 && a->coordinate[1] != a->coordinate[0]) return a->coordinate[1] - a->coordinate[0];
  return 1.0;
}

}  // namespace

double vorticity_2d_at(const Record& u, const Record& v, std::int64_t row, std::int64_t col, double dy, double dx) {
  const Volume U = volume_of(u), V = volume_of(v);
  const std::int64_t i[3] = {0, row, col};
  return derivative(V, 2, i, dx) - derivative(U, 1, i, dy);
}

std::vector<Field> make_fields(const Dataset& ds, const FieldRequest& rq) {
  // The source records: one list per component, each one per frame.
  std::vector<std::vector<const Record*>> parts;
  std::string title = rq.array;
  const std::string& d = rq.derive;
  if (!rq.speed_u.empty()) {
    parts = {records_of(ds, rq.speed_u, rq.series), records_of(ds, rq.speed_v, rq.series)};
    title = "speed |(" + rq.speed_u + ", " + rq.speed_v + ")|";
  } else if (!d.empty()) {
    if (d != "speed" && d != "vorticity" && d != "vorticity_magnitude")
      fail_input("--derive must be speed, vorticity or vorticity_magnitude, got '" + d + "'");
    // fluid-step's u, v or ns-step's vx, vy, vz (or their snapshots).
    const bool three = !records_of(ds, "vx", rq.series, false).empty();
    const std::vector<std::string> comps = three ? std::vector<std::string>{"vx", "vy", "vz"} : std::vector<std::string>{"u", "v"};
    for (const auto& c : comps) {
      auto rs = records_of(ds, c, rq.series, false);
      if (rs.empty())
        fail_input("--derive " + d + " needs the velocity records u, v (2-D) or vx, vy, vz (3-D) (records: " +
                   list_names(ds) + ")");
      parts.push_back(rs);
    }
    if (d == "vorticity" && three) fail_input("--derive vorticity is for 2-D flows; a 3-D one has vorticity_magnitude");
    if (d == "vorticity_magnitude" && !three) fail_input("--derive vorticity_magnitude is for 3-D flows; a 2-D one has vorticity");
    title = d == "speed" ? "speed |v|" : d == "vorticity" ? "vorticity" : "vorticity magnitude";
  } else {
    parts = {records_of(ds, rq.array, rq.series)};
    title = rq.array.rfind("snap_", 0) == 0 ? rq.array.substr(5) : rq.array;
  }
  for (std::size_t k = 1; k < parts.size(); ++k) {
    if (parts[k].size() != parts[0].size())
      fail_input("'" + parts[0][0]->name + "' has " + std::to_string(parts[0].size()) + " records but '" + parts[k][0]->name +
                 "' " + std::to_string(parts[k].size()));
    if (parts[k][0]->shape != parts[0][0]->shape)
      fail_input("'" + parts[0][0]->name + "' has shape " + shape_string(parts[0][0]->shape) + " but '" +
                 parts[k][0]->name + "' " + shape_string(parts[k][0]->shape));
  }
  const Record& first = *parts[0][0];
  const std::size_t ndim = first.shape.size();
  if (first.size() == 0) fail_input("record '" + first.name + "' is empty: shape " + shape_string(first.shape));
  if (ndim != 2 && ndim != 3)
    fail_input("render draws 2-D arrays or slices of 3-D ones as images; '" + first.name + "' has shape " +
               shape_string(first.shape) + (ndim == 1 ? " (draw it as a line plot: --plot " + first.name + ")" : ""));
  if (d == "vorticity" && ndim != 2) fail_input("--derive vorticity needs 2-D velocity records");
  if (d == "vorticity_magnitude" && ndim != 3) fail_input("--derive vorticity_magnitude needs 3-D velocity records");

  // Axes as a volume [n0, n1, n2] (2-D: a dummy axis 0).
  std::vector<std::string> names = axes_of(ds, first);
  if (ndim == 2) names.insert(names.begin(), "");
  const Volume geom = volume_of(first);
  int fixed = 0;
  std::int64_t index = 0;
  if (ndim == 3) {
    if (!rq.slice_axis.empty()) {
      fixed = -1;
      for (int k = 0; k < 3; ++k)
        if (names[static_cast<std::size_t>(k)] == rq.slice_axis || rq.slice_axis == std::to_string(k)) fixed = k;
      if (fixed < 0)
        fail_input("--slice " + rq.slice_axis + ":" + std::to_string(rq.slice_index) + ": '" + first.name +
                   "' has axes 0, 1, 2 (" + names[0] + ", " + names[1] + ", " + names[2] + ")");
    }
    index = rq.slice_index < 0 ? geom.n[fixed] / 2 : rq.slice_index;
    if (index >= geom.n[fixed])
      fail_input("--slice " + std::to_string(fixed) + ":" + std::to_string(index) + " is outside '" + first.name +
                 "' of shape " + shape_string(first.shape));
  } else if (!rq.slice_axis.empty()) {
    fail_input("--slice applies to 3-D arrays; '" + first.name + "' has shape " + shape_string(first.shape));
  }
  // The two axes shown: rows (vertical) then columns; axes named x, y, z put the
  // earlier letter across (x across y, y across z).
  int vert = fixed == 0 ? 1 : 0, across = fixed == 2 ? 1 : 2;
  auto xyz = [](const std::string& s) { return s == "x" || s == "y" || s == "z"; };
  if (xyz(names[static_cast<std::size_t>(vert)]) && xyz(names[static_cast<std::size_t>(across)]) &&
      names[static_cast<std::size_t>(vert)] < names[static_cast<std::size_t>(across)])
    std::swap(vert, across);
  // Physical axes of the velocity components: named x, y, z, else storage order.
  int axis_of[3] = {ndim == 2 ? 2 : 0, 1, 2};  // x, y, z -> storage axis (2-D: x across, y down the rows)
  if (ndim == 2) axis_of[1] = 1;
  for (int k = 0; k < 3; ++k) {
    if (names[static_cast<std::size_t>(k)] == "x") axis_of[0] = k;
    if (names[static_cast<std::size_t>(k)] == "y") axis_of[1] = k;
    if (names[static_cast<std::size_t>(k)] == "z") axis_of[2] = k;
  }
  double h[3] = {1, 1, 1};
  for (int k = 0; k < 3; ++k)
    if (!names[static_cast<std::size_t>(k)].empty()) h[k] = spacing_of(ds, names[static_cast<std::size_t>(k)]);

  std::vector<Field> out;
  for (std::size_t f = 0; f < parts[0].size(); ++f) {
    std::vector<Volume> vol;
    for (const auto& p : parts) vol.push_back(volume_of(*p[f]));
    Field field;
    field.name = title;
    field.attrs = parts[0][f]->attrs.is_object() ? parts[0][f]->attrs : json::object();
    if (d.empty() || d == "speed") {  // a pure number ("1") shows no unit
      const std::string u = units_of(field.attrs, parts[0][f]->name, parts[0][f]->name);
      field.units = u == "1" ? "" : u;
    }
    field.rows = geom.n[vert];
    field.cols = geom.n[across];
    field.y_name = names[static_cast<std::size_t>(vert)];
    field.x_name = names[static_cast<std::size_t>(across)];
    field.v.resize(static_cast<std::size_t>(field.rows * field.cols));
    for (std::int64_t r = 0; r < field.rows; ++r)
      for (std::int64_t c = 0; c < field.cols; ++c) {
        std::int64_t i[3] = {0, 0, 0};
        i[fixed] = ndim == 3 ? index : 0;
        i[vert] = r;
        i[across] = c;
        double value;
        if (vol.size() == 1) {
          value = vol[0].at(i);
        } else if (d == "vorticity") {  // dv/dx - du/dy
          value = derivative(vol[1], axis_of[0], i, h[axis_of[0]]) - derivative(vol[0], axis_of[1], i, h[axis_of[1]]);
        } else if (d == "vorticity_magnitude") {
          auto D = [&](int comp, int axis) { return derivative(vol[static_cast<std::size_t>(comp)], axis_of[axis], i, h[axis_of[axis]]); };
          const double wx = D(2, 1) - D(1, 2), wy = D(0, 2) - D(2, 0), wz = D(1, 0) - D(0, 1);
          value = std::sqrt(wx * wx + wy * wy + wz * wz);
        } else {  // speed
          double s = 0;
          for (const auto& v : vol) s += v.at(i) * v.at(i);
          value = std::sqrt(s);
        }
        field.v[static_cast<std::size_t>(r * field.cols + c)] = value;
      }
    auto coords = [&](const std::string& axis, std::int64_t n) {
      const exporter::Axis* a = axis.empty() ? nullptr : ds.axis(axis);
      std::vector<double> c(static_cast<std::size_t>(n));
      for (std::int64_t k = 0; k < n; ++k)
        c[static_cast<std::size_t>(k)] = a && static_cast<std::int64_t>(a->coordinate.size()) == n ? a->coordinate[static_cast<std::size_t>(k)] : static_cast<double>(k);
      return c;
    };
    field.x = coords(field.x_name, field.cols);
    field.y = coords(field.y_name, field.rows);
    if (rq.interior) {
      if (field.rows < 3 || field.cols < 3)
        fail_input("--interior: the image is only " + std::to_string(field.rows) + " x " + std::to_string(field.cols));
      Field c = field;
      c.rows -= 2;
      c.cols -= 2;
      c.v.assign(static_cast<std::size_t>(c.rows * c.cols), 0);
      for (std::int64_t y = 0; y < c.rows; ++y)
        for (std::int64_t x = 0; x < c.cols; ++x)
          c.v[static_cast<std::size_t>(y * c.cols + x)] = field.v[static_cast<std::size_t>((y + 1) * field.cols + x + 1)];
      c.x.assign(field.x.begin() + 1, field.x.end() - 1);
      c.y.assign(field.y.begin() + 1, field.y.end() - 1);
      field = std::move(c);
    }
    out.push_back(std::move(field));
  }
  return out;
}

}  // namespace numpipe::render
