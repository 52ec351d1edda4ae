// The units of fluid-step's and gen-input fluid's records (common/units.hpp).
// Stam's stable fluids are nondimensional ("Real-Time Fluid Dynamics for Games",
// GDC 2003): the grid covers the unit square (cells of 1/N), time is the
// solver's own (dt of it a step), density is an amount per cell with no
// physical scale. Every quantity is therefore a pure number: "1" (CF's units of
// a dimensionless quantity), time included: it is not in seconds.
#pragma once
#include <nlohmann/json.hpp>

namespace numpipe::fluid {

inline nlohmann::json units() {
  nlohmann::json u = nlohmann::json::object();
  for (const char* name : {"d", "u", "v", "T", "d0", "u0", "v0", "solid", "source_d", "source_u", "source_v", "source_T",
                           "x", "y", "time", "step", "total_density", "max_speed", "max_divergence", "injections",
                           "vorticity", "speed"})
    u[name] = "1";
  return u;
}

}  // namespace numpipe::fluid
