// The backend as a value: fluid-step's solvers made for the backend the user chose,
// the only place that knows whether this build has the CUDA backend.
#pragma once
#include <memory>

#include "common/device.hpp"
#include "fluid.hpp"
#include "scene.hpp"

namespace numpipe::fluid {

// The fused step's solver (a plain square state). Backend::cuda in a build without
// CUDA: exit 3, saying so.
template <class T>
std::unique_ptr<Solver<T>> make_solver(Backend backend, const Params& p, const Fields<T>& fields, int device);

// The scene path's solver.
template <class T>
std::unique_ptr<SceneSolver<T>> make_solver(Backend backend, const Params& p, const Scene& s,
                                            const SceneFields<T>& fields, int device);

}  // namespace numpipe::fluid
