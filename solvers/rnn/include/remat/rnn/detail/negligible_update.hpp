// remat/rnn/detail/negligible_update.hpp — whether adding a matrix product to an accumulated gradient would
// change any of its bits, decided from bounds, before the product is computed (the CPU back end).
//
// Late in the reverse sweep of a long sequence the adjoint has decayed far below the parameter gradient it
// adds to, and then through the subnormal range: there, each weight gradient's product dW += dG x^T costs an
// x86 core a microcode assist per instruction (the bench's LSTM: ~50 ms a step against 0.3 flushed, most of
// a 1000-step backward sweep's time), and yet every one of its sums is below half a unit in the last place of
// the element it is added to, so the sum rounds back to that element and dW keeps its bits. When the bounds
// below prove that for every element, the product is skipped: the result is bit for bit the product's.
//
// The proof, for C += A B^T with A m x k, B n x k (the BLAS computes each sum s = sum_j A_ij B_lj in any order,
// with or without fused multiply-adds, and adds it to C_il, in one or more blocks of j): every rounding of
// a partial sum grows it by at most a factor (1 + u) and an absolute half of the smallest subnormal, so for
// k <= 2^22 the computed |s| <= 2 k (max|A| max|B| + denorm_min) (the factor 2 covers (1 + u)^k). Adding s
// to a normal C_il leaves it unchanged when |s| < half the spacing of the floats just below |C_il|, which
// |s| <= |C_il| eps / 8 guarantees (eps = 2^-23 for float); so the test is that bound against min|C| eps / 8
// with min|C| normal. The maxima and minimum are taken on the values' bit patterns (integers), so the scan
// itself does no subnormal arithmetic.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace remat::rnn::detail {

/// The unsigned integer of T's width; its order on |x|'s bit pattern is the order of |x| (for non-NaN x).
template <class T>
using float_bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;

template <class T>
[[nodiscard]] inline float_bits<T> abs_bits(T x) noexcept
{
    return std::bit_cast<float_bits<T>>(x) & (std::numeric_limits<float_bits<T>>::max() >> 1);
}

/// The largest |x[i]|'s bit pattern over [0, n) (a NaN's exceeds infinity's).
template <class T>
[[nodiscard]] float_bits<T> max_abs_bits(const T* x, std::int64_t n) noexcept
{
    float_bits<T> m = 0;
    for (std::int64_t i = 0; i < n; ++i) {
        const float_bits<T> b = abs_bits(x[i]);
        m = b > m ? b : m;
    }
    return m;
}

/// The smallest |x[i]|'s bit pattern over [0, n).
template <class T>
[[nodiscard]] float_bits<T> min_abs_bits(const T* x, std::int64_t n) noexcept
{
    float_bits<T> m = std::numeric_limits<float_bits<T>>::max();
    for (std::int64_t i = 0; i < n; ++i) {
        const float_bits<T> b = abs_bits(x[i]);
        m = b < m ? b : m;
    }
    return m;
}

/// Whether C += A B^T, with the k-column matrices A (a_count = m k elements) and B (b_count = n k), would
/// leave every element of C (c_count = m n) as it is: true only when proven (above). A NaN or infinity
/// anywhere, a zero or subnormal element of C, or k > 2^22: false. Dense column-major storage is not
/// needed: only the values' ranges count.
template <class T>
[[nodiscard]] bool product_is_negligible(const T* a, std::int64_t a_count, const T* b, std::int64_t b_count,
                                         std::int64_t k, const T* c, std::int64_t c_count) noexcept
{
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
    using bits = float_bits<T>;
    using limits = std::numeric_limits<T>;
    const bits infinity = std::bit_cast<bits>(limits::infinity());
    if (k < 1 || k > (std::int64_t(1) << 22))
        return false;
    const bits a_max = max_abs_bits(a, a_count);
    const bits b_max = max_abs_bits(b, b_count);
    const bits c_min = min_abs_bits(c, c_count);
    if (a_max >= infinity || b_max >= infinity || max_abs_bits(c, c_count) >= infinity ||
        c_min < std::bit_cast<bits>(limits::min()))
        return false;
    // In long double (x86: 64-bit significand and a wider exponent), where the bound of a double problem
    // neither overflows nor underflows; its own roundings are far inside the factor 2's slack.
    using wide = long double;
    const wide bound = 2 * static_cast<wide>(k) *
                       (static_cast<wide>(std::bit_cast<T>(a_max)) * static_cast<wide>(std::bit_cast<T>(b_max)) +
                        static_cast<wide>(limits::denorm_min()));
    return bound <= static_cast<wide>(std::bit_cast<T>(c_min)) * static_cast<wide>(limits::epsilon()) / 8;
}

} // namespace remat::rnn::detail
