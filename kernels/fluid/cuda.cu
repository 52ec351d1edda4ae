// The CUDA backend of fluid-step (spec/fluid.md). The state stays on the device
// for all steps; one step is captured once as a CUDA Graph and replayed.
//
// Per step: react's decision by a one-block kernel from the maxima that the
// previous step's passes left (per block, reduced in a fixed order; CUB over
// the initial state before the first step); react's sources are never stored:
// each solve's first pass generates its initial guess (zero but at react's
// injection points) and forms add_source's x + dt*s as it reads x0, so
// neither the zeroing, the injection nor add_source costs a pass. Each
// lin_solve is passes of up to K red-black iterations per pass over memory
// (temporal blocking), the last pass of the density's diffusion and of the
// last projection also leave react's maxima per block. project's divergence
// is one kernel with its set_bnd; advection of all fields by one velocity is
// one kernel.
//
// Temporal blocking: a block loads an extended tile (output tile plus a halo of
// 2 cells per fused iteration), runs k iterations there, applying set_bnd's
// edges after each, and writes the output tile to the other buffer of a
// ping-pong pair. Cells at distance >= 2k from the extended tile's border are
// exact: each half-sweep can spoil only one more ring. Two kernels do it:
//  - rb_reg (fp32, the default): a warp spans the tile's 128 columns, 4 per
//    lane, and each thread keeps RPT whole rows of its 4 columns in registers,
//    so a cell's neighbours are its own registers but for one shuffle per row
//    (the lane on the left or right) and, at the thread's first and last row,
//    the rows that the threads above and below publish in shared memory after
//    each half-sweep; x0 lives in shared memory.
//  - rb_pass (fp64, and fp32 for comparison): x's red and black planes in
//    shared memory (unit-stride, conflict-free half-sweeps), x0 in registers.
// Red-black Gauss-Seidel does not depend on the order within a colour, so
// both compute the bits of the CPU backend (both backends are built without
// FMA contraction: --fmad=false here; the division by c is the IEEE division,
// or the exact multiplication when c is a power of two).
//
// Scenes (SceneTiledSolver: a square box with closed sides; scene_cpu.cpp's step,
// the same bits): the solves run the same passes. Tiles whose extended tile holds
// an obstacle's cells or cells beside them, and the edge tiles, go to a scene
// kernel (rb_reg_scene; rb_pass<SCENE> runs every tile), whose solid cells stay 0
// and whose cells beside them take gs_cell_solid; the inner kernel leaves those
// tiles to it. An emitter is added to x0 as the passes read it (read only in the
// tiles where it has values; elsewhere + dt*0, the same bits). Forces, the
// temperature and the obstacle's divergence, gradient and advection are kernels
// of their own between the solves.
#include <cuda_runtime.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <type_traits>
#include <cub/device/device_reduce.cuh>

#include "common/cuda_check.hpp"
#include "common/cuda_graph.hpp"
#include "common/device_array.hpp"
#include "common/staging.hpp"
#include "fluid.hpp"
#include "scene.hpp"
#include "scene_cells.cuh"

namespace numpipe::fluid {
namespace {

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

// The division by c: MUL 1 multiplies by r (c a power of two), 0 divides, -1 asks A.
template <int MUL, class T>
__device__ __forceinline__ T gs_div(T num, const PassArgs<T>& A) {
  if constexpr (MUL == 1) return num * A.r;
  else if constexpr (MUL == 0) return num / A.c;
  else return A.mul ? num * A.r : num / A.c;
}
template <int MUL, class T>
__device__ __forceinline__ T gs_update(T x0, T l, T r, T d, T u, const PassArgs<T>& A) {
  return gs_div<MUL>(x0 + A.a * (l + r + d + u), A);
}
// The initial guess at (gx, gy) inside the grid (pass without src).
template <class T>
__device__ __forceinline__ T gen_value(const PassArgs<T>& A, int gx, int gy, bool fv, bool fd) {
  return A.gen < 0 ? T(0) : react_source(A.gen, gx, gy, A.n, fv, fd, A.force, A.source);
}
// x0 at (gx, gy) inside the grid, with add_source's dt*s when asked.
template <class T>
__device__ __forceinline__ T x0_value(const PassArgs<T>& A, std::int64_t g, int gx, int gy, bool fv, bool fd) {
  const T v = A.x0[g];
  return A.add < 0 ? v : v + A.dt * react_source(A.add, gx, gy, A.n, fv, fd, A.force, A.source);
}
// A scene's emitter (S.emit set) at an interior cell: add_interior's x0 + dt*s,
// reading s only where the tile has values other than +0 (`read`).
template <class T>
__device__ __forceinline__ T with_emit(T x0, const PassArgs<T>& A, const SceneArgs<T>& S, std::int64_t g, bool read) {
  return x0 + A.dt * (read ? S.emit[g] : T(0));
}
// A scene's cell (code cd: its solid neighbours, bits 0-3; 0 where none is):
// gs_cell_solid, or Stam's update, each with one numerator and one division, so
// that the unrolled half-sweeps stay within the registers.
template <int MUL, class T>
__device__ __forceinline__ T gs_scene(T x0, T l, T r, T d, T u, int cd, const PassArgs<T>& A, const SceneArgs<T>& S) {
  const T num = x0 + A.a * fluid_neighbour_sum(l, r, d, u, cd);  // Stam's numerator where cd = 0
  const bool plain = cd == 0;
  if (plain && (MUL == 1 || (MUL == -1 && A.mul))) return num * A.r;  // gs_div's exact multiplication
  return num / (plain ? A.c : solid_divisor(cd, A.a, A.c, S.sigma));
}

// A block's maximum (every thread passes its own) into *slot, by a fixed tree.
template <class T, int THREADS>
__device__ __forceinline__ void block_max(T m, T* slot, T* red) {
  const int t = static_cast<int>(threadIdx.y * blockDim.x + threadIdx.x);
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) m = max_of(m, __shfl_xor_sync(kFull, m, o));
  if ((t & 31) == 0) red[t >> 5] = m;
  __syncthreads();
  if (t == 0) {
    T r = red[0];
    for (int i = 1; i < THREADS / 32; ++i) r = max_of(r, red[i]);
    *slot = r;
  }
}

// ---- rb_reg: registers (fp32) --------------------------------------------------------------
constexpr int kRegW = 128;  // extended tile width: 32 lanes x 4 columns

// Cell (j, s) of a thread is column 4*lane + j, row RPT*ty + s of the extended
// tile; with RPT even and the tile's origin even in x and y, its colour is
// (j + s) & 1. Half-sweep C updates, in row s, the cells j = q and q + 2,
// q = (C + s) & 1. Exchange buffers ex[buf][slot][ty][lane] (float2): slot 0
// the thread's row 0, slot 1 its row RPT-1, the two cells of the colour that
// buf holds (buf 0 red, 1 black, 2 black after the edges of edge blocks).
template <int RPT, int WY>
struct RegTile {
  __device__ static int ex_index(int buf, int slot, int ty, int tx) { return ((buf * 2 + slot) * WY + ty) * 32 + tx; }
};

template <int RPT, int WY>
__device__ __forceinline__ void reg_publish(const float (&v)[RPT][4], int colour, float2* ex, int buf, int ty, int tx) {
  using Tile = RegTile<RPT, WY>;
  // row 0: cells j = colour, colour + 2; row RPT-1 (odd): j = 1 - colour, 3 - colour
  if (colour == 0) {
    ex[Tile::ex_index(buf, 0, ty, tx)] = make_float2(v[0][0], v[0][2]);
    ex[Tile::ex_index(buf, 1, ty, tx)] = make_float2(v[RPT - 1][1], v[RPT - 1][3]);
  } else {
    ex[Tile::ex_index(buf, 0, ty, tx)] = make_float2(v[0][1], v[0][3]);
    ex[Tile::ex_index(buf, 1, ty, tx)] = make_float2(v[RPT - 1][0], v[RPT - 1][2]);
  }
}

// The cells of a thread that the half-sweeps update (edge tiles): bit s*4 + j.
template <int RPT>
using RegMask = std::conditional_t<(RPT * 4 > 32), unsigned long long, unsigned>;

template <int C, int RPT, int WY, bool EDGE, int MUL, bool SCENE = false>
__device__ __forceinline__ void reg_half_sweep(float (&v)[RPT][4], const float* x0t, const float2* ex, int buf, int ty,
                                               int tx, RegMask<RPT> mask, const unsigned* cst,
                                               const PassArgs<float>& A, const SceneArgs<float>& S) {
  using Tile = RegTile<RPT, WY>;
  // the other colour's cells of the rows below the first and above the last
  const float2 dn = ex[Tile::ex_index(buf, 1, ty > 0 ? ty - 1 : 0, tx)];
  const float2 up = ex[Tile::ex_index(buf, 0, ty < WY - 1 ? ty + 1 : WY - 1, tx)];
#pragma unroll
  for (int s = 0; s < RPT; ++s) {
    const int q = (C + s) & 1;  // resolved at compile time (unrolled)
    const float d0 = s == 0 ? dn.x : v[s > 0 ? s - 1 : 0][q];
    const float d2 = s == 0 ? dn.y : v[s > 0 ? s - 1 : 0][q + 2];
    const float u0 = s == RPT - 1 ? up.x : v[s < RPT - 1 ? s + 1 : RPT - 1][q];
    const float u2 = s == RPT - 1 ? up.y : v[s < RPT - 1 ? s + 1 : RPT - 1][q + 2];
    const float x0a = x0t[(s * 4 + q) * 32];
    const float x0b = x0t[(s * 4 + q + 2) * 32];
    float na, nb;
    if constexpr (SCENE) {  // cells beside an obstacle take gs_cell_solid
      const unsigned cw = cst[s * 32];  // read here: codes held in registers through the loop would spill
      const int ca = static_cast<int>(cw >> (8 * q)) & 15, cb = static_cast<int>(cw >> (8 * q + 16)) & 15;
      if (q == 0) {
        const float ext = __shfl_up_sync(kFull, v[s][3], 1);
        na = gs_scene<MUL>(x0a, ext, v[s][1], d0, u0, ca, A, S);
        nb = gs_scene<MUL>(x0b, v[s][1], v[s][3], d2, u2, cb, A, S);
      } else {
        const float ext = __shfl_down_sync(kFull, v[s][0], 1);
        na = gs_scene<MUL>(x0a, v[s][0], v[s][2], d0, u0, ca, A, S);
        nb = gs_scene<MUL>(x0b, v[s][2], ext, d2, u2, cb, A, S);
      }
    } else if (q == 0) {  // cells 0 and 2: the left neighbour of 0 is the left lane's cell 3
      const float ext = __shfl_up_sync(kFull, v[s][3], 1);
      na = gs_update<MUL>(x0a, ext, v[s][1], d0, u0, A);
      nb = gs_update<MUL>(x0b, v[s][1], v[s][3], d2, u2, A);
    } else {  // cells 1 and 3: the right neighbour of 3 is the right lane's cell 0
      const float ext = __shfl_down_sync(kFull, v[s][0], 1);
      na = gs_update<MUL>(x0a, v[s][0], v[s][2], d0, u0, A);
      nb = gs_update<MUL>(x0b, v[s][2], ext, d2, u2, A);
    }
    if (!EDGE || (mask >> (s * 4 + q) & 1)) v[s][q] = na;
    if (!EDGE || (mask >> (s * 4 + q + 2) & 1)) v[s][q + 2] = nb;
  }
}

// set_bnd's edges (not the corners) of an edge block, from the interior after a
// black half-sweep: buffers 0 and 1 hold the neighbour threads' first and last rows.
template <int RPT, int WY>
__device__ __forceinline__ void reg_edges(float (&v)[RPT][4], const float2* ex, int ty, int tx, int gx0, int gy0,
                                          const PassArgs<float>& A) {
  using Tile = RegTile<RPT, WY>;
  const int n = A.n;
  // row 0 of the thread above (red cells 0, 2 in buf 0; black 1, 3 in buf 1) and
  // row RPT-1 of the thread below (red cells 1, 3; black 0, 2)
  const int ta = ty < WY - 1 ? ty + 1 : WY - 1, tb = ty > 0 ? ty - 1 : 0;
  const bool neg_u = A.b == kU, neg_v = A.b == kV;
#pragma unroll
  for (int s = 0; s < RPT; ++s) {
    const float from_r = __shfl_down_sync(kFull, v[s][0], 1);  // column 4*lane + 4
    const float from_l = __shfl_up_sync(kFull, v[s][3], 1);    // column 4*lane - 1
    float above[4], below[4];
    if (s == RPT - 1) {
      const float2 ar = ex[Tile::ex_index(0, 0, ta, tx)], ab = ex[Tile::ex_index(1, 0, ta, tx)];
      above[0] = ar.x, above[1] = ab.x, above[2] = ar.y, above[3] = ab.y;
    } else {
#pragma unroll
      for (int j = 0; j < 4; ++j) above[j] = v[s < RPT - 1 ? s + 1 : 0][j];
    }
    if (s == 0) {
      const float2 br = ex[Tile::ex_index(0, 1, tb, tx)], bb = ex[Tile::ex_index(1, 1, tb, tx)];
      below[0] = bb.x, below[1] = br.x, below[2] = bb.y, below[3] = br.y;
    } else {
#pragma unroll
      for (int j = 0; j < 4; ++j) below[j] = v[s > 0 ? s - 1 : 0][j];
    }
    const int gy = gy0 + ty * RPT + s;
    float left[4], right[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      left[j] = j > 0 ? v[s][j > 0 ? j - 1 : 0] : from_l;
      right[j] = j < 3 ? v[s][j < 3 ? j + 1 : 3] : from_r;
    }
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int gx = gx0 + 4 * tx + j;
      if ((gx == 0 || gx == n + 1) && gy >= 1 && gy <= n) {
        const float src = gx == 0 ? right[j] : left[j];
        v[s][j] = neg_u ? -src : src;
      } else if ((gy == 0 || gy == n + 1) && gx >= 1 && gx <= n) {
        const float src = gy == 0 ? above[j] : below[j];
        v[s][j] = neg_v ? -src : src;
      }
    }
  }
}

