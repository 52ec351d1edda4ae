// ns-step's model parameters (the attrs a state carries, gen-input ns) and the bodies
// in the flow, with their parsing and checks (params.cpp, bodies.cpp).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "model.hpp"

namespace numpipe::ns {

// The model parameters a state carries (the attrs of gen-input ns).
struct Params {
  long long n[3] = {16, 16, 16};
  double box[3] = {6.283185307179586, 6.283185307179586, 6.283185307179586};
  Bc bc[3] = {Bc::periodic, Bc::periodic, Bc::periodic};
  double re = 100;          // Reynolds number: nu = 1/Re
  double c = 10;            // speed of sound
  double force[3] = {0, 0, 0};  // constant body force
  double kol_amp = 0;       // Kolmogorov forcing amplitude: f_x += A sin(2 pi K y / ly)
  int kol_k = 1;            // its wavenumber K
  // A free stream (gen-input --free-stream): a fringe at the downstream end of the
  // stream's (periodic) axis relaxes rho and v to (1, stream), so that the flow leaving
  // there comes back in at the upstream face as the undisturbed stream (bodies.hpp).
  bool free_stream = false;
  double stream[3] = {0, 0, 0};
  int fringe_axis = 0;
  double fringe_length = 0;    // the fringe is the last fringe_length of the axis
  double fringe_strength = 0;  // its largest relaxation rate sigma (1/time)
};

// Bodies in the flow (gen-input --body, --solid), at rest, no-slip (bodies.cpp).
struct Body {
  enum class Kind { cylinder, sphere, box, mask };
  Kind kind = Kind::sphere;
  double a[6] = {0, 0, 0, 0, 0, 0};  // cylinder: cx, cy, r; sphere: cx, cy, cz, r; box: x0, y0, z0, x1, y1, z1
  std::string spec;                  // as the user wrote it ("mask" for --solid)
};
struct Bodies {
  std::vector<Body> list;          // analytic bodies in the order given, then the mask's body if any
  std::vector<std::uint8_t> mask;  // --solid: 1 inside a body, C order over the grid (empty: none)
  bool any() const { return !list.empty(); }
};

// "cylinder:CX,CY,R" (axis along z), "sphere:CX,CY,CZ,R", "box:X0,Y0,Z0,X1,Y1,Z1":
// bad-input error (exit 2) naming the spec when it is not one.
Body parse_body(const std::string& spec);
// Bodies must lie inside the box along periodic axes, be larger than a grid cell, and
// leave some fluid: bad-input error naming the body.
void validate_bodies(const Params& p, const Bodies& b);

// Parses "x=periodic,y=noslip,z=freeslip" (or one name for all three axes).
// Bad-input error (exit 2) naming the item when it is not one.
void parse_bc(const std::string& spec, Bc out[3]);
std::string bc_spec(const Bc bc[3]);
Bc parse_bc_name(const std::string& name);  // bad-input error if unknown

// f_x of the Kolmogorov forcing per interior j of a block: A sin(2 pi K y_j / ly),
// y_j = (offset + j) h_y (zeros without forcing).
std::vector<double> kolmogorov_table(const Geometry& g, const Params& p);

// The single-block geometry of the whole box.
Geometry make_geometry(const Params& p);

}  // namespace numpipe::ns
