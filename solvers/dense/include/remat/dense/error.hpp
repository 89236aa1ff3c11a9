// remat/dense/error.hpp — the exception for a failed BLAS call (cuBLAS status, or a CPU BLAS refusing).
#pragma once

#include "remat/error.hpp"

#include <string>

namespace remat::dense {

/// A BLAS library call failed. The message names the call and, for cuBLAS, the status's name and
/// description; status() is the library's status code (cublasStatus_t). Failed CUDA runtime calls are
/// remat::cuda::cuda_error; running out of device memory is remat::capacity_error.
///
///     try { remat::dense::blas b; } catch (const remat::dense::blas_error& e) { std::puts(e.what()); }
class blas_error : public error {
public:
    blas_error(int status, const std::string& what) : error(what), status_(status) {}
    [[nodiscard]] int status() const noexcept { return status_; }

private:
    int status_;
};

} // namespace remat::dense