// SCENE: a scene's tile (S). Its emitter (S.emit) is added to x0 inside (`emit`: the
// tile reads it, else + dt*0); with EDGE (the scene kernel), solid cells stay 0
// (they are never updated: no fluid cell reads them, and the scene path zeroes
// them after the solve) and the cells beside them take gs_cell_solid (their codes
// in `cs`, a word per row of a thread: byte j column 4*lane + j). The plain
// kernels (SCENE false) compile without any of it.
template <int K, int RPT, int WY, bool EDGE, int MUL, bool SCENE = false>
__device__ __forceinline__ void reg_body(const PassArgs<float>& A, const SceneArgs<float>& S, int bx, int by,
                                         int tiles_x, float* x0s, float2* ex, float* red, unsigned* cs, bool emit) {
  constexpr bool CODES = SCENE && EDGE;
  constexpr int EH = RPT * WY, H = 2 * K, TX = kRegW - 2 * H, TY = EH - 2 * H;
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y), n = A.n, w = n + 2;
  const int gx0 = bx * TX - H, gy0 = by * TY - H;
  const int lx0 = 4 * tx, ly0 = ty * RPT;
  const bool fv = A.flags[0] != 0, fd = A.flags[1] != 0;
  float v[RPT][4];
  RegMask<RPT> mask = 0;  // EDGE: cells that the half-sweeps update (inside the interior; SCENE: fluid)
  unsigned* cst = CODES ? cs + ly0 * 32 + tx : nullptr;  // this thread's code words: cst[s*32]
  float* x0t = x0s + ly0 * 4 * 32 + tx;  // this thread's x0: x0t[(s*4 + j)*32]

  // load x (or generate it) and x0
  const bool pairs = !EDGE && (w & 1) == 0;  // float2 loads: even row width, even tile origin
#pragma unroll
  for (int s = 0; s < RPT; ++s) {
    const int gy = gy0 + ly0 + s;
    const std::int64_t rowg = static_cast<std::int64_t>(gy) * w + gx0 + lx0;
    [[maybe_unused]] unsigned row_codes = 0;
    if (pairs) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        float2 xv = make_float2(0.f, 0.f);
        if (A.src) xv = *reinterpret_cast<const float2*>(A.src + rowg + 2 * h);
        else if (A.gen >= 0) xv = make_float2(gen_value(A, gx0 + lx0 + 2 * h, gy, fv, fd),
                                              gen_value(A, gx0 + lx0 + 2 * h + 1, gy, fv, fd));
        float2 x0v = *reinterpret_cast<const float2*>(A.x0 + rowg + 2 * h);
        if (A.add >= 0) {
          x0v.x = x0v.x + A.dt * react_source(A.add, gx0 + lx0 + 2 * h, gy, n, fv, fd, A.force, A.source);
          x0v.y = x0v.y + A.dt * react_source(A.add, gx0 + lx0 + 2 * h + 1, gy, n, fv, fd, A.force, A.source);
        }
        if (SCENE && S.emit) {  // an inner tile: every cell is inside
          const float2 e = emit ? *reinterpret_cast<const float2*>(S.emit + rowg + 2 * h) : make_float2(0.f, 0.f);
          x0v.x = x0v.x + A.dt * e.x;
          x0v.y = x0v.y + A.dt * e.y;
        }
        v[s][2 * h] = xv.x;
        v[s][2 * h + 1] = xv.y;
        x0t[(s * 4 + 2 * h) * 32] = x0v.x;
        x0t[(s * 4 + 2 * h + 1) * 32] = x0v.y;
      }
    } else {
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const int gx = gx0 + lx0 + j;
        const bool in = !EDGE || (gx >= 0 && gx <= n + 1 && gy >= 0 && gy <= n + 1);
        const bool inside = !EDGE || (gx >= 1 && gx <= n && gy >= 1 && gy <= n);
        float xv = 0.f, x0v = 0.f;
        if (in) {
          xv = A.src ? A.src[rowg + j] : gen_value(A, gx, gy, fv, fd);
          x0v = x0_value(A, rowg + j, gx, gy, fv, fd);
          if (SCENE && S.emit && inside) x0v = with_emit(x0v, A, S, rowg + j, emit);
        }
        int cd = 0;
        if constexpr (CODES) {
          if (S.code && inside) cd = S.code[rowg + j];
          if (cd & kSolidSelf) xv = 0.f;
          row_codes |= static_cast<unsigned>(cd & 15) << (8 * j);
        }
        v[s][j] = xv;
        x0t[(s * 4 + j) * 32] = x0v;
        if (EDGE && inside && !(cd & kSolidSelf)) mask |= RegMask<RPT>(1) << (s * 4 + j);
      }
      if constexpr (CODES) cst[s * 32] = row_codes;
    }
  }
  // set_bnd's edges where the extended tile reaches the boundary layer (a scene's
  // tiles near its obstacle may not); the red half-sweep then finds the black rows
  // in buffer 2, else in 1
  const bool edges = EDGE && (gx0 <= 0 || gy0 <= 0 || gx0 + kRegW - 1 >= n + 1 || gy0 + EH - 1 >= n + 1);
  const int red_buf = edges ? 2 : 1;
  reg_publish<RPT, WY>(v, 1, ex, red_buf, ty, tx);
  __syncthreads();

  for (int it = 0; it < A.k; ++it) {
    reg_half_sweep<0, RPT, WY, EDGE, MUL, CODES>(v, x0t, ex, red_buf, ty, tx, mask, cst, A, S);
    reg_publish<RPT, WY>(v, 0, ex, 0, ty, tx);
    __syncthreads();
    reg_half_sweep<1, RPT, WY, EDGE, MUL, CODES>(v, x0t, ex, 0, ty, tx, mask, cst, A, S);
    reg_publish<RPT, WY>(v, 1, ex, 1, ty, tx);
    __syncthreads();
    if (edges) {
      reg_edges<RPT, WY>(v, ex, ty, tx, gx0, gy0, A);
      reg_publish<RPT, WY>(v, 1, ex, 2, ty, tx);
      __syncthreads();
    }
  }

  // write the output tile (and its maximum)
  float m = -INFINITY;
#pragma unroll
  for (int s = 0; s < RPT; ++s) {
    const int ly = ly0 + s, gy = gy0 + ly;
    if (ly < H || ly >= H + TY || gy > n + 1) continue;
    const std::int64_t rowg = static_cast<std::int64_t>(gy) * w + gx0 + lx0;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int lx = lx0 + j, gx = gx0 + lx;
      if (lx < H || lx >= H + TX || gx > n + 1) continue;
      A.dst[rowg + j] = v[s][j];
      if (A.max) {
        const bool corner_cell = (gx == 0 || gx == n + 1) && (gy == 0 || gy == n + 1);
        if (!corner_cell) {
          const float x0v = x0t[(s * 4 + j) * 32];
          m = max_of(m, A.max == 1 ? v[s][j] : v[s][j] * v[s][j] + x0v * x0v);
        }
      }
    }
  }
  if (A.max) block_max<float, 32 * WY>(m, A.partial + by * tiles_x + bx, red);
}

