// Compiler glue shared by the host (.cpp) and CUDA (.cu) builds of the kernel sources.
#pragma once

// Marks code that runs on both sides: every functor and all index math.
#ifdef __CUDACC__
#define ACCEL_HD __host__ __device__
#else
#define ACCEL_HD
#endif
