// remat/dense/cpu_blas.hpp — the CPU side of the dense-math seam: BLAS level 1-3 on host memory through
// CBLAS (OpenBLAS on Debian). Raw pointers and BLAS's column-major conventions; the checked, view-based
// calls in remat/dense/blas.hpp are what users call.
#pragma once

#include "remat/dense/matrix.hpp"

#include <cstdint>

namespace remat::dense {

/// BLAS on the CPU. Stateless apart from its name; copyable. Every call checks its sizes (64-bit, must
/// fit BLAS's int) and throws remat::argument_error naming the bad value. Computations are
/// deterministic for a given thread count (OpenBLAS splits gemm by output blocks, never by the sum).
///
///     remat::dense::cpu_blas b;
///     b.gemm(remat::dense::op::none, remat::dense::op::none, m, n, k, 1.0, A, m, B, k, 0.0, C, m);
class cpu_blas {
public:
    /// Where the pointers given to this BLAS must point.
    static constexpr bool device_memory = false;

    /// C = alpha op(A) op(B) + beta C with op(A) m x k, op(B) k x n, C m x n.
    void gemm(op ta, op tb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
              std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc);
    void gemm(op ta, op tb, std::int64_t m, std::int64_t n, std::int64_t k, double alpha, const double* a,
              std::int64_t lda, const double* b, std::int64_t ldb, double beta, double* c, std::int64_t ldc);
    /// `count` products C_i = alpha op(A_i) op(B_i) + beta C_i, with X_i = X + i * stride_x.
    void gemm_strided_batched(op ta, op tb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
                              std::int64_t lda, std::int64_t stride_a, const float* b, std::int64_t ldb,
                              std::int64_t stride_b, float beta, float* c, std::int64_t ldc, std::int64_t stride_c,
                              std::int64_t count);
    void gemm_strided_batched(op ta, op tb, std::int64_t m, std::int64_t n, std::int64_t k, double alpha,
                              const double* a, std::int64_t lda, std::int64_t stride_a, const double* b,
                              std::int64_t ldb, std::int64_t stride_b, double beta, double* c, std::int64_t ldc,
                              std::int64_t stride_c, std::int64_t count);
    /// y = alpha op(A) x + beta y with A m x n.
    void gemv(op ta, std::int64_t m, std::int64_t n, float alpha, const float* a, std::int64_t lda, const float* x,
              float beta, float* y);
    void gemv(op ta, std::int64_t m, std::int64_t n, double alpha, const double* a, std::int64_t lda, const double* x,
              double beta, double* y);
    /// y += alpha x (n elements).
    void axpy(std::int64_t n, float alpha, const float* x, float* y);
    void axpy(std::int64_t n, double alpha, const double* x, double* y);
    /// x *= alpha.
    void scal(std::int64_t n, float alpha, float* x);
    void scal(std::int64_t n, double alpha, double* x);
    /// The sum of x_i y_i.
    [[nodiscard]] float dot(std::int64_t n, const float* x, const float* y);
    [[nodiscard]] double dot(std::int64_t n, const double* x, const double* y);

    /// No stream on the CPU: every call has completed when it returns.
    [[nodiscard]] void* stream() const noexcept { return nullptr; }
    void synchronize() const noexcept {}
    /// "OpenBLAS 0.3.21 ..." (the library's own configuration string), for reports.
    [[nodiscard]] static const char* library() noexcept;
};

} // namespace remat::dense