// Tiles of a pass: tiles_x x tiles_y; the edge tiles (whose extended tile
// reaches the boundary layer or beyond) are the rows ey[] and the columns ex[];
// the others, [bx_lo, bx_lo + gridDim.x) x [by_lo, by_lo + gridDim.y), go to the
// inner kernel, which has no boundary logic (and so fewer registers).
struct TileMap {
  int tiles_x, bx_lo, by_lo, nex, ney;
  int ex[8], ey[8];
};

template <int RPT, int WY>
struct RegSmem {
  float* x0s;
  float2* ex;
  float* red;
  unsigned* codes;  // a scene's: [EH][32] (reg_scene_smem_bytes)
  __device__ explicit RegSmem(unsigned char* raw) {
    x0s = reinterpret_cast<float*>(raw);                       // [EH][4][32]
    ex = reinterpret_cast<float2*>(x0s + RPT * WY * kRegW);      // [3][2][WY][32]
    red = reinterpret_cast<float*>(ex + 3 * 2 * WY * 32);       // [WY]
    codes = reinterpret_cast<unsigned*>(red + WY);
  }
};

template <int K, int RPT, int WY, int MINB, int MUL>
__global__ void __launch_bounds__(32 * WY, MINB) rb_reg_inner(const PassArgs<float> A, const TileMap M) {
  static_assert(RPT % 2 == 0, "rows per thread must be even (colours by (j + s) & 1)");
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const RegSmem<RPT, WY> sm(smem_raw);
  reg_body<K, RPT, WY, false, MUL>(A, SceneArgs<float>{}, M.bx_lo + static_cast<int>(blockIdx.x),
                                   M.by_lo + static_cast<int>(blockIdx.y), M.tiles_x, sm.x0s, sm.ex, sm.red, nullptr,
                                   false);
}

// A scene's inner tiles (the scene kernel runs those near its obstacle).
template <int K, int RPT, int WY, int MINB, int MUL>
__global__ void __launch_bounds__(32 * WY, MINB) rb_reg_scene_inner(const PassArgs<float> A, const TileMap M,
                                                                     const SceneArgs<float> S) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const RegSmem<RPT, WY> sm(smem_raw);
  const int bx = M.bx_lo + static_cast<int>(blockIdx.x), by = M.by_lo + static_cast<int>(blockIdx.y);
  const std::uint8_t flags = S.tile[by * M.tiles_x + bx];
  if (flags & kTileScene) return;
  reg_body<K, RPT, WY, false, MUL, true>(A, S, bx, by, M.tiles_x, sm.x0s, sm.ex, sm.red, nullptr,
                                         (flags & S.emit_bit) != 0);
}

template <int K, int RPT, int WY, int MUL>
__global__ void __launch_bounds__(32 * WY, 1) rb_reg_edge(const PassArgs<float> A, const TileMap M) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const RegSmem<RPT, WY> sm(smem_raw);
  int id = static_cast<int>(blockIdx.x), bx, by;
  if (id < M.ney * M.tiles_x) {
    by = M.ey[id / M.tiles_x];
    bx = id % M.tiles_x;
  } else {
    id -= M.ney * M.tiles_x;
    bx = M.ex[id % M.nex];
    by = M.by_lo + id / M.nex;
  }
  reg_body<K, RPT, WY, true, MUL>(A, SceneArgs<float>{}, bx, by, M.tiles_x, sm.x0s, sm.ex, sm.red, nullptr, false);
}

// A scene's edge tiles and the tiles near its obstacle (S.scene_tiles).
template <int K, int RPT, int WY>
__global__ void __launch_bounds__(32 * WY, 1) rb_reg_scene(const PassArgs<float> A, const TileMap M,
                                                           const SceneArgs<float> S) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const RegSmem<RPT, WY> sm(smem_raw);
  const int t = S.scene_tiles[blockIdx.x];
  reg_body<K, RPT, WY, true, -1, true>(A, S, t % M.tiles_x, t / M.tiles_x, M.tiles_x, sm.x0s, sm.ex, sm.red,
                                       sm.codes, (S.tile[t] & S.emit_bit) != 0);
}

template <int RPT, int WY>
constexpr std::size_t reg_smem_bytes() {
  return static_cast<std::size_t>(RPT * WY * kRegW) * 4 + 3 * 2 * WY * 32 * 8 + WY * 4;
}
template <int RPT, int WY>
constexpr std::size_t reg_scene_smem_bytes() {
  return reg_smem_bytes<RPT, WY>() + static_cast<std::size_t>(RPT * WY * 32) * 4;
}

// ---- rb_pass: shared-memory planes (fp64; fp32 for comparison) ------------------------------
constexpr int kPairs = 64;         // threads in x; extended tile width 2*kPairs
constexpr int kExtW = 2 * kPairs;  // 128
constexpr int kThreadsY = 8;

// SCENE: a scene's solve (every tile, S): solid cells stay 0, the cells beside
// them take gs_cell_solid, the emitter is added to x0 inside.
template <class T, int K, int RPT, bool SCENE>
__device__ __forceinline__ void rb_pass_body(const PassArgs<T>& A, const SceneArgs<T>& S) {
  constexpr int kHalo = 2 * K, kTileX = kExtW - 2 * kHalo;
  constexpr int EH = kThreadsY * RPT, TY = EH - 2 * kHalo;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* sm = reinterpret_cast<T*>(smem_raw);  // [colour][EH][kPairs]
  T* red = sm + 2 * EH * kPairs;           // [16]
  const int tx = threadIdx.x, ty = threadIdx.y, n = A.n, w = n + 2;
  const int gx0 = static_cast<int>(blockIdx.x) * kTileX - kHalo;  // even
  const int gy0 = static_cast<int>(blockIdx.y) * TY - kHalo;
  const bool fv = A.flags[0] != 0, fd = A.flags[1] != 0;
  T x0r0[RPT], x0r1[RPT];  // x0 at columns 2tx and 2tx+1 of the thread's rows
  [[maybe_unused]] unsigned codes[RPT];  // SCENE: the codes of columns 2tx (bits 0-7) and 2tx+1 (bits 8-15)
  [[maybe_unused]] const bool emit = SCENE && S.emit && (S.tile[blockIdx.y * gridDim.x + blockIdx.x] & S.emit_bit);

#pragma unroll
  for (int s = 0; s < RPT; ++s) {
    const int ly = ty + kThreadsY * s, gy = gy0 + ly;
    codes[s] = 0;
#pragma unroll
    for (int q = 0; q < 2; ++q) {
      const int lx = 2 * tx + q, gx = gx0 + lx;
      const bool in = gx >= 0 && gx <= n + 1 && gy >= 0 && gy <= n + 1;
      const std::int64_t g = static_cast<std::int64_t>(gy) * w + gx;
      T v = T(0), v0 = T(0);
      if (in) {
        v = A.src ? A.src[g] : gen_value(A, gx, gy, fv, fd);
        v0 = x0_value(A, g, gx, gy, fv, fd);
      }
      if constexpr (SCENE) {
        if (gx >= 1 && gx <= n && gy >= 1 && gy <= n) {
          if (S.emit) v0 = with_emit(v0, A, S, g, emit);
          const int cd = S.code ? S.code[g] : 0;
          if (cd & kSolidSelf) v = T(0);
          codes[s] |= static_cast<unsigned>(cd) << (8 * q);
        }
      }
      const int colour = (lx + gy) & 1;
      sm[(colour * EH + ly) * kPairs + tx] = v;
      if (q == 0) x0r0[s] = v0;
      else x0r1[s] = v0;
    }
  }
  __syncthreads();
  const bool edge_block = gx0 <= 0 || gy0 <= 0 || gx0 + kExtW - 1 >= n + 1 || gy0 + EH - 1 >= n + 1;

  for (int it = 0; it < A.k; ++it) {
#pragma unroll
    for (int c = 0; c < 2; ++c) {
      const T* o = sm + (1 - c) * EH * kPairs;
#pragma unroll
      for (int s = 0; s < RPT; ++s) {
        const int ly = ty + kThreadsY * s, gy = gy0 + ly;
        const int p = (c + gy) & 1;
        const int lx = 2 * tx + p, gx = gx0 + lx;
        if (ly >= 1 && ly <= EH - 2 && lx >= 1 && lx <= kExtW - 2 && gx >= 1 && gx <= n && gy >= 1 && gy <= n) {
          const T l = o[ly * kPairs + tx - 1 + p];
          const T r = o[ly * kPairs + tx + p];
          const T d = o[(ly - 1) * kPairs + tx];
          const T u = o[(ly + 1) * kPairs + tx];
          const T xv = p ? x0r1[s] : x0r0[s];
          if constexpr (SCENE) {
            const int cd = static_cast<int>(codes[s] >> (8 * p)) & 0xff;
            if (!(cd & kSolidSelf)) sm[(c * EH + ly) * kPairs + tx] = gs_scene<-1>(xv, l, r, d, u, cd, A, S);
          } else {
            sm[(c * EH + ly) * kPairs + tx] = gs_update<-1>(xv, l, r, d, u, A);
          }
        }
      }
      __syncthreads();
    }
    if (edge_block) {  // set_bnd's edges (not the corners) from the new interior
#pragma unroll
      for (int s = 0; s < RPT; ++s) {
        const int ly = ty + kThreadsY * s, gy = gy0 + ly;
#pragma unroll
        for (int q = 0; q < 2; ++q) {
          const int lx = 2 * tx + q, gx = gx0 + lx;
          int sx = lx, sy = ly;
          bool neg = false, edge = false;
          if ((gx == 0 || gx == n + 1) && gy >= 1 && gy <= n) {
            sx = gx == 0 ? lx + 1 : lx - 1;
            neg = A.b == kU;
            edge = true;
          } else if ((gy == 0 || gy == n + 1) && gx >= 1 && gx <= n) {
            sy = gy == 0 ? ly + 1 : ly - 1;
            neg = A.b == kV;
            edge = true;
          }
          if (edge && sx >= 0 && sx < kExtW && sy >= 0 && sy < EH) {
            const int colour = (lx + gy) & 1;
            const T v = sm[((1 - colour) * EH + sy) * kPairs + (sx >> 1)];
            sm[(colour * EH + ly) * kPairs + tx] = neg ? -v : v;
          }
        }
      }
      __syncthreads();
    }
  }

  T m = -INFINITY;
#pragma unroll
  for (int s = 0; s < RPT; ++s) {
    const int ly = ty + kThreadsY * s, gy = gy0 + ly;
    if (ly < kHalo || ly >= kHalo + TY || gy > n + 1) continue;
#pragma unroll
    for (int q = 0; q < 2; ++q) {
      const int lx = 2 * tx + q, gx = gx0 + lx;
      if (lx < kHalo || lx >= kHalo + kTileX || gx > n + 1) continue;
      const int colour = (lx + gy) & 1;
      const T v = sm[(colour * EH + ly) * kPairs + tx];
      A.dst[static_cast<std::int64_t>(gy) * w + gx] = v;
      if (A.max && !((gx == 0 || gx == n + 1) && (gy == 0 || gy == n + 1))) {
        const T x0v = q ? x0r1[s] : x0r0[s];
        m = max_of(m, A.max == 1 ? v : v * v + x0v * x0v);
      }
    }
  }
  if (A.max) block_max<T, kPairs * kThreadsY>(m, A.partial + blockIdx.y * gridDim.x + blockIdx.x, red);
}
template <class T, int K, int RPT>
__global__ void __launch_bounds__(kPairs* kThreadsY) rb_pass(const PassArgs<T> A) {
  rb_pass_body<T, K, RPT, false>(A, SceneArgs<T>{});
}
template <class T, int K, int RPT>
__global__ void __launch_bounds__(kPairs* kThreadsY) rb_pass_scene(const PassArgs<T> A, const SceneArgs<T> S) {
  rb_pass_body<T, K, RPT, true>(A, S);
}

