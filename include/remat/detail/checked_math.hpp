// remat/detail/checked_math.hpp — 64/128-bit arithmetic that never wraps silently.
//
// Binomial numbers in checkpointing grow fast; every product and sum that could leave the 64-bit
// range goes through these helpers, which either saturate (where only a comparison follows) or
// throw remat::overflow_error naming the quantity.
#pragma once

#include "remat/error.hpp"

#include <array>
#include <charconv>
#include <cstdint>
#include <limits>
#include <string>

namespace remat::detail {

__extension__ typedef unsigned __int128 uint128; // NOLINT: the GCC/Clang 128-bit integer

inline constexpr std::uint64_t uint64_max = std::numeric_limits<std::uint64_t>::max();

/// a * b / c for values where the quotient is known to be exact (binomial identities); the product is
/// taken in 128 bits so it cannot overflow for 64-bit operands.
[[nodiscard]] inline std::uint64_t mul_div_exact(std::uint64_t a, std::uint64_t b, std::uint64_t c) noexcept
{
    std::uint64_t product = 0;
    if (!__builtin_mul_overflow(a, b, &product))
        return product / c; // the common case: a 64-bit division is several times faster
    return static_cast<std::uint64_t>(static_cast<uint128>(a) * b / c);
}

/// a * b saturated at 2^64-1, for values that are only compared afterwards.
[[nodiscard]] inline std::uint64_t mul_saturated(std::uint64_t a, std::uint64_t b) noexcept
{
    std::uint64_t product = 0;
    return __builtin_mul_overflow(a, b, &product) ? uint64_max : product;
}

/// a + b saturated at 2^64-1, for values that are only compared afterwards.
[[nodiscard]] inline std::uint64_t add_saturated(std::uint64_t a, std::uint64_t b) noexcept
{
    std::uint64_t sum = 0;
    return __builtin_add_overflow(a, b, &sum) ? uint64_max : sum;
}

/// a * b / c (exact quotient) saturated at 2^64-1, for values that are only compared afterwards.
[[nodiscard]] inline std::uint64_t mul_div_saturated(std::uint64_t a, std::uint64_t b, std::uint64_t c) noexcept
{
    std::uint64_t product = 0;
    if (!__builtin_mul_overflow(a, b, &product))
        return product / c;
    const uint128 q = static_cast<uint128>(a) * b / c;
    return q > uint64_max ? uint64_max : static_cast<std::uint64_t>(q);
}

/// Converts a 128-bit count to 64 bits, or throws overflow_error naming `what` and the count in
/// scientific form ("about 1.36e+20": it has no 64-bit decimal representation).
[[nodiscard]] inline std::uint64_t narrow_count(uint128 value, const std::string& what)
{
    if (value > uint64_max) {
        std::array<char, 32> text{};
        const auto approx = static_cast<double>(value);
        const auto end =
            std::to_chars(text.data(), text.data() + text.size(), approx, std::chars_format::scientific, 2).ptr;
        throw overflow_error(what + " is about " + std::string(text.data(), end) +
                             ", beyond the 64-bit range (2^64-1 = 1.84e+19); use more slots or fewer steps");
    }
    return static_cast<std::uint64_t>(value);
}

/// a + b, or overflow_error naming `what`.
[[nodiscard]] inline std::uint64_t checked_add(std::uint64_t a, std::uint64_t b, const char* what)
{
    std::uint64_t sum = 0;
    if (__builtin_add_overflow(a, b, &sum))
        throw overflow_error(std::string(what) + " overflows 64 bits");
    return sum;
}

/// a * b, or overflow_error naming `what`.
[[nodiscard]] inline std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b, const char* what)
{
    std::uint64_t product = 0;
    if (__builtin_mul_overflow(a, b, &product))
        throw overflow_error(std::string(what) + " overflows 64 bits");
    return product;
}

} // namespace remat::detail
