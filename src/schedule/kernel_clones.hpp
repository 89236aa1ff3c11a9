// REMAT_KERNEL_CLONES: marks a hot vector kernel (GCC vector extensions) to be compiled twice on x86-64 with GCC,
// for AVX2 and for the baseline ISA, the one the CPU runs being picked when the library loads (ifunc). The build
// targets the baseline, so without it a kernel of 8-float vectors runs as pairs of 4-float ones everywhere.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define REMAT_KERNEL_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define REMAT_KERNEL_CLONES
#endif