// lin_solve's last set_bnd corners, from the edges the passes left.
template <class T>
__global__ void corners_kernel(T* x, int n) {
  const int w = n + 2;
  if (threadIdx.x == 0) {
    x[ix(0, 0, w)] = corner(x[ix(1, 0, w)], x[ix(0, 1, w)]);
    x[ix(n + 1, 0, w)] = corner(x[ix(n, 0, w)], x[ix(n + 1, 1, w)]);
    x[ix(0, n + 1, w)] = corner(x[ix(1, n + 1, w)], x[ix(0, n, w)]);
    x[ix(n + 1, n + 1, w)] = corner(x[ix(n, n + 1, w)], x[ix(n + 1, n, w)]);
  }
}

// set_bnd(b, x): edges from the interior, corners from the same values
// (recomputed, so that no thread reads what another writes).
template <class T>
__global__ void set_bnd_kernel(T* x, int n, int b) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int w = n + 2;
  auto sgn = [](bool neg, T v) { return neg ? -v : v; };
  if (i >= 1 && i <= n) {
    x[ix(0, i, w)] = sgn(b == kU, x[ix(1, i, w)]);
    x[ix(n + 1, i, w)] = sgn(b == kU, x[ix(n, i, w)]);
    x[ix(i, 0, w)] = sgn(b == kV, x[ix(i, 1, w)]);
    x[ix(i, n + 1, w)] = sgn(b == kV, x[ix(i, n, w)]);
  } else if (i == 0) {
    x[ix(0, 0, w)] = corner(sgn(b == kV, x[ix(1, 1, w)]), sgn(b == kU, x[ix(1, 1, w)]));
    x[ix(n + 1, 0, w)] = corner(sgn(b == kV, x[ix(n, 1, w)]), sgn(b == kU, x[ix(n, 1, w)]));
    x[ix(0, n + 1, w)] = corner(sgn(b == kV, x[ix(1, n, w)]), sgn(b == kU, x[ix(1, n, w)]));
    x[ix(n + 1, n + 1, w)] = corner(sgn(b == kV, x[ix(n, n, w)]), sgn(b == kU, x[ix(n, n, w)]));
  }
}

// add_source on the boundary layer of x, where react's source is zero (x + dt*0:
// a -0 becomes +0); the seed's step keeps d's boundary layer.
template <class T>
__global__ void add_zero_boundary(T* x, int n, T dt) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int w = n + 2, e = n + 1;
  const T zero = dt * T(0);
  if (i <= e) {
    x[ix(i, 0, w)] = x[ix(i, 0, w)] + zero;
    x[ix(i, e, w)] = x[ix(i, e, w)] + zero;
  }
  if (i >= 1 && i < e) {
    x[ix(0, i, w)] = x[ix(0, i, w)] + zero;
    x[ix(e, i, w)] = x[ix(e, i, w)] + zero;
  }
}

template <class T>
struct SpeedSq {
  const T* u;
  const T* v;
  __host__ __device__ T operator()(long long i) const { return u[i] * u[i] + v[i] * v[i]; }
};
template <class T>
struct MaxOp {
  __host__ __device__ T operator()(T x, T y) const { return max_of(x, y); }
};

// react's decision, on the device: the maxima of the per-block partials and the
// corners (which the passes leave to corners_kernel), then flags[0] velocity,
// flags[1] density. One block, a fixed reduction order.
template <class T>
__global__ void react_decide(const T* pv, const T* pd, int parts, const T* d0, const T* u0, const T* v0, int n,
                             int* flags, long long* counters, int forcing_react) {
  __shared__ T sv[32], sd[32];
  const int t = static_cast<int>(threadIdx.x);
  T mv = -INFINITY, md = -INFINITY;
  for (int i = t; i < parts; i += static_cast<int>(blockDim.x)) {
    mv = max_of(mv, pv[i]);
    md = max_of(md, pd[i]);
  }
  if (t < 4) {
    const int e = n + 1, w = n + 2;
    const std::int64_t c = ix(t & 1 ? e : 0, t & 2 ? e : 0, w);
    mv = max_of(mv, u0[c] * u0[c] + v0[c] * v0[c]);
    md = max_of(md, d0[c]);
  }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    mv = max_of(mv, __shfl_xor_sync(kFull, mv, o));
    md = max_of(md, __shfl_xor_sync(kFull, md, o));
  }
  if ((t & 31) == 0) {
    sv[t >> 5] = mv;
    sd[t >> 5] = md;
  }
  __syncthreads();
  if (t == 0) {
    for (int i = 1; i < static_cast<int>(blockDim.x) / 32; ++i) {
      mv = max_of(mv, sv[i]);
      md = max_of(md, sd[i]);
    }
    const int fv = forcing_react && mv < T(kReactVelocityThreshold);
    const int fd = forcing_react && md < T(kReactDensityThreshold);
    flags[0] = fv;
    flags[1] = fd;
    counters[0] += 1;
    counters[1] += fv;
    counters[2] += fd;
  }
}

// project, first half: div inside and its set_bnd(0) copies (the pressure's zero
// initial guess is generated by the solve).
template <class T>
__global__ void project_begin(const T* u, const T* v, T* div, int n) {
  const int x = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int y = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
  if (x > n + 1 || y > n + 1) return;
  const int w = n + 2;
  auto dv = [&](int i, int j) {
    return divergence_cell(u[ix(i - 1, j, w)], u[ix(i + 1, j, w)], v[ix(i, j - 1, w)], v[ix(i, j + 1, w)], n);
  };
  const bool ex = x == 0 || x == n + 1, ey = y == 0 || y == n + 1;
  const int xi = x == 0 ? 1 : (x == n + 1 ? n : x), yi = y == 0 ? 1 : (y == n + 1 ? n : y);
  T val;
  if (ex && ey) {
    const T e = dv(xi, yi);  // both edge neighbours of a corner copy this interior cell
    val = corner(e, e);
  } else {
    val = dv(xi, yi);
  }
  div[ix(x, y, w)] = val;
}

// project, second half: subtract the pressure gradient inside.
template <class T>
__global__ void project_end(T* u, T* v, const T* p, int n) {
  const int x = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x) + 1;
  const int y = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y) + 1;
  if (x > n || y > n) return;
  const int w = n + 2;
  const std::int64_t i = ix(x, y, w);
  u[i] = gradient_sub(u[i], p[ix(x - 1, y, w)], p[ix(x + 1, y, w)], n);
  v[i] = gradient_sub(v[i], p[ix(x, y - 1, w)], p[ix(x, y + 1, w)], n);
}

// Advects up to three fields by one velocity (U, V), inside.
template <class T>
__global__ void advect_kernel(const T* U, const T* V, T* o1, const T* q1, T* o2, const T* q2, T* o3, const T* q3,
                              int n, T dt0) {
  const int x = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x) + 1;
  const int y = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y) + 1;
  if (x > n || y > n) return;
  const int w = n + 2;
  const std::int64_t i = ix(x, y, w);
  const AdvectWeights<T> q = advect_weights(w, n, x, y, U[i], V[i], dt0);
  o1[i] = advect_apply(q1, q);
  if (o2) o2[i] = advect_apply(q2, q);
  if (o3) o3[i] = advect_apply(q3, q);
}

// ---- a scene's operations between the solves (scene_cpu.cpp's, closed sides) ----------------
// project, first half: div inside by the cells' codes and its set_bnd(0) copies
// (the corners the mean of two copies of one interior value, as project_begin).
template <class T>
__global__ void scene_project_begin(const T* u, const T* v, T* div, const std::uint8_t* code, int n, T inv_h) {
  const int x = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int y = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
  if (x > n + 1 || y > n + 1) return;
  const int w = n + 2;
  const int xi = x == 0 ? 1 : (x == n + 1 ? n : x), yi = y == 0 ? 1 : (y == n + 1 ? n : y);
  const std::int64_t c = ix(xi, yi, w);
  const T e = scene_cells::divergence(u, v, c, static_cast<std::int64_t>(w), code ? code[c] : 0, inv_h);
  const bool ex = x == 0 || x == n + 1, ey = y == 0 || y == n + 1;
  div[ix(x, y, w)] = ex && ey ? corner(e, e) : e;
}

// project, second half: the pressure gradient inside by the cells' codes.
template <class T>
__global__ void scene_project_end(T* u, T* v, const T* p, const std::uint8_t* code, int n, T inv_h) {
  const int x = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x) + 1;
  const int y = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y) + 1;
  if (x > n || y > n) return;
  const int w = n + 2;
  const std::int64_t c = ix(x, y, w);
  scene_cells::gradient(u, v, p, c, static_cast<std::int64_t>(w), code ? code[c] : 0, inv_h);
}

