// remat/dense/config.hpp — which back end the dense-math seam compiles for, and the namespace that keeps
// the two apart.
//
// The seam's code is written once and compiled either by nvcc (Thrust's CUDA back end, cuBLAS) or by the
// host compiler against a Thrust CPU back end (CPP or OMP, a CPU BLAS). Everything that depends on the
// back end lives in an inline namespace named after it (`remat::dense::cpu_backend` or
// `remat::dense::cuda_backend`), so one program may link a CPU translation unit and a CUDA one (a trainer
// with `--device cpu|cuda`) without two different definitions of one name. Users write `remat::dense::`.
#pragma once

#include "remat/cuda/config.hpp"

#if REMAT_DEVICE_SYSTEM_HOST
#define REMAT_DENSE_BACKEND_NS cpu_backend
#else
#define REMAT_DENSE_BACKEND_NS cuda_backend
#endif

namespace remat::dense {

/// Whether this translation unit's dense math runs on the GPU (nvcc, cuBLAS) or on the CPU (a CPU BLAS).
///
///     if constexpr (remat::dense::on_gpu) { /* cuBLAS and CUDA kernels */ }
inline constexpr bool on_gpu = !REMAT_DEVICE_SYSTEM_HOST;

} // namespace remat::dense
