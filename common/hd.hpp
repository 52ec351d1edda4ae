// NUMPIPE_HD marks math shared by the CPU and CUDA backends: the same source
// compiles as host code (g++) and as host+device code (nvcc).
#pragma once
#ifdef __CUDACC__
#define NUMPIPE_HD __host__ __device__
#define NUMPIPE_HD_INLINE __host__ __device__ __forceinline__
#else
#define NUMPIPE_HD
#define NUMPIPE_HD_INLINE inline
#endif
