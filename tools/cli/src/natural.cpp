#include "natural.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace remat::cli {

natural::natural(std::uint64_t value)
{
    for (; value > 0; value >>= 32)
        limbs_.push_back(static_cast<std::uint32_t>(value));
}

natural natural::scaled_double(double x)
{
    assert(std::isfinite(x) && x >= 0);
    int e = 0;
    const double fraction = std::frexp(x, &e); // x = fraction * 2^e, fraction in [0.5, 1) or 0
    auto mantissa = static_cast<std::uint64_t>(std::ldexp(fraction, 53));
    const int shift = e - 53 + 1074; // x * 2^1074 = mantissa * 2^shift
    if (shift < 0)                   // a subnormal x: the bits shifted out are zeros
        return natural(mantissa >> -shift);
    return natural(mantissa).shift_left(static_cast<std::size_t>(shift));
}

natural natural::from_digits(std::string_view digits)
{
    natural n;
    for (std::size_t at = 0; at < digits.size(); at += 9) { // nine digits at a time: 10^9 < 2^32
        const std::string_view chunk = digits.substr(at, 9);
        std::uint32_t value = 0, scale = 1;
        for (const char c : chunk) {
            value = value * 10 + static_cast<std::uint32_t>(c - '0');
            scale *= 10;
        }
        n = n * natural(scale);
        n += natural(value);
    }
    return n;
}

natural natural::power_of_ten(std::size_t exponent)
{
    natural n(1);
    for (; exponent >= 19; exponent -= 19)
        n = n * natural(10000000000000000000ull);
    std::uint64_t rest = 1;
    for (; exponent > 0; --exponent)
        rest *= 10;
    return n * natural(rest);
}

natural& natural::operator+=(const natural& other)
{
    if (limbs_.size() < other.limbs_.size())
        limbs_.resize(other.limbs_.size());
    std::uint64_t carry = 0;
    for (std::size_t i = 0; i < limbs_.size(); ++i) {
        carry += std::uint64_t{limbs_[i]} + (i < other.limbs_.size() ? other.limbs_[i] : 0u);
        limbs_[i] = static_cast<std::uint32_t>(carry);
        carry >>= 32;
    }
    if (carry > 0)
        limbs_.push_back(static_cast<std::uint32_t>(carry));
    return *this;
}

natural operator*(const natural& a, const natural& b)
{
    natural product;
    if (a.is_zero() || b.is_zero())
        return product;
    product.limbs_.assign(a.limbs_.size() + b.limbs_.size(), 0);
    for (std::size_t i = 0; i < a.limbs_.size(); ++i) {
        std::uint64_t carry = 0;
        for (std::size_t j = 0; j < b.limbs_.size(); ++j) {
            // at most (2^32-1) + (2^32-1)^2 + (2^32-1) = 2^64-1
            carry += std::uint64_t{product.limbs_[i + j]} + std::uint64_t{a.limbs_[i]} * b.limbs_[j];
            product.limbs_[i + j] = static_cast<std::uint32_t>(carry);
            carry >>= 32;
        }
        product.limbs_[i + b.limbs_.size()] = static_cast<std::uint32_t>(carry);
    }
    product.trim();
    return product;
}

std::strong_ordering operator<=>(const natural& a, const natural& b) noexcept
{
    if (a.limbs_.size() != b.limbs_.size())
        return a.limbs_.size() <=> b.limbs_.size();
    return std::lexicographical_compare_three_way(a.limbs_.rbegin(), a.limbs_.rend(), b.limbs_.rbegin(),
                                                  b.limbs_.rend());
}

natural& natural::shift_left(std::size_t bits)
{
    if (is_zero())
        return *this;
    const std::size_t limbs = bits / 32, rest = bits % 32;
    if (rest > 0) {
        std::uint32_t carry = 0;
        for (std::uint32_t& limb : limbs_) {
            const std::uint32_t next = limb >> (32 - rest);
            limb = (limb << rest) | carry;
            carry = next;
        }
        if (carry > 0)
            limbs_.push_back(carry);
    }
    limbs_.insert(limbs_.begin(), limbs, 0u);
    return *this;
}

void natural::trim() noexcept
{
    while (!limbs_.empty() && limbs_.back() == 0)
        limbs_.pop_back();
}

} // namespace remat::cli