// Advects one or two fields by (U, V) inside; solid cells get 0.
template <class T>
__global__ void scene_advect_kernel(const T* U, const T* V, T* o1, const T* q1, T* o2, const T* q2,
                                    const std::uint8_t* code, int n, T dt0) {
  const int x = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x) + 1;
  const int y = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y) + 1;
  if (x > n || y > n) return;
  const int w = n + 2;
  const std::int64_t c = ix(x, y, w);
  if (code && (code[c] & kSolidSelf)) {
    o1[c] = T(0);
    if (o2) o2[c] = T(0);
    return;
  }
  const Trace<T> tx = back_trace(x, U[c], dt0, n, false);
  const Trace<T> ty = back_trace(y, V[c], dt0, n, false);
  o1[c] = interpolate(q1, w, tx, ty);
  if (o2) o2[c] = interpolate(q2, w, tx, ty);
}

// The forces from the state at the start of the step (scene_cells.cuh): |w| first
// (vorticity confinement), then fu, fv.
template <class T>
__global__ void scene_vorticity_kernel(const T* u, const T* v, T* wa, const std::uint8_t* code, int n, T inv_h) {
  const int x = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x) + 1;
  const int y = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y) + 1;
  if (x > n || y > n) return;
  const std::int64_t w = n + 2, c = ix(x, y, n + 2);
  wa[c] = scene_cells::vorticity_abs(u, v, c, w, code ? code[c] : 0, inv_h);
}
template <class T>
__global__ void scene_forces_kernel(const T* u, const T* v, const T* wa, const T* d, const T* temp, T* fu, T* fv,
                                    const std::uint8_t* code, int n, T inv_h, T eps_h, int vort, int buoy, T ba, T bb,
                                    T ambient) {
  const int x = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x) + 1;
  const int y = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y) + 1;
  if (x > n || y > n) return;
  const std::int64_t w = n + 2, c = ix(x, y, n + 2);
  scene_cells::forces(u, v, wa, d, temp, fu, fv, c, w, code ? code[c] : 0, vort != 0, buoy != 0, inv_h, eps_h, ba, bb,
                      ambient);
}
// A velocity component's x0 where forces act (the solve then adds nothing): react's
// add_source over every cell, then inside + dt*emitter and + dt*force (scene_cpu.cpp).
template <class T>
__global__ void scene_add_velocity(T* x, int field, const T* emit, const T* f, const int* flags, int n, T dt, T force,
                                   T source) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int j = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
  if (i > n + 1 || j > n + 1) return;
  const std::int64_t c = ix(i, j, n + 2);
  T value = x[c] + dt * react_source(field, i, j, n, flags[0] != 0, flags[1] != 0, force, source);
  if (i >= 1 && i <= n && j >= 1 && j <= n) {
    if (emit) value = value + dt * emit[c];
    if (f) value = value + dt * f[c];
  }
  x[c] = value;
}

// A scalar's solid cells beside fluid: the mean of their fluid neighbours for the
// advection (fill), 0 again after it (clear).
template <class T>
__global__ void scene_border_kernel(T* q, const ObstacleLists::Border* border, int count, int fill) {
  const int k = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (k >= count) return;
  const ObstacleLists::Border b = border[k];
  q[b.c] = fill ? scene_cells::border_mean(q, b) : T(0);
}

// The tiles (tile_config): name, kernel kind, K iterations per pass, RPT rows
// per thread, WY threads in y (rb_reg) / the extended tile's height (rb_pass: 8*RPT).
struct TileSpec {
  const char* name;
  bool reg;
  int k, rpt, wy;
};
constexpr TileSpec kTiles[] = {
    {"r7x8", true, 7, 8, 16},   {"r10x8", true, 10, 8, 16}, {"r7x8a", true, 7, 8, 16}, {"r5x8", true, 5, 8, 16},
    {"r7x16", true, 7, 16, 8},  {"r10x16", true, 10, 16, 8}, {"r7x4", true, 7, 4, 32},  {"s5x10", false, 5, 10, 8},
    {"s10x16", false, 10, 16, 8},
};
constexpr int kDefaultTileF32 = 0;  // r7x8: the fastest at N=4096 on an H100 (bench/results.md)
constexpr TileSpec kTileF64 = {"s5x6", false, 5, 6, 8};

TileSpec tile_spec(int element_size) {
  if (element_size == 8) return kTileF64;
  if (const char* e = std::getenv("NUMPIPE_FLUID_TILE")) {
    std::string names;
    for (const TileSpec& t : kTiles) {
      if (std::string(e) == t.name) return t;
      names += std::string(" ") + t.name;
    }
    fail_input(std::string("NUMPIPE_FLUID_TILE: unknown tile '") + e + "' (known:" + names + ")");
  }
  return kTiles[kDefaultTileF32];
}

