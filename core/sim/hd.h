#pragma once
// Function qualifiers for code that nvcc compiles for the GPU and the host compiler compiles for
// the simulator: kernel bodies, views, the tile layouts. Plain C++ when __CUDACC__ is not defined.

#if defined(__CUDACC__)
#define MATMULVIZ_HD __host__ __device__
#else
#define MATMULVIZ_HD
#endif
