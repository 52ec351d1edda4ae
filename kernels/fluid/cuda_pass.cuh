// The pass kernels of fluid-step's CUDA backend (cuda.cu's header says how they
// work): included by the units cuda_pass_*.cu, each of which instantiates one tile
// (RegKernels' halves / SmemKernels of cuda_pass.hpp; the largest tiles' halves in two
// units), so that they compile in parallel.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "cuda_pass.hpp"
#include "fluid.hpp"
#include "scene.hpp"
#include "scene_cells.cuh"

namespace numpipe::fluid::pass {

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

template <int K, int RPT, int WY, int MINB>
void reg_plain_kernels(RegKernels& k) {
  k.inner[0] = rb_reg_inner<K, RPT, WY, MINB, 0>;
  k.inner[1] = rb_reg_inner<K, RPT, WY, MINB, 1>;
  k.edge[0] = rb_reg_edge<K, RPT, WY, 0>;
  k.edge[1] = rb_reg_edge<K, RPT, WY, 1>;
  k.smem_bytes = reg_smem_bytes<RPT, WY>();
}

template <int K, int RPT, int WY, int MINB>
void reg_scene_kernels(RegKernels& k) {
  k.scene_inner[0] = rb_reg_scene_inner<K, RPT, WY, MINB, 0>;
  k.scene_inner[1] = rb_reg_scene_inner<K, RPT, WY, MINB, 1>;
  k.scene = rb_reg_scene<K, RPT, WY>;
  k.scene_smem_bytes = reg_scene_smem_bytes<RPT, WY>();
}

template <class T, int K, int RPT>
SmemKernels<T> smem_kernels() {
  return SmemKernels<T>{rb_pass<T, K, RPT>, rb_pass_scene<T, K, RPT>};
}

}  // namespace numpipe::fluid::pass