template <class T>
class CudaSolver final : public Solver<T> {
 public:
  // state: d, u, v, d0, u0, v0, each `cells` values; scene: the step is a scene's
  // (scene_cpu.cpp's stam step on a square box with closed sides), or null.
  CudaSolver(const Params& p, const T* const state[6], std::size_t cells, int device,
             const FusedScene<T>* scene = nullptr)
      : p_(p), n_(p.n) {
    NUMPIPE_CUDA_CHECK(cudaSetDevice(device));
    NUMPIPE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    NUMPIPE_CUDA_CHECK(cudaStreamCreateWithFlags(&side_, cudaStreamNonBlocking));
    NUMPIPE_CUDA_CHECK(cudaEventCreateWithFlags(&fork_, cudaEventDisableTiming));
    NUMPIPE_CUDA_CHECK(cudaEventCreateWithFlags(&join_, cudaEventDisableTiming));
    cells_ = cells;
    for (int k = 0; k < 6; ++k) {
      buf_[k] = DeviceArray<T>(cells_);
      copy_to_device(buf_[k].data(), state[k], cells_ * sizeof(T), stream_);  // pinned staging (common/staging.hpp)
    }
    flags_ = DeviceArray<int>(2);
    counters_ = DeviceArray<long long>(3);
    NUMPIPE_CUDA_CHECK(cudaMemsetAsync(counters_.data(), 0, 3 * sizeof(long long), stream_));
    NUMPIPE_CUDA_CHECK(cudaMemsetAsync(flags_.data(), 0, 2 * sizeof(int), stream_));
    select_tile();
    if (scene) set_scene(*scene);
    const int passes = (p_.iters + tile_.k - 1) / tile_.k;
    if (passes > 1) scratch_ = DeviceArray<T>(cells_);
    // react's maxima of the initial sources, as the first partials (the rest -inf)
    parts_ = tiles_x_ * tiles_y_;
    partial_v_ = DeviceArray<T>(static_cast<std::size_t>(parts_));
    partial_d_ = DeviceArray<T>(static_cast<std::size_t>(parts_));
    std::vector<T> lowest(static_cast<std::size_t>(parts_), -std::numeric_limits<T>::infinity());
    partial_v_.copy_from_host(lowest.data(), lowest.size(), stream_);
    partial_d_.copy_from_host(lowest.data(), lowest.size(), stream_);
    SpeedSq<T> sq{buf_[4].data(), buf_[5].data()};
    auto it = thrust::make_transform_iterator(thrust::counting_iterator<long long>(0), sq);
    std::size_t b1 = 0, b2 = 0;
    NUMPIPE_CUDA_CHECK(cub::DeviceReduce::Reduce(nullptr, b1, it, partial_v_.data(), static_cast<long long>(cells_),
                                                 MaxOp<T>{}, T(-INFINITY), stream_));
    NUMPIPE_CUDA_CHECK(cub::DeviceReduce::Reduce(nullptr, b2, buf_[3].data(), partial_d_.data(),
                                                 static_cast<long long>(cells_), MaxOp<T>{}, T(-INFINITY), stream_));
    DeviceArray<unsigned char> temp(std::max<std::size_t>(std::max(b1, b2), 1));
    std::size_t bytes = b1;
    NUMPIPE_CUDA_CHECK(cub::DeviceReduce::Reduce(temp.data(), bytes, it, partial_v_.data(),
                                                 static_cast<long long>(cells_), MaxOp<T>{}, T(-INFINITY), stream_));
    bytes = b2;
    NUMPIPE_CUDA_CHECK(cub::DeviceReduce::Reduce(temp.data(), bytes, buf_[3].data(), partial_d_.data(),
                                                 static_cast<long long>(cells_), MaxOp<T>{}, T(-INFINITY), stream_));
    NUMPIPE_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  ~CudaSolver() override {
    if (fork_) cudaEventDestroy(fork_);
    if (join_) cudaEventDestroy(join_);
    if (side_) cudaStreamDestroy(side_);
    if (stream_) cudaStreamDestroy(stream_);
  }

  double advance(int steps) override {
    return steps_.run(stream_, steps, [this](cudaStream_t) { enqueue_step(); });
  }

  void fetch(Fields<T>& out) override {
    if (out.n != n_ || out.cells() != cells_) out.resize_uninitialised(n_);  // every value is overwritten below
    T* const dst[6] = {out.d.data(), out.u.data(), out.v.data(), out.d0.data(), out.u0.data(), out.v0.data()};
    fetch(dst);
  }
  // A scene's temperature into t (empty without one), queued before fetch(dst), which waits for it.
  void fetch_temperature(FieldVector<T>& t) {
    if (!temperature()) {
      t.clear();
      return;
    }
    t.resize(cells_);
    copy_to_host(t.data(), t_.data(), cells_ * sizeof(T), stream_);  // pinned staging
  }
  // d, u, v, d0, u0, v0 into arrays of cells() values each.
  void fetch(T* const dst[6]) {
    for (int k = 0; k < 6; ++k) copy_to_host(dst[k], buf_[k].data(), cells_ * sizeof(T), stream_);  // pinned staging
    NUMPIPE_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  std::string kernels() const override {
    if (!scene_) return std::string("tile ") + tile_.name;
    return std::string("scene path, tile ") + tile_.name + " (" + (sizeof(T) == 4 ? "fp32" : "fp64") + "), " +
           std::to_string(obstacle_tiles_) + " of " + std::to_string(tiles_x_ * tiles_y_) + " tiles near obstacles, " +
           std::to_string(fix_count_) + " cells beside obstacles";
  }

  Counters counters() const override {
    long long c[3] = {0, 0, 0};
    NUMPIPE_CUDA_CHECK(cudaMemcpyAsync(c, counters_.data(), sizeof(c), cudaMemcpyDeviceToHost, stream_));
    NUMPIPE_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return Counters{c[0], c[1], c[2]};
  }

 private:
  Params p_;
  int n_;
  std::size_t cells_ = 0;
  cudaStream_t stream_ = nullptr;
  cudaStream_t side_ = nullptr;  // the edge tiles' kernel runs beside the inner tiles'
  cudaEvent_t fork_ = nullptr, join_ = nullptr;
  DeviceArray<T> buf_[6];  // d, u, v, d0, u0, v0: fixed roles (the graph captures pointers)
  DeviceArray<T> scratch_;
  DeviceArray<T> partial_v_, partial_d_;  // react's maxima per block of the last passes
  DeviceArray<int> flags_;
  DeviceArray<long long> counters_;
  int parts_ = 0;
  StepReplay steps_{std::getenv("NUMPIPE_FLUID_NO_GRAPH") == nullptr};  // a step: one graph launch
  using PassKernel = void (*)(PassArgs<T>);
  using ScenePassKernel = void (*)(PassArgs<T>, SceneArgs<T>);
  using RegKernel = void (*)(PassArgs<float>, TileMap);
  using SceneRegKernel = void (*)(PassArgs<float>, TileMap, SceneArgs<float>);
  PassKernel pass_ = nullptr;               // rb_pass: one kernel over all tiles
  ScenePassKernel scene_pass_ = nullptr;    // rb_pass: a scene's
  RegKernel inner_[2] = {}, edge_[2] = {};  // rb_reg: inner and edge tiles, [1]: c a power of two
  SceneRegKernel scene_inner_[2] = {};      // rb_reg: a scene's inner tiles
  SceneRegKernel scene_reg_ = nullptr;      // rb_reg: a scene's edge tiles and those near its obstacle
  TileSpec tile_{};
  dim3 block_;
  int tiles_x_ = 0, tiles_y_ = 0, edge_tiles_ = 0;
  int ext_w_ = 0, ext_h_ = 0, halo_ = 0;  // the extended tile and its halo
  TileMap map_{};
  dim3 inner_grid_;
  std::size_t smem_bytes_ = 0, scene_smem_bytes_ = 0;
  // A scene (set_scene): its cell codes, the solid cells beside fluid, the emitters
  // of d, u, v, the tile flags (kTile*) and the scene kernel's tiles.
  bool scene_ = false, vort_ = false, buoy_ = false;
  T inv_h_ = T(0);
  double vorticity_ = 0, buoyancy_a_ = 0, buoyancy_b_ = 0, ambient_ = 0;
  DeviceArray<std::uint8_t> code_, tile_flags_;
  DeviceArray<ObstacleLists::Border> border_;
  DeviceArray<T> emit_[4];
  DeviceArray<T> t_, t0_, fu_, fv_, wabs_;  // temperature and its work buffer; the forces
  DeviceArray<int> scene_tiles_;
  int border_count_ = 0, fix_count_ = 0, scene_tile_count_ = 0, obstacle_tiles_ = 0;

  // The tiles of an extended tile of ew x eh cells with halo h: edge tiles are
  // those reaching x or y <= 0 or >= n+1 (a first and some last rows and columns).
  void map_tiles(int ew, int eh, int h) {
    const int tx = ew - 2 * h, ty = eh - 2 * h, n = n_;
    ext_w_ = ew;
    ext_h_ = eh;
    halo_ = h;
    tiles_x_ = (n + 2 + tx - 1) / tx;
    tiles_y_ = (n + 2 + ty - 1) / ty;
    map_ = TileMap{};
    map_.tiles_x = tiles_x_;
    auto edges = [&](int tiles, int t, int e, int* list, int& count, int& lo, int& hi) {
      lo = tiles;
      hi = -1;
      count = 0;
      for (int b = 0; b < tiles; ++b) {
        const int g0 = b * t - h;
        if (g0 <= 0 || g0 + e - 1 >= n + 1) {
          if (count == 8) fail_internal("fluid-step: more than 8 edge tile rows or columns");
          list[count++] = b;
        } else {
          lo = std::min(lo, b);
          hi = std::max(hi, b);
        }
      }
    };
    int bx_lo, bx_hi, by_lo, by_hi;
    edges(tiles_x_, tx, ew, map_.ex, map_.nex, bx_lo, bx_hi);
    edges(tiles_y_, ty, eh, map_.ey, map_.ney, by_lo, by_hi);
    // the inner tiles are one rectangle: edge columns and rows are a prefix and a suffix
    if (bx_hi >= bx_lo && bx_hi - bx_lo + 1 + map_.nex != tiles_x_) fail_internal("fluid-step: edge tile columns not at the ends");
    if (by_hi >= by_lo && by_hi - by_lo + 1 + map_.ney != tiles_y_) fail_internal("fluid-step: edge tile rows not at the ends");
    const bool inner = bx_hi >= bx_lo && by_hi >= by_lo;
    map_.bx_lo = bx_hi >= bx_lo ? bx_lo : 0;
    map_.by_lo = by_hi >= by_lo ? by_lo : 0;
    inner_grid_ = inner ? dim3(static_cast<unsigned>(bx_hi - bx_lo + 1), static_cast<unsigned>(by_hi - by_lo + 1))
                        : dim3(0, 0);
    edge_tiles_ = map_.ney * tiles_x_ + map_.nex * (tiles_y_ - map_.ney);
    if (!inner && edge_tiles_ != tiles_x_ * tiles_y_) fail_internal("fluid-step: tile map does not cover the grid");
  }

  template <int K, int RPT, int WY, int MINB>
  void use_reg() {
    if constexpr (sizeof(T) == 4) {
      inner_[0] = rb_reg_inner<K, RPT, WY, MINB, 0>;
      inner_[1] = rb_reg_inner<K, RPT, WY, MINB, 1>;
      edge_[0] = rb_reg_edge<K, RPT, WY, 0>;
      edge_[1] = rb_reg_edge<K, RPT, WY, 1>;
      smem_bytes_ = reg_smem_bytes<RPT, WY>();
      block_ = dim3(32, WY);
      map_tiles(kRegW, RPT * WY, 2 * K);
      scene_inner_[0] = rb_reg_scene_inner<K, RPT, WY, MINB, 0>;
      scene_inner_[1] = rb_reg_scene_inner<K, RPT, WY, MINB, 1>;
      scene_reg_ = rb_reg_scene<K, RPT, WY>;
      scene_smem_bytes_ = reg_scene_smem_bytes<RPT, WY>();
      for (RegKernel f : {inner_[0], inner_[1], edge_[0], edge_[1]})
        NUMPIPE_CUDA_CHECK(cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                static_cast<int>(smem_bytes_)));
      for (SceneRegKernel f : {scene_inner_[0], scene_inner_[1], scene_reg_})
        NUMPIPE_CUDA_CHECK(cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                static_cast<int>(f == scene_reg_ ? scene_smem_bytes_ : smem_bytes_)));
    }
  }
  template <int K, int RPT>
  void use_smem() {
    constexpr int EH = kThreadsY * RPT, H = 2 * K;
    pass_ = rb_pass<T, K, RPT>;
    scene_pass_ = rb_pass_scene<T, K, RPT>;
    smem_bytes_ = (2 * EH * kPairs + 16) * sizeof(T);
    block_ = dim3(kPairs, kThreadsY);
    map_tiles(kExtW, EH, H);
    NUMPIPE_CUDA_CHECK(cudaFuncSetAttribute(pass_, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(smem_bytes_)));
    NUMPIPE_CUDA_CHECK(cudaFuncSetAttribute(scene_pass_, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(smem_bytes_)));
  }
  void select_tile() {
    tile_ = tile_spec(sizeof(T));
    const std::string name = tile_.name;
    if constexpr (sizeof(T) == 8) {
      use_smem<5, 6>();
    } else {
      if (name == "r7x8") use_reg<7, 8, 16, 2>();
      else if (name == "r10x8") use_reg<10, 8, 16, 2>();
      else if (name == "r7x8a") use_reg<7, 8, 16, 1>();
      else if (name == "r5x8") use_reg<5, 8, 16, 2>();
      else if (name == "r7x16") use_reg<7, 16, 8, 2>();
      else if (name == "r10x16") use_reg<10, 16, 8, 2>();
      else if (name == "r7x4") use_reg<7, 4, 32, 1>();
      else if (name == "s10x16") use_smem<10, 16>();
      else use_smem<5, 10>();
    }
  }

  // S: a scene's (scene_ set).
  void launch_pass(const PassArgs<T>& A, const SceneArgs<T>& S) {
    if (pass_) {
      const dim3 grid(static_cast<unsigned>(tiles_x_), static_cast<unsigned>(tiles_y_));
      if (scene_) scene_pass_<<<grid, block_, smem_bytes_, stream_>>>(A, S);
      else pass_<<<grid, block_, smem_bytes_, stream_>>>(A);
      NUMPIPE_CUDA_CHECK_LAUNCH();
      return;
    }
    if constexpr (sizeof(T) == 4) {
      const bool inner = inner_grid_.x > 0 && inner_grid_.y > 0;
      // the edge tiles (a scene's: and those near its obstacle) beside the inner ones
      const int side_tiles = scene_ ? scene_tile_count_ : edge_tiles_;
      if (side_tiles > 0 && inner) {
        NUMPIPE_CUDA_CHECK(cudaEventRecord(fork_, stream_));
        NUMPIPE_CUDA_CHECK(cudaStreamWaitEvent(side_, fork_, 0));
      }
      if (side_tiles > 0) {
        const unsigned blocks = static_cast<unsigned>(side_tiles);
        if (scene_) scene_reg_<<<blocks, block_, scene_smem_bytes_, inner ? side_ : stream_>>>(A, map_, S);
        else edge_[A.mul]<<<blocks, block_, smem_bytes_, inner ? side_ : stream_>>>(A, map_);
        NUMPIPE_CUDA_CHECK_LAUNCH();
      }
      if (inner) {
        if (scene_) scene_inner_[A.mul]<<<inner_grid_, block_, smem_bytes_, stream_>>>(A, map_, S);
        else inner_[A.mul]<<<inner_grid_, block_, smem_bytes_, stream_>>>(A, map_);
        NUMPIPE_CUDA_CHECK_LAUNCH();
      }
      if (side_tiles > 0 && inner) {
        NUMPIPE_CUDA_CHECK(cudaEventRecord(join_, side_));
        NUMPIPE_CUDA_CHECK(cudaStreamWaitEvent(stream_, join_, 0));
      }
    }
  }

  dim3 grid2(int cells_per_side) const {
    return dim3(static_cast<unsigned>((cells_per_side + 31) / 32), static_cast<unsigned>((cells_per_side + 7) / 8));
  }

  void set_bnd(int b, T* x) {
    set_bnd_kernel<T><<<(n_ + 1 + 255) / 256, 256, 0, stream_>>>(x, n_, b);
    NUMPIPE_CUDA_CHECK_LAUNCH();
  }

