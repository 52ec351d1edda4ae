#include "dispatch.hpp"

#include "common/error.hpp"

namespace numpipe::fluid {

template <class T>
std::unique_ptr<Solver<T>> make_solver(Backend backend, const Params& p, const Fields<T>& fields, int device) {
  if (backend == Backend::cuda) {
#ifdef NUMPIPE_FLUID_CUDA
    return make_cuda_solver<T>(p, fields, device);
#else
    (void)device;
    fail_resource("this build has no CUDA backend for fluid-step (use --backend cpu)");
#endif
  }
  return make_cpu_solver<T>(p, fields);
}

template <class T>
std::unique_ptr<SceneSolver<T>> make_solver(Backend backend, const Params& p, const Scene& s,
                                            const SceneFields<T>& fields, int device) {
  if (backend == Backend::cuda) {
#ifdef NUMPIPE_FLUID_CUDA
    return make_scene_cuda_solver<T>(p, s, fields, device);
#else
    (void)device;
    fail_resource("this build has no CUDA backend for fluid-step (use --backend cpu)");
#endif
  }
  return make_scene_cpu_solver<T>(p, s, fields);
}

template std::unique_ptr<Solver<float>> make_solver(Backend, const Params&, const Fields<float>&, int);
template std::unique_ptr<Solver<double>> make_solver(Backend, const Params&, const Fields<double>&, int);
template std::unique_ptr<SceneSolver<float>> make_solver(Backend, const Params&, const Scene&, const SceneFields<float>&, int);
template std::unique_ptr<SceneSolver<double>> make_solver(Backend, const Params&, const Scene&, const SceneFields<double>&,
                                                          int);

}  // namespace numpipe::fluid
