// NUMPIPE_HD marks math shared by the CPU and CUDA backends: the same source
// compiles as host code (g++) and as host+device code (nvcc).
#pragma once
#ifdef __CUDACC__
#define NUMPIPE_HD __host__ __device__
#define NUMPIPE_HD_INLINE __host__ __device__ __forceinline__
// Large device functions called from several places: kept out of line on the device,
// where inlining them all into one kernel makes ptxas take many minutes.
#define NUMPIPE_HD_OUTLINE __host__ __device__ inline __noinline__
#else
#define NUMPIPE_HD
#define NUMPIPE_HD_INLINE inline
#define NUMPIPE_HD_OUTLINE inline
#endif
