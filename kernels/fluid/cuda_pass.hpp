// The temporally blocked red-black passes of fluid-step's CUDA backend (cuda.cu):
// what the solver (cuda.cu) and the pass kernels (cuda_pass.cuh, instantiated one
// tile per unit in cuda_pass_*.cu, so that the units compile in parallel) share:
// a pass's arguments, the tile map, and per tile the kernels and their shared memory.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace numpipe::fluid::pass {

constexpr unsigned kFull = 0xffffffffu;

template <class T>
__host__ __device__ __forceinline__ T max_of(T m, T s) {
  return s > m ? s : m;  // react's comparison (exact: any order gives the same maximum)
}

// What one pass of a solve does, by value (the graph captures it).
template <class T>
struct PassArgs {
  const T* src;       // x before the pass, or null: the generated initial guess
  const T* x0;
  T* dst;             // x after the pass
  T* partial;         // per block maximum (last pass of a solve that leaves one), or null
  const int* flags;   // react's decision: [0] velocity, [1] density
  int n, k, b;        // interior size, iterations of this pass, boundary kind
  int gen, add, max;  // initial guess (kField* or -1: zero), x0 + dt*source of (kField* or -1), max mode (1 x, 2 x^2 + x0^2)
  int mul;            // c is a power of two: multiply by r
  T a, c, r;
  T dt, force, source;
};

// What a scene's pass adds (the scene's kernels take it as a parameter of its
// own: the plain kernels' parameters, and so their code, stay as they were).
template <class T>
struct SceneArgs {
  const std::uint8_t* code;  // the obstacle's cell codes (scene_model.hpp), or null
  const T* emit;             // an emitter: x0 + dt*emit inside (after add's source), or null
  const std::uint8_t* tile;  // per tile: kTileScene, and kTileEmit* where `emit` has a value that is not +0
  const int* scene_tiles;    // the tiles that the scene kernel runs (rb_reg)
  int emit_bit;              // which kTileEmit* bit says that a tile reads `emit`
  T sigma;                   // a solid neighbour counts as sigma times the cell (gs_cell_solid)
};

// Tile flags of a scene (PassArgs::tile): run by the scene kernel (an edge tile or
// one whose extended tile holds obstacle cells or cells beside them), and where the
// emitters of d, u, v are read (elsewhere they hold +0 only: x0 + dt*0 is formed
// without reading them, the same bits).
enum : std::uint8_t { kTileScene = 1, kTileEmitD = 2, kTileEmitU = 4, kTileEmitV = 8, kTileEmitT = 16 };

// rb_reg (registers, fp32): the extended tile's width, 32 lanes x 4 columns.
constexpr int kRegW = 128;

// Tiles of a pass: tiles_x x tiles_y; the edge tiles (whose extended tile
// reaches the boundary layer or beyond) are the rows ey[] and the columns ex[];
// the others, [bx_lo, bx_lo + gridDim.x) x [by_lo, by_lo + gridDim.y), go to the
// inner kernel, which has no boundary logic (and so fewer registers).
struct TileMap {
  int tiles_x, bx_lo, by_lo, nex, ney;
  int ex[8], ey[8];
};

// rb_pass (shared-memory planes; fp64, and fp32 for comparison):
constexpr int kPairs = 64;         // threads in x; extended tile width 2*kPairs
constexpr int kExtW = 2 * kPairs;  // 128
constexpr int kThreadsY = 8;

template <class T>
using PassKernel = void (*)(PassArgs<T>);
template <class T>
using ScenePassKernel = void (*)(PassArgs<T>, SceneArgs<T>);
using RegKernel = void (*)(PassArgs<float>, TileMap);
using SceneRegKernel = void (*)(PassArgs<float>, TileMap, SceneArgs<float>);

// rb_reg's kernels of one tile (fp32; K iterations, RPT rows per thread, WY
// threads in y, MINB blocks per SM): [1] where c is a power of two.
struct RegKernels {
  RegKernel inner[2], edge[2];
  SceneRegKernel scene_inner[2], scene;
  std::size_t smem_bytes, scene_smem_bytes;
};
// A tile's kernels come in two halves, each instantiated by the tile's unit
// (cuda_pass_*.cu), or by a unit of its own where one unit would take most of a
// minute of CPU (the largest tiles: cuda_pass_r10x16.cu with cuda_pass_r10x16_scene.cu,
// cuda_pass_r7x16.cu with cuda_pass_r7x16_scene.cu): the plain passes' kernels
// (inner, edge, smem_bytes) and the scene's (scene_inner, scene, scene_smem_bytes).
template <int K, int RPT, int WY, int MINB>
void reg_plain_kernels(RegKernels& k);
template <int K, int RPT, int WY, int MINB>
void reg_scene_kernels(RegKernels& k);
template <int K, int RPT, int WY, int MINB>
RegKernels reg_kernels() {
  RegKernels k{};
  reg_plain_kernels<K, RPT, WY, MINB>(k);
  reg_scene_kernels<K, RPT, WY, MINB>(k);
  return k;
}

// rb_pass's kernels of one tile (K iterations, extended tile 8*RPT rows high).
template <class T>
struct SmemKernels {
  PassKernel<T> plain;
  ScenePassKernel<T> scene;
};
template <class T, int K, int RPT>
SmemKernels<T> smem_kernels();

}  // namespace numpipe::fluid::pass
