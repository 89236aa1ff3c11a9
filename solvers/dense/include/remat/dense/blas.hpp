// remat/dense/blas.hpp — the dense-math seam's matrix products, written once for both back ends.
//
// `remat::dense::blas` is cuBLAS (remat::dense::cuda_blas) in a translation unit compiled by nvcc and the
// CPU BLAS (remat::dense::cpu_blas, OpenBLAS through CBLAS) under a Thrust CPU back end; the functions here
// take views, check their shapes against each other and call it. Pointers in views must be in the memory
// this build's Thrust device vectors use (raw_pointer_cast of a thrust::device_vector).
//
//     remat::dense::blas b;                                   // a cuBLAS handle under CUDA, nothing on the CPU
//     remat::dense::gemm(b, op::none, op::none, 1.0, W, X, 0.0, H);   // H = W X
//     remat::dense::gemm(b, op::transpose, op::none, 1.0, W, G, 0.0, D); // D = W^T G
#pragma once

#include "remat/dense/config.hpp"
#include "remat/dense/detail/blas_checks.hpp"
#include "remat/dense/matrix.hpp"

#include <cstdint>
#include <type_traits>

#if REMAT_DEVICE_SYSTEM_HOST
#include "remat/dense/cpu_blas.hpp"
#else
#include "remat/dense/cuda_blas.hpp"
#endif

namespace remat::dense {

inline namespace REMAT_DENSE_BACKEND_NS {
#if REMAT_DEVICE_SYSTEM_HOST
/// The BLAS of this translation unit's back end (here: the CPU's).
using blas = cpu_blas;
#else
/// The BLAS of this translation unit's back end (here: cuBLAS; move-only, owns its handle).
using blas = cuda_blas;
#endif
} // namespace REMAT_DENSE_BACKEND_NS

/// A BLAS back end: cpu_blas or cuda_blas (same member functions; see cpu_blas.hpp).
template <class B>
concept blas_backend = requires(B& b, const double* x, double* y) {
    { B::device_memory } -> std::convertible_to<bool>;
    b.axpy(std::int64_t{1}, 1.0, x, y);
    b.synchronize();
};

/// C = alpha op(A) op(B) + beta C. Throws argument_error when the shapes do not fit together.
///
///     remat::dense::gemm(b, op::none, op::transpose, 1.0, G, X, 1.0, dW);   // dW += G X^T
template <blas_backend B, class T>
void gemm(B& b, op ta, op tb, std::type_identity_t<T> alpha, matrix_view<const std::type_identity_t<T>> a,
          matrix_view<const std::type_identity_t<T>> bm, std::type_identity_t<T> beta, matrix_view<T> c)
{
    detail::check_product("gemm", ta, tb, a.rows, a.cols, bm.rows, bm.cols, c.rows, c.cols);
    const std::int64_t k = ta == op::none ? a.cols : a.rows;
    b.gemm(ta, tb, c.rows, c.cols, k, alpha, a.data, a.ld, bm.data, bm.ld, beta, c.data, c.ld);
}

/// `count` products C_i = alpha op(A_i) op(B_i) + beta C_i, where the views give the first operand of
/// each batch and X_i starts `stride_x` elements after X_{i-1} (strided batched GEMM).
///
///     remat::dense::gemm_batched(b, op::none, op::none, 1.0, W, 0, X, X.ld * X.cols, 0.0, H, H.ld * H.cols, n);
template <blas_backend B, class T>
void gemm_batched(B& b, op ta, op tb, std::type_identity_t<T> alpha, matrix_view<const std::type_identity_t<T>> a,
                  std::int64_t stride_a, matrix_view<const std::type_identity_t<T>> bm, std::int64_t stride_b,
                  std::type_identity_t<T> beta, matrix_view<T> c, std::int64_t stride_c, std::int64_t count)
{
    detail::check_product("gemm_batched", ta, tb, a.rows, a.cols, bm.rows, bm.cols, c.rows, c.cols);
    const std::int64_t k = ta == op::none ? a.cols : a.rows;
    b.gemm_strided_batched(ta, tb, c.rows, c.cols, k, alpha, a.data, a.ld, stride_a, bm.data, bm.ld, stride_b, beta,
                           c.data, c.ld, stride_c, count);
}

/// y = alpha op(A) x + beta y.
///
///     remat::dense::gemv(b, op::transpose, 1.0, W, g, 0.0, dx);   // dx = W^T g
template <blas_backend B, class T>
void gemv(B& b, op ta, std::type_identity_t<T> alpha, matrix_view<const std::type_identity_t<T>> a,
          vector_view<const std::type_identity_t<T>> x, std::type_identity_t<T> beta, vector_view<T> y)
{
    const std::int64_t rows = ta == op::none ? a.rows : a.cols;
    const std::int64_t cols = ta == op::none ? a.cols : a.rows;
    detail::check_same_size("gemv", "the length of x", cols, x.size);
    detail::check_same_size("gemv", "the length of y", rows, y.size);
    b.gemv(ta, a.rows, a.cols, alpha, a.data, a.ld, x.data, beta, y.data);
}

/// y += alpha x.
///
///     remat::dense::axpy(b, h * 0.5, k1, y);
template <blas_backend B, class T>
void axpy(B& b, std::type_identity_t<T> alpha, vector_view<const std::type_identity_t<T>> x, vector_view<T> y)
{
    detail::check_same_size("axpy", "the length of y", x.size, y.size);
    b.axpy(x.size, alpha, x.data, y.data);
}

/// x *= alpha.
template <blas_backend B, class T>
void scale(B& b, std::type_identity_t<T> alpha, vector_view<T> x)
{
    b.scal(x.size, alpha, x.data);
}

/// The sum of x_i y_i (waits for the result on the GPU).
template <blas_backend B, class T>
[[nodiscard]] std::remove_const_t<T> dot(B& b, vector_view<T> x, vector_view<const std::remove_const_t<T>> y)
{
    detail::check_same_size("dot", "the length of y", x.size, y.size);
    return b.dot(x.size, x.data, y.data);
}

} // namespace remat::dense
