// The CPU BLAS back end: CBLAS calls (OpenBLAS on Debian) after the shared size checks.
#include "remat/dense/cpu_blas.hpp"
#include "remat/dense/detail/blas_checks.hpp"

#include <cblas.h>

namespace remat::dense {

namespace {

CBLAS_TRANSPOSE to_cblas(op o)
{
    return o == op::none ? CblasNoTrans : CblasTrans;
}

template <class T, class Gemm>
void gemm_impl(const char* call, Gemm cblas_gemm, op ta, op tb, std::int64_t m, std::int64_t n, std::int64_t k, T alpha,
               const T* a, std::int64_t lda, const T* b, std::int64_t ldb, T beta, T* c, std::int64_t ldc)
{
    detail::check_gemm(call, ta, tb, m, n, k, lda, ldb, ldc);
    if (m == 0 || n == 0)
        return;
    cblas_gemm(CblasColMajor, to_cblas(ta), to_cblas(tb), static_cast<int>(m), static_cast<int>(n), static_cast<int>(k),
               alpha, a, static_cast<int>(lda), b, static_cast<int>(ldb), beta, c, static_cast<int>(ldc));
}

template <class T, class Gemm>
void batched_impl(const char* call, Gemm cblas_gemm, op ta, op tb, std::int64_t m, std::int64_t n, std::int64_t k,
                  T alpha, const T* a, std::int64_t lda, std::int64_t stride_a, const T* b, std::int64_t ldb,
                  std::int64_t stride_b, T beta, T* c, std::int64_t ldc, std::int64_t stride_c, std::int64_t count)
{
    detail::check_batch(call, ta, tb, m, n, k, lda, stride_a, ldb, stride_b, ldc, stride_c, count);
    for (std::int64_t i = 0; i < count; ++i)
        gemm_impl(call, cblas_gemm, ta, tb, m, n, k, alpha, a + i * stride_a, lda, b + i * stride_b, ldb, beta,
                  c + i * stride_c, ldc);
}

template <class T, class Gemv>
void gemv_impl(const char* call, Gemv cblas_gemv, op ta, std::int64_t m, std::int64_t n, T alpha, const T* a,
               std::int64_t lda, const T* x, T beta, T* y)
{
    detail::check_gemv(call, m, n, lda);
    if (m == 0 || n == 0) {
        // BLAS leaves y alone when the product is empty; the definition says y = beta y.
        const std::int64_t len = ta == op::none ? m : n;
        for (std::int64_t i = 0; i < len; ++i)
            y[i] = beta == T(0) ? T(0) : beta * y[i];
        return;
    }
    cblas_gemv(CblasColMajor, to_cblas(ta), static_cast<int>(m), static_cast<int>(n), alpha, a, static_cast<int>(lda),
               x, 1, beta, y, 1);
}

} // namespace

void cpu_blas::gemm(op ta, op tb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
                    std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc)
{
    gemm_impl("cblas_sgemm", cblas_sgemm, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void cpu_blas::gemm(op ta, op tb, std::int64_t m, std::int64_t n, std::int64_t k, double alpha, const double* a,
                    std::int64_t lda, const double* b, std::int64_t ldb, double beta, double* c, std::int64_t ldc)
{
    gemm_impl("cblas_dgemm", cblas_dgemm, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void cpu_blas::gemm_strided_batched(op ta, op tb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                                    const float* a, std::int64_t lda, std::int64_t stride_a, const float* b,
                                    std::int64_t ldb, std::int64_t stride_b, float beta, float* c, std::int64_t ldc,
                                    std::int64_t stride_c, std::int64_t count)
{
    batched_impl("cblas_sgemm (batched)", cblas_sgemm, ta, tb, m, n, k, alpha, a, lda, stride_a, b, ldb, stride_b, beta,
                 c, ldc, stride_c, count);
}

void cpu_blas::gemm_strided_batched(op ta, op tb, std::int64_t m, std::int64_t n, std::int64_t k, double alpha,
                                    const double* a, std::int64_t lda, std::int64_t stride_a, const double* b,
                                    std::int64_t ldb, std::int64_t stride_b, double beta, double* c, std::int64_t ldc,
                                    std::int64_t stride_c, std::int64_t count)
{
    batched_impl("cblas_dgemm (batched)", cblas_dgemm, ta, tb, m, n, k, alpha, a, lda, stride_a, b, ldb, stride_b, beta,
                 c, ldc, stride_c, count);
}

void cpu_blas::gemv(op ta, std::int64_t m, std::int64_t n, float alpha, const float* a, std::int64_t lda,
                    const float* x, float beta, float* y)
{
    gemv_impl("cblas_sgemv", cblas_sgemv, ta, m, n, alpha, a, lda, x, beta, y);
}

void cpu_blas::gemv(op ta, std::int64_t m, std::int64_t n, double alpha, const double* a, std::int64_t lda,
                    const double* x, double beta, double* y)
{
    gemv_impl("cblas_dgemv", cblas_dgemv, ta, m, n, alpha, a, lda, x, beta, y);
}

void cpu_blas::axpy(std::int64_t n, float alpha, const float* x, float* y)
{
    cblas_saxpy(detail::blas_int(n, "cblas_saxpy", "n"), alpha, x, 1, y, 1);
}

void cpu_blas::axpy(std::int64_t n, double alpha, const double* x, double* y)
{
    cblas_daxpy(detail::blas_int(n, "cblas_daxpy", "n"), alpha, x, 1, y, 1);
}

void cpu_blas::scal(std::int64_t n, float alpha, float* x)
{
    cblas_sscal(detail::blas_int(n, "cblas_sscal", "n"), alpha, x, 1);
}

void cpu_blas::scal(std::int64_t n, double alpha, double* x)
{
    cblas_dscal(detail::blas_int(n, "cblas_dscal", "n"), alpha, x, 1);
}

float cpu_blas::dot(std::int64_t n, const float* x, const float* y)
{
    return cblas_sdot(detail::blas_int(n, "cblas_sdot", "n"), x, 1, y, 1);
}

double cpu_blas::dot(std::int64_t n, const double* x, const double* y)
{
    return cblas_ddot(detail::blas_int(n, "cblas_ddot", "n"), x, 1, y, 1);
}

const char* cpu_blas::library() noexcept
{
    return openblas_get_config();
}

} // namespace remat::dense
