// The GPU BLAS back end: cuBLAS on the caller's stream, statuses turned into remat exceptions.
#include "remat/cuda/detail/check.hpp"
#include "remat/dense/cuda_blas.hpp"
#include "remat/dense/detail/blas_checks.hpp"
#include "remat/dense/error.hpp"
#include "remat/error.hpp"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <string>
#include <utility>

namespace remat::dense {

namespace detail {

void throw_cublas_error(int status, const char* call, const char* context)
{
    const auto s = static_cast<cublasStatus_t>(status);
    std::string what = call;
    if (context != nullptr && *context != '\0')
        what += std::string(" (") + context + ")";
    what += std::string(" failed: ") + cublasGetStatusName(s) + ": " + cublasGetStatusString(s);
    if (s == CUBLAS_STATUS_ALLOC_FAILED)
        throw capacity_error(what + " (out of device memory)");
    if (s == CUBLAS_STATUS_NOT_INITIALIZED)
        what += " (is there a CUDA device and a driver?)";
    throw blas_error(status, what);
}

} // namespace detail

namespace {

cublasOperation_t to_cublas(op o)
{
    return o == op::none ? CUBLAS_OP_N : CUBLAS_OP_T;
}

void check(cublasStatus_t status, const char* call, std::int64_t m = -1, std::int64_t n = -1, std::int64_t k = -1)
{
    if (status == CUBLAS_STATUS_SUCCESS) [[likely]]
        return;
    std::string context;
    if (m >= 0)
        context = "m=" + std::to_string(m) + ", n=" + std::to_string(n) + ", k=" + std::to_string(k);
    detail::throw_cublas_error(static_cast<int>(status), call, context.c_str());
}

int to_int(std::int64_t v)
{
    return static_cast<int>(v); // checked by the callers' detail::check_* before
}

template <class T, class Gemm>
void gemm_impl(cublasHandle_t h, const char* call, Gemm cublas_gemm, op ta, op tb, std::int64_t m, std::int64_t n,
               std::int64_t k, T alpha, const T* a, std::int64_t lda, const T* b, std::int64_t ldb, T beta, T* c,
               std::int64_t ldc)
{
    detail::check_gemm(call, ta, tb, m, n, k, lda, ldb, ldc);
    if (m == 0 || n == 0)
        return;
    check(cublas_gemm(h, to_cublas(ta), to_cublas(tb), to_int(m), to_int(n), to_int(k), &alpha, a, to_int(lda), b,
                      to_int(ldb), &beta, c, to_int(ldc)),
          call, m, n, k);
}

template <class T, class Gemm>
void batched_impl(cublasHandle_t h, const char* call, Gemm cublas_gemm, op ta, op tb, std::int64_t m, std::int64_t n,
                  std::int64_t k, T alpha, const T* a, std::int64_t lda, std::int64_t stride_a, const T* b,
                  std::int64_t ldb, std::int64_t stride_b, T beta, T* c, std::int64_t ldc, std::int64_t stride_c,
                  std::int64_t count)
{
    detail::check_batch(call, ta, tb, m, n, k, lda, stride_a, ldb, stride_b, ldc, stride_c, count);
    if (m == 0 || n == 0 || count == 0)
        return;
    check(cublas_gemm(h, to_cublas(ta), to_cublas(tb), to_int(m), to_int(n), to_int(k), &alpha, a, to_int(lda),
                      stride_a, b, to_int(ldb), stride_b, &beta, c, to_int(ldc), stride_c, to_int(count)),
          call, m, n, k);
}

template <class T, class Gemv, class Scal>
void gemv_impl(cublasHandle_t h, const char* call, Gemv cublas_gemv, Scal cublas_scal, op ta, std::int64_t m,
               std::int64_t n, T alpha, const T* a, std::int64_t lda, const T* x, T beta, T* y)
{
    detail::check_gemv(call, m, n, lda);
    const std::int64_t len = ta == op::none ? m : n;
    if (m == 0 || n == 0) { // y = beta y, as the CPU back end does
        if (len > 0)
            check(cublas_scal(h, to_int(len), &beta, y, 1), call);
        return;
    }
    check(cublas_gemv(h, to_cublas(ta), to_int(m), to_int(n), &alpha, a, to_int(lda), x, 1, &beta, y, 1), call, m, n,
          0);
}

} // namespace

cuda_blas::cuda_blas(void* stream) : stream_(stream)
{
    cublasHandle_t h = nullptr;
    check(cublasCreate(&h), "cublasCreate");
    handle_ = h;
    const cublasStatus_t s = cublasSetStream(h, static_cast<cudaStream_t>(stream));
    if (s != CUBLAS_STATUS_SUCCESS) {
        cublasDestroy(h);
        handle_ = nullptr;
        check(s, "cublasSetStream");
    }
    // Scalars (alpha, beta, dot's result) live on the host; results are deterministic (no atomics).
    check(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST), "cublasSetPointerMode");
    check(cublasSetAtomicsMode(h, CUBLAS_ATOMICS_NOT_ALLOWED), "cublasSetAtomicsMode");
}

cuda_blas::~cuda_blas()
{
    if (handle_ != nullptr)
        cublasDestroy(handle_);
}

