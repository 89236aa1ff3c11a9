// remat/dense/detail/blas_checks.hpp — the argument checks both BLAS back ends share, so that a bad size
// gives the same message on the CPU and on the GPU.
#pragma once

#include "remat/dense/matrix.hpp"

#include <cstdint>

namespace remat::dense::detail {

/// `value` as BLAS's int: argument_error when negative, overflow_error beyond INT_MAX, both naming
/// `call` and `name`.
[[nodiscard]] int blas_int(std::int64_t value, const char* call, const char* name);

/// The sizes of C = op(A) op(B) (+ C): non-negative, fitting int, leading dimensions that hold the
/// stored matrices. Throws argument_error naming the call, the operand and both numbers.
void check_gemm(const char* call, op ta, op tb, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t lda,
                std::int64_t ldb, std::int64_t ldc);

/// The sizes of y = op(A) x (+ y) with A m x n stored.
void check_gemv(const char* call, std::int64_t m, std::int64_t n, std::int64_t lda);

/// A strided batch: count >= 0 and strides that keep the operands apart (>= the stored sizes).
void check_batch(const char* call, op ta, op tb, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t lda,
                 std::int64_t stride_a, std::int64_t ldb, std::int64_t stride_b, std::int64_t ldc,
                 std::int64_t stride_c, std::int64_t count);

} // namespace remat::dense::detail

namespace remat::dense::detail {

/// The shapes of C = op(A) op(B): inner dimensions agree, C is op(A)'s rows x op(B)'s columns. Throws
/// argument_error naming `call` and the three shapes.
void check_product(const char* call, op ta, op tb, std::int64_t a_rows, std::int64_t a_cols, std::int64_t b_rows,
                   std::int64_t b_cols, std::int64_t c_rows, std::int64_t c_cols);

/// Two sizes that must agree (`what` names them): argument_error with both numbers otherwise.
void check_same_size(const char* call, const char* what, std::int64_t expected, std::int64_t actual);

} // namespace remat::dense::detail
