// ns-step's bodies (bodies.hpp): parsing, validation, solid nodes, the immersed-boundary
// tables of a block, and the free stream's fringe.
#include "bodies.hpp"

#include <algorithm>
#include <cmath>

#include "common/error.hpp"
#include "common/parallel.hpp"
#include "common/strings.hpp"

namespace numpipe::ns {

Body parse_body(const std::string& spec) {
  const auto colon = spec.find(':');
  const std::string kind = spec.substr(0, colon);
  Body b;
  b.spec = spec;
  std::size_t want = 0;
  if (kind == "cylinder") b.kind = Body::Kind::cylinder, want = 3;
  else if (kind == "sphere") b.kind = Body::Kind::sphere, want = 4;
  else if (kind == "box") b.kind = Body::Kind::box, want = 6;
  else
    fail_input("--body '" + spec + "': the kind must be cylinder:CX,CY,R (axis along z), sphere:CX,CY,CZ,R or " +
               "box:X0,Y0,Z0,X1,Y1,Z1");
  std::vector<double> v;
  bool numbers_ok = colon != std::string::npos;
  if (numbers_ok) {
    for (const std::string& item : split_fields(spec.substr(colon + 1))) {
      if (item.empty()) numbers_ok = false;
      else v.push_back(decimal_number(item, "--body '" + spec + "'"));  // "0x1p-1", "inf": named
    }
  }
  if (!numbers_ok || v.size() != want)
    fail_input("--body '" + spec + "': " + kind + " takes " + std::to_string(want) + " finite numbers separated by commas (" +
               (want == 3 ? "CX,CY,R" : want == 4 ? "CX,CY,CZ,R" : "X0,Y0,Z0,X1,Y1,Z1") + ")");
  for (std::size_t i = 0; i < want; ++i) b.a[i] = v[i];
  if (b.kind == Body::Kind::cylinder && !(b.a[2] > 0)) fail_input("--body '" + spec + "': the radius must be positive");
  if (b.kind == Body::Kind::sphere && !(b.a[3] > 0)) fail_input("--body '" + spec + "': the radius must be positive");
  if (b.kind == Body::Kind::box)
    for (int a = 0; a < 3; ++a)
      if (!(b.a[a] < b.a[a + 3]))
        fail_input("--body '" + spec + "': a box needs X0 < X1, Y0 < Y1 and Z0 < Z1");
  return b;
}

namespace {

// The body's extent along each axis (cylinders are unbounded along z).
void extent(const Body& b, double lo[3], double hi[3]) {
  switch (b.kind) {
    case Body::Kind::cylinder:
      lo[0] = b.a[0] - b.a[2], hi[0] = b.a[0] + b.a[2];
      lo[1] = b.a[1] - b.a[2], hi[1] = b.a[1] + b.a[2];
      lo[2] = -INFINITY, hi[2] = INFINITY;
      return;
    case Body::Kind::sphere:
      for (int a = 0; a < 3; ++a) lo[a] = b.a[a] - b.a[3], hi[a] = b.a[a] + b.a[3];
      return;
    case Body::Kind::box:
      for (int a = 0; a < 3; ++a) lo[a] = b.a[a], hi[a] = b.a[a + 3];
      return;
    case Body::Kind::mask:
      for (int a = 0; a < 3; ++a) lo[a] = -INFINITY, hi[a] = INFINITY;
      return;
  }
}

double coordinate(const Params& p, int axis, long long idx) {
  return double(idx) * spacing(p.bc[axis], p.n[axis], p.box[axis]);
}

// Whether the analytic body contains the point (inside or on the surface).
bool inside(const Body& b, const double x[3]) {
  switch (b.kind) {
    case Body::Kind::cylinder: {
      const double dx = x[0] - b.a[0], dy = x[1] - b.a[1];
      return dx * dx + dy * dy <= b.a[2] * b.a[2];
    }
    case Body::Kind::sphere: {
      const double dx = x[0] - b.a[0], dy = x[1] - b.a[1], dz = x[2] - b.a[2];
      return dx * dx + dy * dy + dz * dz <= b.a[3] * b.a[3];
    }
    case Body::Kind::box:
      return x[0] >= b.a[0] && x[0] <= b.a[3] && x[1] >= b.a[1] && x[1] <= b.a[4] && x[2] >= b.a[2] && x[2] <= b.a[5];
    case Body::Kind::mask:
      return false;
  }
  return false;
}

// Distance, in units of h, from point x (outside the body) along `dir` (+1 or -1) of
// `axis` to where the line enters the body, for a node one h away inside it.
double entry_distance(const Body& b, const double x[3], int axis, int dir, double h) {
  double d = 0.5;
  if (b.kind == Body::Kind::box) {
    d = dir > 0 ? (b.a[axis] - x[axis]) / h : (x[axis] - b.a[axis + 3]) / h;
  } else {
    const int dims = b.kind == Body::Kind::cylinder ? 2 : 3;
    const double r = b.kind == Body::Kind::cylinder ? b.a[2] : b.a[3];
    double rest = 0;
    for (int a = 0; a < dims; ++a)
      if (a != axis) rest += (x[a] - b.a[a]) * (x[a] - b.a[a]);
    const double half = std::sqrt(std::max(0.0, r * r - rest));  // half the chord along the axis
    d = dir > 0 ? (b.a[axis] - half - x[axis]) / h : (x[axis] - (b.a[axis] + half)) / h;
  }
  // rounding can put a surface through a node a hair outside (0, 1]
  return std::min(1.0, std::max(1e-6, d));
}

// Global node with wrapped periodic indices; false when beyond a wall (outside the box).
bool wrap(const Params& p, long long g[3]) {
  for (int a = 0; a < 3; ++a) {
    if (g[a] >= 0 && g[a] < p.n[a]) continue;
    if (p.bc[a] != Bc::periodic) return false;
    g[a] = ((g[a] % p.n[a]) + p.n[a]) % p.n[a];
  }
  return true;
}

bool solid_wrapped(const Params& p, const Bodies& b, const long long g[3]) {
  if (!b.mask.empty() && b.mask[static_cast<std::size_t>((g[0] * p.n[1] + g[1]) * p.n[2] + g[2])]) return true;
  const double x[3] = {coordinate(p, 0, g[0]), coordinate(p, 1, g[1]), coordinate(p, 2, g[2])};
  for (const Body& body : b.list)
    if (inside(body, x)) return true;
  return false;
}

// The surface between fluid node `from` and its solid neighbour one step along `dir`
// of `axis`: the distance in units of h and the body it belongs to (the nearest entry
// among the bodies holding the neighbour; the mask's surface lies halfway).
double crossing_distance(const Params& p, const Bodies& b, const long long from[3], int axis, int dir, int* which) {
  long long to[3] = {from[0], from[1], from[2]};
  to[axis] += dir;
  wrap(p, to);
  double best = 2;
  *which = -1;
  const double x[3] = {coordinate(p, 0, from[0]), coordinate(p, 1, from[1]), coordinate(p, 2, from[2])};
  const double y[3] = {coordinate(p, 0, to[0]), coordinate(p, 1, to[1]), coordinate(p, 2, to[2])};
  const double h = spacing(p.bc[axis], p.n[axis], p.box[axis]);
  for (std::size_t i = 0; i < b.list.size(); ++i) {
    const Body& body = b.list[i];
    bool holds = false;
    if (body.kind == Body::Kind::mask) holds = !b.mask.empty() && b.mask[static_cast<std::size_t>((to[0] * p.n[1] + to[1]) * p.n[2] + to[2])];
    else holds = inside(body, y);
    if (!holds) continue;
    const double d = body.kind == Body::Kind::mask ? 0.5 : entry_distance(body, x, axis, dir, h);
    if (d < best) best = d, *which = static_cast<int>(i);
  }
  if (*which < 0) fail_internal("ns-step: a solid node without a body");
  return best;
}

}  // namespace

void validate_bodies(const Params& p, const Bodies& b) {
  const char* axis = "xyz";
  for (const Body& body : b.list) {
    if (body.kind == Body::Kind::mask) {
      if (b.mask.size() != static_cast<std::size_t>(p.n[0] * p.n[1] * p.n[2]))
        fail_input("record solid holds " + std::to_string(b.mask.size()) + " values, the grid " +
                   std::to_string(p.n[0] * p.n[1] * p.n[2]));
      continue;
    }
    double lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
    extent(body, lo, hi);
    for (int a = 0; a < 3; ++a) {
      const double h = spacing(p.bc[a], p.n[a], p.box[a]);
      // along a periodic axis a body lies between the faces, or spans the whole axis
      // (then no grid line along it meets its surface)
      const bool between = lo[a] > 0 && hi[a] < p.box[a] - h, spans = lo[a] <= 0 && hi[a] >= p.box[a] - h;
      if (p.bc[a] == Bc::periodic && std::isfinite(lo[a]) && !between && !spans)
        fail_input("body '" + body.spec + "' crosses the periodic faces of " + axis[a] + " (it must lie within " + axis[a] +
                   " in (0, " + std::to_string(p.box[a] - h) + ") or span the whole axis)");
      if (std::isfinite(lo[a]) && p.n[a] > 1 && hi[a] - lo[a] < 2 * h)
        fail_input("body '" + body.spec + "' is smaller than two grid cells along " + axis[a] + " (h = " +
                   std::to_string(h) + "): refine the grid");
    }
  }
  if (b.mask.empty()) return;
  std::size_t solid = 0;
  for (std::uint8_t m : b.mask) {
    if (m > 1) fail_input("record solid must hold 0 (fluid) or 1 (solid), found " + std::to_string(int(m)));
    solid += m;
  }
  if (solid == b.mask.size()) fail_input("record solid marks every node solid: no fluid left");
}

bool solid_node(const Params& p, const Bodies& b, long long gi, long long gj, long long gk) {
  long long g[3] = {gi, gj, gk};
  if (!wrap(p, g)) return false;
  return solid_wrapped(p, b, g);
}

// ---- the free stream's fringe ---------------------------------------------------------
// The fringe method of Nordstrom, Nordin and Henningson (SIAM J. Sci. Comput. 20 (1999)
// 1365-1393): on the periodic stream axis, d Phi/dt += sigma(x) (Phi_inf - Phi) over the
// last part of the axis, sigma(x) = sigma_max [S((x - x_s)/r) - S((x - L)/r + 1)] with
// the smooth step S(y) = 1 / (1 + exp(1/(y - 1) + 1/y)) on (0, 1) (0 below, 1 above),
// rise and fall r = 0.4 of the fringe's length. Vortices and sound waves that enter it
// are damped on the way through, and the flow leaving it at x = L comes back in at x = 0
// as the free stream: an outflow downstream and an inflow upstream.
namespace {
double smooth_step(double y) {
  if (y <= 0) return 0;
  if (y >= 1) return 1;
  return 1.0 / (1.0 + std::exp(1.0 / (y - 1.0) + 1.0 / y));
}
}  // namespace

double fringe_rate(const Params& p, double x) {
  if (!p.free_stream || p.fringe_length <= 0) return 0;
  const double len = p.box[p.fringe_axis], rise = 0.4 * p.fringe_length, start = len - p.fringe_length;
  return p.fringe_strength * (smooth_step((x - start) / rise) - smooth_step((x - len) / rise + 1.0));
}

double default_fringe_strength(const Params& p, double length) {
  double speed = 0;
  for (double u : p.stream) speed += u * u;
  return 10.0 * (p.c + std::sqrt(speed)) / (0.6 * length);
}

std::array<std::vector<double>, 3> sponge_tables(const Params& p, const Geometry& g) {
  std::array<std::vector<double>, 3> t;
  for (int a = 0; a < 3; ++a) {
    t[a].assign(static_cast<std::size_t>(g.n[a]), 0.0);
    if (!p.free_stream || a != p.fringe_axis) continue;
    for (int i = 0; i < g.n[a]; ++i) t[a][static_cast<std::size_t>(i)] = fringe_rate(p, coordinate(p, a, g.offset[a] + i));
  }
  return t;
}

template <class T>
IbTables<T> build_ib_tables(const Params& p, const Bodies& b, const Geometry& g) {
  IbTables<T> t;
  const int n0 = g.n[0], n1 = g.n[1], n2 = g.n[2];
  t.row_start.assign(static_cast<std::size_t>(n0) * n1 + 1, 0);
  if (!b.any()) return t;
  // solid flags of the block and two nodes around it (beyond a wall: not solid)
  const int m0 = n0 + 4, m1 = n1 + 4, m2 = n2 + 4;
  std::vector<std::uint8_t> solid(static_cast<std::size_t>(m0) * m1 * m2);
  auto sidx = [&](int i, int j, int k) { return (static_cast<std::size_t>(i + 2) * m1 + (j + 2)) * m2 + (k + 2); };
#pragma omp parallel for schedule(static)
  for (int i = -2; i < n0 + 2; ++i)
    for (int j = -2; j < n1 + 2; ++j)
      for (int k = -2; k < n2 + 2; ++k)
        solid[sidx(i, j, k)] = solid_node(p, b, g.offset[0] + i, g.offset[1] + j, g.offset[2] + k) ? 1 : 0;
  auto in_box = [&](int a, long long gidx) { return p.bc[a] == Bc::periodic || (gidx >= 0 && gidx < p.n[a]); };
  const double area[3] = {g.h[1] * g.h[2], g.h[0] * g.h[2], g.h[0] * g.h[1]};
  for (int i = 0; i < n0; ++i)
    for (int j = 0; j < n1; ++j) {
      const std::size_t row = static_cast<std::size_t>(i) * n1 + j;
      for (int k = 0; k < n2; ++k) {
        if (solid[sidx(i, j, k)]) {
          ++t.solid_points;
          if (!t.entries.empty() && static_cast<std::size_t>(t.row_start[row]) < t.entries.size() &&
              t.entries.back().point < 0 && t.entries.back().k1 == k)
            t.entries.back().k1 = k + 1;
          else
            t.entries.push_back({k, k + 1, -1});
          continue;
        }
        IbPoint<T> ib{};
        bool any = false;
        const int idx[3] = {i, j, k};
        const long long gl[3] = {g.offset[0] + i, g.offset[1] + j, g.offset[2] + k};
        for (int a = 0; a < 3; ++a) {
          if (a == 2 && g.flat_z()) continue;
          for (int side = 0; side < 2; ++side) {
            const int dir = side == 0 ? -1 : 1;
            int at[3] = {idx[0], idx[1], idx[2]};
            double dist = 0;
            for (int m = 1; m <= kGhost && dist == 0; ++m) {
              at[a] = idx[a] + dir * m;
              if (!solid[sidx(at[0], at[1], at[2])]) continue;
              long long from[3] = {gl[0], gl[1], gl[2]};
              from[a] += dir * (m - 1);
              int body = -1;
              const double e = crossing_distance(p, b, from, a, dir, &body);
              dist = (m - 1) + e;
              if (m == 1) {  // a surface crossing next to this node: a force element
                Crossing x{};
                x.at = g.at(i, j, k);
                x.key = ((gl[0] * p.n[1] + gl[1]) * p.n[2] + gl[2]) * 6 + 2 * a + side;
                x.axis = a;
                x.side = side;
                x.body = body;
                x.e0 = e;
                x.area = area[a];
                int beyond = 0;
                for (int s = 1; s <= 2; ++s) {
                  int bt[3] = {idx[0], idx[1], idx[2]};
                  bt[a] -= dir * s;
                  if (!in_box(a, gl[a] - dir * s) || solid[sidx(bt[0], bt[1], bt[2])]) break;
                  beyond = s;
                }
                x.fluid_beyond = beyond;
                t.crossings.push_back(x);
              }
            }
            ib.dist[a][side] = T(dist);
            any = any || dist > 0;
          }
        }
        if (any) {
          t.entries.push_back({k, k + 1, static_cast<int>(t.points.size())});
          t.points.push_back(ib);
        }
      }
      t.row_start[row + 1] = static_cast<int>(t.entries.size());
    }
  // block order (i, j, k, axis, side) is global order within a block; kept sorted by key
  std::sort(t.crossings.begin(), t.crossings.end(), [](const Crossing& x, const Crossing& y) { return x.key < y.key; });
  return t;
}

template IbTables<double> build_ib_tables<double>(const Params&, const Bodies&, const Geometry&);
template IbTables<float> build_ib_tables<float>(const Params&, const Bodies&, const Geometry&);

bool sum_force_parts(std::vector<ForcePart> parts, bool distributed, std::size_t bodies, double t, ForceRow& row) {
  if (distributed) {
    parts = par::world().gather_concat(parts);
    if (!par::world().is_root()) return false;
    std::sort(parts.begin(), parts.end(), [](const ForcePart& a, const ForcePart& b) { return a.key < b.key; });
  }
  row.t = t;
  row.f.assign(3 * bodies, 0.0);
  for (const ForcePart& x : parts)
    for (int c = 0; c < 3; ++c) row.f[static_cast<std::size_t>(3 * x.body + c)] += x.f[c];
  return true;
}

}  // namespace numpipe::ns