  // lin_solve(b, x, x0, a, c) from the generated initial guess (gen: react's
  // source of that field, -1 zero), x0 read as x0 + dt*source(add) when add >= 0;
  // the last pass leaves react's maximum per block in `partial` (max 1: of x, 2: of x^2 + x0^2).
  // A scene's solve: x0 + dt*emit inside (emit_bit: the tiles that hold it), sigma
  // for the cells beside the obstacle.
  void lin_solve(int b, T* x, const T* x0, T a, T c, int gen, int add, int max, T* partial, const T* emit = nullptr,
                 int emit_bit = 0, T sigma = T(1)) {
    const int passes = (p_.iters + tile_.k - 1) / tile_.k;
    const Divisor<T> dv = make_divisor(c, false);
    const T* src = nullptr;
    for (int q = 0; q < passes; ++q) {
      T* dst = (passes - 1 - q) % 2 == 0 ? x : scratch_.data();
      const bool last = q == passes - 1;
      PassArgs<T> A{src,
                    x0,
                    dst,
                    last && max ? partial : nullptr,
                    flags_.data(),
                    n_,
                    p_.iters / passes + (q < p_.iters % passes ? 1 : 0),
                    b,
                    gen,
                    add,
                    last ? max : 0,
                    dv.mode == DivMode::multiply ? 1 : 0,
                    a,
                    c,
                    dv.r,
                    T(p_.dt),
                    T(p_.force),
                    T(p_.source)};
      const SceneArgs<T> S{scene_ ? code_ptr() : nullptr,
                           emit,
                           scene_ ? tile_flags_.data() : nullptr,
                           scene_ ? scene_tiles_.data() : nullptr,
                           emit_bit,
                           sigma};
      launch_pass(A, S);
      src = dst;
    }
    corners_kernel<T><<<1, 32, 0, stream_>>>(x, n_);
    NUMPIPE_CUDA_CHECK_LAUNCH();
  }

  void diffuse(int b, T* x, const T* x0, int field, double k, T* partial) {
    const T a = diffuse_a(T(p_.dt), T(k), n_);
    lin_solve(b, x, x0, a, T(1) + T(4) * a, field, field, partial ? 1 : 0, partial);
  }

  void project(T* u, T* v, T* p, T* div, T* partial) {
    project_begin<T><<<grid2(n_ + 2), dim3(32, 8), 0, stream_>>>(u, v, div, n_);
    NUMPIPE_CUDA_CHECK_LAUNCH();
    lin_solve(kScalar, p, div, T(1), T(4), -1, -1, partial ? 2 : 0, partial);
    project_end<T><<<grid2(n_), dim3(32, 8), 0, stream_>>>(u, v, p, n_);
    NUMPIPE_CUDA_CHECK_LAUNCH();
    set_bnd(kU, u);
    set_bnd(kV, v);
  }

  void advect(const T* U, const T* V, T* o1, const T* q1, T* o2, const T* q2, T* o3, const T* q3) {
    advect_kernel<T><<<grid2(n_), dim3(32, 8), 0, stream_>>>(U, V, o1, q1, o2, q2, o3, q3, n_, T(p_.dt) * T(n_));
    NUMPIPE_CUDA_CHECK_LAUNCH();
  }

  // ---- a scene (scene_cpu.cpp's step on a square box with closed sides) ----------------------
  const std::uint8_t* code_ptr() const { return code_.size() ? code_.data() : nullptr; }
  const T* emit_ptr(int field) const { return emit_[field].size() ? emit_[field].data() : nullptr; }
  bool temperature() const { return t_.size() > 0; }

  // The scene's arrays on the device, and which tiles its kernel runs: a tile
  // whose extended tile holds a cell of the obstacle or beside it (a code) takes
  // the obstacle's formulas; one that holds an emitter's value other than +0
  // reads that emitter (elsewhere x0 + dt*0 is formed without reading it).
  void set_scene(const FusedScene<T>& sc) {
    scene_ = true;
    inv_h_ = sc.inv_h;
    const int n = n_, w = n + 2, tiles = tiles_x_ * tiles_y_;
    const int tx = ext_w_ - 2 * halo_, ty = ext_h_ - 2 * halo_;
    std::vector<std::uint8_t> flags(static_cast<std::size_t>(tiles), 0);
    // the tiles whose extended tile holds cell (x, y): columns [bx0, bx1], rows [by0, by1]
    auto mark = [&](int x, int y, std::uint8_t bit) {
      const int lo_x = x + halo_ - ext_w_ + 1, lo_y = y + halo_ - ext_h_ + 1;
      const int bx0 = lo_x <= 0 ? 0 : (lo_x + tx - 1) / tx, bx1 = std::min(tiles_x_ - 1, (x + halo_) / tx);
      const int by0 = lo_y <= 0 ? 0 : (lo_y + ty - 1) / ty, by1 = std::min(tiles_y_ - 1, (y + halo_) / ty);
      for (int by = by0; by <= by1; ++by)
        for (int bx = bx0; bx <= bx1; ++bx) flags[static_cast<std::size_t>(by) * tiles_x_ + bx] |= bit;
    };
    if (sc.obstacle) {
      const ObstacleLists& ob = *sc.obstacle;
      code_ = DeviceArray<std::uint8_t>(cells_);
      copy_to_device(code_.data(), ob.code.data(), cells_, stream_);  // pinned staging
      border_count_ = static_cast<int>(ob.border.size());
      border_ = DeviceArray<ObstacleLists::Border>(std::max<std::size_t>(1, ob.border.size()));
      if (border_count_) border_.copy_from_host(ob.border.data(), ob.border.size(), stream_);
      fix_count_ = static_cast<int>(ob.fix.size());
      for (std::int64_t c : ob.solid) mark(static_cast<int>(c % w), static_cast<int>(c / w), kTileScene);
      for (int j = 1; j <= n; ++j)
        for (int q = ob.row_begin[static_cast<std::size_t>(j)]; q < ob.row_begin[static_cast<std::size_t>(j) + 1]; ++q)
          mark(ob.fix[static_cast<std::size_t>(q)].i, j, kTileScene);
    }
    const std::uint8_t emit_bits[4] = {kTileEmitD, kTileEmitU, kTileEmitV, kTileEmitT};
    for (int f = 0; f < 4; ++f) {
      const T* e = sc.emit[f];
      if (!e) continue;
      emit_[f] = DeviceArray<T>(cells_);
      copy_to_device(emit_[f].data(), e, cells_ * sizeof(T), stream_);
      for (int y = 0; y <= n + 1; ++y) {
        const T* row = e + static_cast<std::size_t>(y) * w;
        bool any = false;  // a value whose bits are not +0's (-0 included)
        for (int x = 0; x < w; ++x) any |= !(row[x] == T(0) && !std::signbit(row[x]));
        if (!any) continue;
        for (int x = 0; x < w; ++x)
          if (!(row[x] == T(0) && !std::signbit(row[x]))) mark(x, y, emit_bits[f]);
      }
    }
    // edge tiles (map_tiles): the scene kernel's too
    for (int by = 0; by < tiles_y_; ++by)
      for (int bx = 0; bx < tiles_x_; ++bx) {
        const int gx0 = bx * tx - halo_, gy0 = by * ty - halo_;
        std::uint8_t& f = flags[static_cast<std::size_t>(by) * tiles_x_ + bx];
        if (f & kTileScene) ++obstacle_tiles_;
        if (gx0 <= 0 || gy0 <= 0 || gx0 + ext_w_ - 1 >= n + 1 || gy0 + ext_h_ - 1 >= n + 1) f |= kTileScene;
      }
    std::vector<int> list;
    for (int t = 0; t < tiles; ++t)
      if (flags[static_cast<std::size_t>(t)] & kTileScene) list.push_back(t);
    scene_tile_count_ = static_cast<int>(list.size());
    tile_flags_ = DeviceArray<std::uint8_t>(flags.size());
    tile_flags_.copy_from_host(flags.data(), flags.size(), stream_);
    scene_tiles_ = DeviceArray<int>(std::max<std::size_t>(1, list.size()));
    if (!list.empty()) scene_tiles_.copy_from_host(list.data(), list.size(), stream_);
    auto zeros = [&] {
      DeviceArray<T> a(cells_);
      NUMPIPE_CUDA_CHECK(cudaMemsetAsync(a.data(), 0, a.bytes(), stream_));
      return a;
    };
    if (sc.temperature) {
      t_ = DeviceArray<T>(cells_);
      copy_to_device(t_.data(), sc.temperature, cells_ * sizeof(T), stream_);
      t0_ = zeros();
    }
    vorticity_ = sc.vorticity;
    buoyancy_a_ = sc.buoyancy_a;
    buoyancy_b_ = sc.buoyancy_b;
    ambient_ = sc.ambient;
    vort_ = vorticity_ != 0;
    buoy_ = buoyancy_a_ != 0 || buoyancy_b_ != 0;
    if (vort_ || buoy_) {
      fu_ = zeros();
      fv_ = zeros();
    }
    if (vort_) wabs_ = zeros();
    NUMPIPE_CUDA_CHECK(cudaStreamSynchronize(stream_));  // the host vectors go out of scope
  }

  // diffuse: from react's source of `field` (or zero: -1) as the initial guess, x0 +
  // dt*react's source (add) + dt*the emitter (emit: 0 d, 1 u, 2 v, 3 T; -1 none).
  void scene_diffuse(int b, T* x, const T* x0, int field, int add, int emit, double k, T* partial, T sigma) {
    const T a = T(p_.dt) * static_cast<T>(k) * inv_h_ * inv_h_;  // scene_cpu.cpp's diffuse: 1/h for Stam's N
    const int bits[4] = {kTileEmitD, kTileEmitU, kTileEmitV, kTileEmitT};
    lin_solve(b, x, x0, a, T(1) + T(4) * a, field, add, partial ? 1 : 0, partial, emit >= 0 ? emit_ptr(emit) : nullptr,
              emit >= 0 ? bits[emit] : 0, sigma);
  }

