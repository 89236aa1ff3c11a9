// remat/dense/cuda_blas.hpp — the GPU side of the dense-math seam: cuBLAS behind an owned handle (RAII),
// on a stream of the caller's choosing. Raw device pointers and BLAS's column-major conventions; the
// checked, view-based calls in remat/dense/blas.hpp are what users call. (This header needs no CUDA
// header, so plain C++ code may hold one.)
#pragma once

#include "remat/dense/matrix.hpp"

#include <cstdint>

struct cublasContext; // cublasHandle_t is cublasContext*

namespace remat::dense {

/// cuBLAS with one handle, created in the constructor and destroyed in the destructor; move-only. All
/// work is enqueued on `stream` (a cudaStream_t; nullptr is the legacy default stream) and returns at
/// once, except dot, which waits for its result. Scalars are passed from the host. Failures throw:
/// remat::dense::blas_error naming the call and the cuBLAS status, remat::capacity_error when cuBLAS
/// runs out of device memory, remat::argument_error for bad sizes (checked before any call).
///
///     remat::dense::cuda_blas b(my_stream);
///     b.gemm(remat::dense::op::none, remat::dense::op::none, m, n, k, 1.0, A, m, B, k, 0.0, C, m);
class cuda_blas {
public:
    static constexpr bool device_memory = true;

    /// Throws blas_error (cublasCreate: CUBLAS_STATUS_NOT_INITIALIZED) where there is no usable device.
    explicit cuda_blas(void* stream = nullptr);
    ~cuda_blas();
    cuda_blas(cuda_blas&& other) noexcept;
    cuda_blas& operator=(cuda_blas&& other) noexcept;
    cuda_blas(const cuda_blas&) = delete;
    cuda_blas& operator=(const cuda_blas&) = delete;

    void gemm(op ta, op tb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
              std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc);
    void gemm(op ta, op tb, std::int64_t m, std::int64_t n, std::int64_t k, double alpha, const double* a,
              std::int64_t lda, const double* b, std::int64_t ldb, double beta, double* c, std::int64_t ldc);
    void gemm_strided_batched(op ta, op tb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
                              std::int64_t lda, std::int64_t stride_a, const float* b, std::int64_t ldb,
                              std::int64_t stride_b, float beta, float* c, std::int64_t ldc, std::int64_t stride_c,
                              std::int64_t count);
    void gemm_strided_batched(op ta, op tb, std::int64_t m, std::int64_t n, std::int64_t k, double alpha,
                              const double* a, std::int64_t lda, std::int64_t stride_a, const double* b,
                              std::int64_t ldb, std::int64_t stride_b, double beta, double* c, std::int64_t ldc,
                              std::int64_t stride_c, std::int64_t count);
    void gemv(op ta, std::int64_t m, std::int64_t n, float alpha, const float* a, std::int64_t lda, const float* x,
              float beta, float* y);
    void gemv(op ta, std::int64_t m, std::int64_t n, double alpha, const double* a, std::int64_t lda, const double* x,
              double beta, double* y);
    void axpy(std::int64_t n, float alpha, const float* x, float* y);
    void axpy(std::int64_t n, double alpha, const double* x, double* y);
    void scal(std::int64_t n, float alpha, float* x);
    void scal(std::int64_t n, double alpha, double* x);
    [[nodiscard]] float dot(std::int64_t n, const float* x, const float* y);
    [[nodiscard]] double dot(std::int64_t n, const double* x, const double* y);

    /// The stream everything is enqueued on (a cudaStream_t).
    [[nodiscard]] void* stream() const noexcept { return stream_; }
    /// Blocks until the stream is idle; a failed kernel surfaces here as remat::cuda::cuda_error naming
    /// cudaStreamSynchronize and the error.
    void synchronize() const;
    /// "cuBLAS 13.0.x", for reports.
    [[nodiscard]] static const char* library() noexcept;

private:
    cublasContext* handle_ = nullptr;
    void* stream_ = nullptr;
};

namespace detail {
/// Throws for a cuBLAS status other than success: capacity_error for CUBLAS_STATUS_ALLOC_FAILED, else
/// blas_error "<call> (<context>) failed: CUBLAS_STATUS_...: <description>". Exposed so that it can be
/// tested without a GPU.
[[noreturn]] void throw_cublas_error(int status, const char* call, const char* context = nullptr);
} // namespace detail

} // namespace remat::dense
