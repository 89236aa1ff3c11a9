// Unsigned integers of any size, with just what comparing overheads exactly needs (exact_overhead.hpp): sums and
// products of doubles, counts and decimal fractions, which pass 128 bits (a double's value times 2^1074 alone
// takes up to 2098).
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace remat::cli {

class natural {
public:
    natural() = default;
    explicit natural(std::uint64_t value);

    /// x * 2^1074 for a finite double x >= 0: an integer for every double, so that sums of doubles scaled
    /// alike compare exactly.
    [[nodiscard]] static natural scaled_double(double x);
    /// The value of decimal digits ("0012" is 12; "" is 0).
    [[nodiscard]] static natural from_digits(std::string_view digits);
    /// 10^exponent.
    [[nodiscard]] static natural power_of_ten(std::size_t exponent);

    [[nodiscard]] bool is_zero() const noexcept { return limbs_.empty(); }

    natural& operator+=(const natural& other);
    friend natural operator*(const natural& a, const natural& b);
    friend std::strong_ordering operator<=>(const natural& a, const natural& b) noexcept;
    friend bool operator==(const natural& a, const natural& b) noexcept = default;

private:
    natural& shift_left(std::size_t bits);
    void trim() noexcept;

    std::vector<std::uint32_t> limbs_; // least significant first, no zero limb on top (0 has none)
};

} // namespace remat::cli