  // The forces from the state at the start of the step, and u, v with react's
  // sources, the emitters and the forces added (the solves then add nothing).
  void scene_forces() {
    T *d = buf_[0].data(), *u = buf_[1].data(), *v = buf_[2].data();
    set_bnd(kU, u);  // the ghost cells by the sides' rules first (an input state's may be stale)
    set_bnd(kV, v);
    T* wa = wabs_.size() ? wabs_.data() : nullptr;
    if (vort_) {
      scene_vorticity_kernel<T><<<grid2(n_), dim3(32, 8), 0, stream_>>>(u, v, wa, code_ptr(), n_, inv_h_);
      NUMPIPE_CUDA_CHECK_LAUNCH();
      set_bnd(kScalar, wa);  // closed sides: copies, as kSceneCopy
    }
    const T eps_h = static_cast<T>(vorticity_) / inv_h_;
    scene_forces_kernel<T><<<grid2(n_), dim3(32, 8), 0, stream_>>>(
        u, v, wa, d, temperature() ? t_.data() : nullptr, fu_.data(), fv_.data(), code_ptr(), n_, inv_h_, eps_h,
        vort_ ? 1 : 0, buoy_ ? 1 : 0, static_cast<T>(buoyancy_a_), static_cast<T>(buoyancy_b_), static_cast<T>(ambient_));
    NUMPIPE_CUDA_CHECK_LAUNCH();
    const T dt = T(p_.dt), force = T(p_.force), source = T(p_.source);
    scene_add_velocity<T><<<grid2(n_ + 2), dim3(32, 8), 0, stream_>>>(u, kFieldU, emit_ptr(1), vort_ ? fu_.data() : nullptr,
                                                                      flags_.data(), n_, dt, force, source);
    NUMPIPE_CUDA_CHECK_LAUNCH();
    scene_add_velocity<T><<<grid2(n_ + 2), dim3(32, 8), 0, stream_>>>(v, kFieldV, emit_ptr(2), fv_.data(), flags_.data(),
                                                                      n_, dt, force, source);
    NUMPIPE_CUDA_CHECK_LAUNCH();
  }

  void scene_project(T* u, T* v, T* p, T* div, T* partial) {
    scene_project_begin<T><<<grid2(n_ + 2), dim3(32, 8), 0, stream_>>>(u, v, div, code_ptr(), n_, inv_h_);
    NUMPIPE_CUDA_CHECK_LAUNCH();
    lin_solve(kScalar, p, div, T(1), T(4), -1, -1, partial ? 2 : 0, partial, nullptr, 0, T(1));
    scene_project_end<T><<<grid2(n_), dim3(32, 8), 0, stream_>>>(u, v, p, code_ptr(), n_, inv_h_);
    NUMPIPE_CUDA_CHECK_LAUNCH();
    set_bnd(kU, u);
    set_bnd(kV, v);
  }

  void scene_border(T* q, bool fill) {
    if (!border_count_) return;
    scene_border_kernel<T><<<(border_count_ + 255) / 256, 256, 0, stream_>>>(q, border_.data(), border_count_, fill ? 1 : 0);
    NUMPIPE_CUDA_CHECK_LAUNCH();
  }

  // scene_cpu.cpp's step on a square box with closed sides (react, then the
  // sources, the emitters and add_source inside the solves' passes, or before them
  // with the forces).
  void enqueue_scene_step() {
    T *d = buf_[0].data(), *u = buf_[1].data(), *v = buf_[2].data();
    T *d0 = buf_[3].data(), *u0 = buf_[4].data(), *v0 = buf_[5].data();
    const T dt0 = T(p_.dt) * inv_h_;
    if (vort_ || buoy_) {
      scene_forces();
      scene_diffuse(kU, u0, u, kFieldU, -1, -1, p_.visc, nullptr, T(-1));
      scene_diffuse(kV, v0, v, kFieldV, -1, -1, p_.visc, nullptr, T(-1));
    } else {
      scene_diffuse(kU, u0, u, kFieldU, kFieldU, 1, p_.visc, nullptr, T(-1));
      scene_diffuse(kV, v0, v, kFieldV, kFieldV, 2, p_.visc, nullptr, T(-1));
    }
    scene_project(u0, v0, u, v, nullptr);
    scene_advect_kernel<T><<<grid2(n_), dim3(32, 8), 0, stream_>>>(u0, v0, u, u0, v, v0, code_ptr(), n_, dt0);
    NUMPIPE_CUDA_CHECK_LAUNCH();
    set_bnd(kU, u);
    set_bnd(kV, v);
    scene_project(u, v, u0, v0, partial_v_.data());
    scene_diffuse(kScalar, d0, d, kFieldD, kFieldD, 0, p_.diff, partial_d_.data(), T(1));
    // the temperature likewise (its work buffer cleared by react, no react source; closed
    // sides: the ambient value never enters), advected with d (neither reads the other)
    T* t = temperature() ? t_.data() : nullptr;
    T* t0 = temperature() ? t0_.data() : nullptr;
    if (t) scene_diffuse(kScalar, t0, t, -1, -1, 3, p_.diff, nullptr, T(1));
    scene_border(d0, true);
    if (t) scene_border(t0, true);
    scene_advect_kernel<T><<<grid2(n_), dim3(32, 8), 0, stream_>>>(u, v, d, d0, t, t0, code_ptr(), n_, dt0);
    NUMPIPE_CUDA_CHECK_LAUNCH();
    scene_border(d0, false);
    set_bnd(kScalar, d);
    if (t) {
      scene_border(t0, false);
      set_bnd(kScalar, t);
    }
  }

  void enqueue_step() {
    T *d = buf_[0].data(), *u = buf_[1].data(), *v = buf_[2].data();
    T *d0 = buf_[3].data(), *u0 = buf_[4].data(), *v0 = buf_[5].data();
    react_decide<T><<<1, 256, 0, stream_>>>(partial_v_.data(), partial_d_.data(), parts_, d0, u0, v0, n_,
                                            flags_.data(), counters_.data(), p_.forcing == Forcing::react ? 1 : 0);
    NUMPIPE_CUDA_CHECK_LAUNCH();
    if (scene_) {
      enqueue_scene_step();
    } else if (p_.scheme == Scheme::seed) {
      add_zero_boundary<T><<<(n_ + 2 + 255) / 256, 256, 0, stream_>>>(d, n_, T(p_.dt));
      NUMPIPE_CUDA_CHECK_LAUNCH();
      diffuse(kScalar, d0, d, kFieldD, p_.diff, partial_d_.data());
      diffuse(kU, u0, u, kFieldU, p_.visc, nullptr);
      diffuse(kV, v0, v, kFieldV, p_.visc, nullptr);
      project(u0, v0, u, v, nullptr);
      advect(u0, v0, d, d0, u, u0, v, v0);
      set_bnd(kU, u);
      set_bnd(kV, v);
      project(u, v, u0, v0, partial_v_.data());
    } else {
      diffuse(kU, u0, u, kFieldU, p_.visc, nullptr);
      diffuse(kV, v0, v, kFieldV, p_.visc, nullptr);
      project(u0, v0, u, v, nullptr);
      advect(u0, v0, u, u0, v, v0, nullptr, nullptr);
      set_bnd(kU, u);
      set_bnd(kV, v);
      project(u, v, u0, v0, partial_v_.data());
      diffuse(kScalar, d0, d, kFieldD, p_.diff, partial_d_.data());
      advect(u, v, d, d0, nullptr, nullptr, nullptr, nullptr);
      set_bnd(kScalar, d);
    }
  }
};

}  // namespace

std::string cuda_tile_name(int element_size) { return tile_spec(element_size).name; }

double cuda_solve_elements_per_cell(int iters, int element_size) {
  // The first pass reads x0 over the extended tile (halo factor h) and writes x;
  // each later pass reads x and x0 over it and writes x.
  const TileSpec t = tile_spec(element_size);
  const int passes = (iters + t.k - 1) / t.k;
  const double ew = t.reg ? kRegW : kExtW, eh = t.reg ? t.rpt * t.wy : kThreadsY * t.rpt;
  const double h = (ew * eh) / ((ew - 4 * t.k) * (eh - 4 * t.k));
  return (h + 1) + (passes - 1) * (2 * h + 1);
}

template <class T>
std::unique_ptr<Solver<T>> make_cuda_solver(const Params& p, const Fields<T>& initial, int device) {
  const T* const state[6] = {initial.d.data(), initial.u.data(), initial.v.data(),
                             initial.d0.data(), initial.u0.data(), initial.v0.data()};
  return std::make_unique<CudaSolver<T>>(p, state, initial.cells(), device);
}

namespace {

// A scene on the temporally blocked solver (scene.hpp, scene_fits_tiles).
template <class T>
class SceneTiledSolver final : public SceneSolver<T> {
 public:
  SceneTiledSolver(const Params& p, const Scene& s, const SceneFields<T>& init, int device) : n_(s.nx) {
    ObstacleLists ob;
    if (!init.solid.empty()) ob = obstacle_lists(s, init.solid);
    const FusedScene<T> setup = fused_scene(s, init, init.solid.empty() ? nullptr : &ob);
    Params q = p;
    q.n = s.nx;
    q.scheme = Scheme::stam;
    const T* const state[6] = {init.d.data(), init.u.data(), init.v.data(), init.d0.data(), init.u0.data(), init.v0.data()};
    solver_ = std::make_unique<CudaSolver<T>>(q, state, init.cells(), device, &setup);
  }
  double advance(int steps) override { return solver_->advance(steps); }
  void fetch(SceneFields<T>& out) override {
    if (out.nx != n_ || out.ny != n_ || out.d.size() != out.cells()) out.resize_uninitialised(n_, n_);  // overwritten below
    T* const dst[6] = {out.d.data(), out.u.data(), out.v.data(), out.d0.data(), out.u0.data(), out.v0.data()};
    solver_->fetch_temperature(out.t);
    solver_->fetch(dst);
  }
  Counters counters() const override { return solver_->counters(); }
  std::string kernels() const override { return solver_->kernels(); }

 private:
  int n_;
  std::unique_ptr<CudaSolver<T>> solver_;
};

}  // namespace

template <class T>
std::unique_ptr<SceneSolver<T>> make_scene_tiled_solver(const Params& p, const Scene& s, const SceneFields<T>& init,
                                                       int device) {
  return std::make_unique<SceneTiledSolver<T>>(p, s, init, device);
}
template std::unique_ptr<SceneSolver<float>> make_scene_tiled_solver(const Params&, const Scene&,
                                                                     const SceneFields<float>&, int);
template std::unique_ptr<SceneSolver<double>> make_scene_tiled_solver(const Params&, const Scene&,
                                                                      const SceneFields<double>&, int);
template std::unique_ptr<Solver<float>> make_cuda_solver(const Params&, const Fields<float>&, int);
template std::unique_ptr<Solver<double>> make_cuda_solver(const Params&, const Fields<double>&, int);

}  // namespace numpipe::fluid
