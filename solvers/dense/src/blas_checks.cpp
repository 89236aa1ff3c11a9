// Size checks shared by the CPU and GPU BLAS back ends.
#include "remat/dense/detail/blas_checks.hpp"
#include "remat/error.hpp"

#include <algorithm>
#include <climits>
#include <string>
#include <utility>

namespace remat::dense::detail {

namespace {

std::string named(const char* call, const char* name)
{
    return std::string(call) + ": " + name;
}

void check_ld(const char* call, const char* name, std::int64_t ld, std::int64_t rows)
{
    (void)blas_int(ld, call, name);
    if (ld < std::max<std::int64_t>(1, rows))
        throw argument_error(named(call, name) + " = " + std::to_string(ld) + " is smaller than the " +
                             std::to_string(rows) + " rows it must hold (expected at least max(1, rows))");
}

// Rows of the stored operand: op(X) is r x c, so X is r x c as stored, or c x r when transposed.
std::int64_t stored_rows(op o, std::int64_t r, std::int64_t c)
{
    return o == op::none ? r : c;
}

} // namespace

int blas_int(std::int64_t value, const char* call, const char* name)
{
    if (value < 0)
        throw argument_error(named(call, name) + " = " + std::to_string(value) + " is negative");
    if (value > INT_MAX)
        throw overflow_error(named(call, name) + " = " + std::to_string(value) + " exceeds the BLAS integer range (" +
                             std::to_string(INT_MAX) + ")");
    return static_cast<int>(value);
}

void check_gemm(const char* call, op ta, op tb, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t lda,
                std::int64_t ldb, std::int64_t ldc)
{
    (void)blas_int(m, call, "m");
    (void)blas_int(n, call, "n");
    (void)blas_int(k, call, "k");
    check_ld(call, "lda", lda, stored_rows(ta, m, k));
    check_ld(call, "ldb", ldb, stored_rows(tb, k, n));
    check_ld(call, "ldc", ldc, m);
}

void check_gemv(const char* call, std::int64_t m, std::int64_t n, std::int64_t lda)
{
    (void)blas_int(m, call, "m");
    (void)blas_int(n, call, "n");
    check_ld(call, "lda", lda, m);
}

void check_batch(const char* call, op ta, op tb, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t lda,
                 std::int64_t stride_a, std::int64_t ldb, std::int64_t stride_b, std::int64_t ldc,
                 std::int64_t stride_c, std::int64_t count)
{
    check_gemm(call, ta, tb, m, n, k, lda, ldb, ldc);
    (void)blas_int(count, call, "count");
    const auto check_stride = [&](const char* name, std::int64_t stride, std::int64_t ld, std::int64_t cols) {
        // The last column of one operand must end before the next operand begins (count > 1 only).
        if (count > 1 && stride < ld * cols)
            throw argument_error(named(call, name) + " = " + std::to_string(stride) +
                                 " makes consecutive operands overlap (expected at least " + std::to_string(ld * cols) +
                                 ")");
    };
    check_stride("stride_a", stride_a, lda, ta == op::none ? k : m);
    check_stride("stride_b", stride_b, ldb, tb == op::none ? n : k);
    check_stride("stride_c", stride_c, ldc, n);
}

} // namespace remat::dense::detail

namespace remat::dense::detail {

namespace {
std::string shape(std::int64_t r, std::int64_t c)
{
    return std::to_string(r) + " x " + std::to_string(c);
}
} // namespace

void check_product(const char* call, op ta, op tb, std::int64_t a_rows, std::int64_t a_cols, std::int64_t b_rows,
                   std::int64_t b_cols, std::int64_t c_rows, std::int64_t c_cols)
{
    if (ta == op::transpose)
        std::swap(a_rows, a_cols);
    if (tb == op::transpose)
        std::swap(b_rows, b_cols);
    if (a_cols != b_rows || c_rows != a_rows || c_cols != b_cols)
        throw argument_error(std::string(call) + ": op(A) is " + shape(a_rows, a_cols) + ", op(B) is " +
                             shape(b_rows, b_cols) + " and C is " + shape(c_rows, c_cols) +
                             " (expected C = " + shape(a_rows, b_cols) + " and op(A)'s columns equal to op(B)'s rows)");
}

void check_same_size(const char* call, const char* what, std::int64_t expected, std::int64_t actual)
{
    if (expected != actual)
        throw argument_error(std::string(call) + ": " + what + " is " + std::to_string(actual) + " (expected " +
                             std::to_string(expected) + ")");
}

} // namespace remat::dense::detail