cuda_blas::cuda_blas(cuda_blas&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)), stream_(std::exchange(other.stream_, nullptr))
{
}

cuda_blas& cuda_blas::operator=(cuda_blas&& other) noexcept
{
    if (this != &other) {
        if (handle_ != nullptr)
            cublasDestroy(handle_);
        handle_ = std::exchange(other.handle_, nullptr);
        stream_ = std::exchange(other.stream_, nullptr);
    }
    return *this;
}

void cuda_blas::gemm(op ta, op tb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
                     std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc)
{
    gemm_impl(handle_, "cublasSgemm", cublasSgemm, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void cuda_blas::gemm(op ta, op tb, std::int64_t m, std::int64_t n, std::int64_t k, double alpha, const double* a,
                     std::int64_t lda, const double* b, std::int64_t ldb, double beta, double* c, std::int64_t ldc)
{
    gemm_impl(handle_, "cublasDgemm", cublasDgemm, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void cuda_blas::gemm_strided_batched(op ta, op tb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                                     const float* a, std::int64_t lda, std::int64_t stride_a, const float* b,
                                     std::int64_t ldb, std::int64_t stride_b, float beta, float* c, std::int64_t ldc,
                                     std::int64_t stride_c, std::int64_t count)
{
    batched_impl(handle_, "cublasSgemmStridedBatched", cublasSgemmStridedBatched, ta, tb, m, n, k, alpha, a, lda,
                 stride_a, b, ldb, stride_b, beta, c, ldc, stride_c, count);
}

void cuda_blas::gemm_strided_batched(op ta, op tb, std::int64_t m, std::int64_t n, std::int64_t k, double alpha,
                                     const double* a, std::int64_t lda, std::int64_t stride_a, const double* b,
                                     std::int64_t ldb, std::int64_t stride_b, double beta, double* c, std::int64_t ldc,
                                     std::int64_t stride_c, std::int64_t count)
{
    batched_impl(handle_, "cublasDgemmStridedBatched", cublasDgemmStridedBatched, ta, tb, m, n, k, alpha, a, lda,
                 stride_a, b, ldb, stride_b, beta, c, ldc, stride_c, count);
}

void cuda_blas::gemv(op ta, std::int64_t m, std::int64_t n, float alpha, const float* a, std::int64_t lda,
                     const float* x, float beta, float* y)
{
    gemv_impl(handle_, "cublasSgemv", cublasSgemv, cublasSscal, ta, m, n, alpha, a, lda, x, beta, y);
}

void cuda_blas::gemv(op ta, std::int64_t m, std::int64_t n, double alpha, const double* a, std::int64_t lda,
                     const double* x, double beta, double* y)
{
    gemv_impl(handle_, "cublasDgemv", cublasDgemv, cublasDscal, ta, m, n, alpha, a, lda, x, beta, y);
}

void cuda_blas::axpy(std::int64_t n, float alpha, const float* x, float* y)
{
    check(cublasSaxpy(handle_, detail::blas_int(n, "cublasSaxpy", "n"), &alpha, x, 1, y, 1), "cublasSaxpy");
}

void cuda_blas::axpy(std::int64_t n, double alpha, const double* x, double* y)
{
    check(cublasDaxpy(handle_, detail::blas_int(n, "cublasDaxpy", "n"), &alpha, x, 1, y, 1), "cublasDaxpy");
}

void cuda_blas::scal(std::int64_t n, float alpha, float* x)
{
    check(cublasSscal(handle_, detail::blas_int(n, "cublasSscal", "n"), &alpha, x, 1), "cublasSscal");
}

void cuda_blas::scal(std::int64_t n, double alpha, double* x)
{
    check(cublasDscal(handle_, detail::blas_int(n, "cublasDscal", "n"), &alpha, x, 1), "cublasDscal");
}

float cuda_blas::dot(std::int64_t n, const float* x, const float* y)
{
    float result = 0;
    check(cublasSdot(handle_, detail::blas_int(n, "cublasSdot", "n"), x, 1, y, 1, &result), "cublasSdot");
    return result;
}

double cuda_blas::dot(std::int64_t n, const double* x, const double* y)
{
    double result = 0;
    check(cublasDdot(handle_, detail::blas_int(n, "cublasDdot", "n"), x, 1, y, 1, &result), "cublasDdot");
    return result;
}

void cuda_blas::synchronize() const
{
    remat::cuda::detail::check(cudaStreamSynchronize(static_cast<cudaStream_t>(stream_)), "cudaStreamSynchronize");
}

const char* cuda_blas::library() noexcept
{
    static const std::string name = [] {
        int major = 0;
        int minor = 0;
        int patch = 0;
        if (cublasGetProperty(MAJOR_VERSION, &major) != CUBLAS_STATUS_SUCCESS ||
            cublasGetProperty(MINOR_VERSION, &minor) != CUBLAS_STATUS_SUCCESS ||
            cublasGetProperty(PATCH_LEVEL, &patch) != CUBLAS_STATUS_SUCCESS)
            return std::string("cuBLAS");
        return "cuBLAS " + std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
    }();
    return name.c_str();
}

} // namespace remat::dense
