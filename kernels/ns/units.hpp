// The units of ns-step's and gen-input ns's records (common/units.hpp). The
// solver works in nondimensional units: density relative to the reference
// density 1, lengths in the box's units (2 pi for Taylor-Green), time in the
// run's units, velocity in lengths per time, a Reynolds number and a speed of
// sound c that fix the scales. Every quantity is a pure number: "1" (CF's units
// of a dimensionless quantity), time included: t and time count in the
// solver's unit (a length of the box over a velocity), not in seconds.
#pragma once
#include <nlohmann/json.hpp>

namespace numpipe::ns {

inline nlohmann::json units() {
  nlohmann::json u = nlohmann::json::object();
  for (const char* name : {"rho", "vx", "vy", "vz", "solid", "x", "y", "z", "time", "step", "t", "kinetic_energy",
                           "enstrophy", "dissipation", "max_div", "max_mach", "mass", "Fx", "Fy", "Fz", "vorticity_x", "vorticity_y",
                           "vorticity_z", "vorticity_magnitude", "q_criterion", "speed", "Cd", "Cl", "Cs", "Cp", "body"})
    u[name] = "1";
  u["angle"] = "degree";
  return u;
}

}  // namespace numpipe::ns
