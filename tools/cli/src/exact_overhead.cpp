#include "exact_overhead.hpp"

#include <cassert>
#include <charconv>
#include <cmath>
#include <optional>
#include <string>

// GCC 12 at -O3 reports cpp_int's limb storage, inlined here, as maybe used uninitialized: a false positive
// inside Boost.Multiprecision (its inline limbs are written before they are read), which -Werror would turn
// into a build failure.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace remat::cli {
namespace {

using boost::multiprecision::cpp_int;

// x * 2^1074 for a finite double x >= 0: an integer for every double (the least is 2^-1074), so that sums of
// doubles scaled alike compare exactly.
cpp_int scaled_double(double x)
{
    assert(std::isfinite(x) && x >= 0);
    int e = 0;
    const double fraction = std::frexp(x, &e); // x = fraction * 2^e, fraction in [0.5, 1) or 0
    const auto mantissa = static_cast<std::uint64_t>(std::ldexp(fraction, 53));
    const int shift = e - 53 + 1074; // x * 2^1074 = mantissa * 2^shift
    if (shift < 0)                   // a subnormal x: the bits shifted out are zeros
        return cpp_int(mantissa >> -shift);
    return cpp_int(mantissa) << shift;
}

// The value of decimal digits ("0012" is 12): cpp_int's own reading takes a leading 0 for octal.
cpp_int from_digits(std::string_view digits)
{
    const std::size_t first = digits.find_first_not_of('0');
    return first == std::string_view::npos ? cpp_int(0) : cpp_int(std::string(digits.substr(first)));
}

bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

// Each term's cost x 2^1074 (an integer) times its count, summed: the cost x 2^1074, exactly.
cpp_int scaled_sum(const std::vector<cost_term>& terms)
{
    cpp_int sum = 0;
    for (const cost_term& t : terms)
        sum += scaled_double(t.cost) * t.count;
    return sum;
}

// A decimal text as digits x 10^power: [spaces][+]DIGITS[.DIGITS][(e|E)[+|-]DIGITS]; nullopt for any other form.
struct decimal {
    std::string digits;
    std::int64_t power = 0;
};

std::optional<decimal> read_decimal(std::string_view text)
{
    std::size_t i = 0;
    const std::size_t n = text.size();
    while (i < n && (text[i] == ' ' || (text[i] >= '\t' && text[i] <= '\r')))
        ++i;
    if (i < n && text[i] == '+')
        ++i;
    decimal d;
    for (; i < n && is_digit(text[i]); ++i)
        d.digits.push_back(text[i]);
    std::int64_t fraction = 0;
    if (i < n && text[i] == '.')
        for (++i; i < n && is_digit(text[i]); ++i, ++fraction)
            d.digits.push_back(text[i]);
    if (d.digits.empty())
        return std::nullopt;
    std::int64_t exponent = 0;
    if (i < n && (text[i] == 'e' || text[i] == 'E')) {
        ++i;
        const bool negative = i < n && text[i] == '-';
        if (i < n && (text[i] == '-' || text[i] == '+'))
            ++i;
        const auto [end, ec] = std::from_chars(text.data() + i, text.data() + n, exponent);
        if (ec != std::errc() || end == text.data() + i) // no digits, or past 64 bits: std::stod's value stands
            return std::nullopt;
        i = static_cast<std::size_t>(end - text.data());
        exponent = negative ? -exponent : exponent;
    }
    if (i != n || __builtin_sub_overflow(exponent, fraction, &d.power))
        return std::nullopt;
    return d;
}

} // namespace

std::vector<cost_term> cost_terms(const schedule_cost& counts, const cost_model& model)
{
    std::vector<cost_term> terms{{model.step_cost, counts.forward_steps}, {model.reverse_cost, counts.reverse_steps}};
    for (std::size_t i = 0; i < counts.levels.size() && i < model.levels.size(); ++i) {
        terms.push_back({model.levels[i].write_cost, counts.levels[i].stores});
        terms.push_back({model.levels[i].read_cost, counts.levels[i].restores});
    }
    return terms;
}

overhead_limit::overhead_limit(double value)
    : value_(value), numerator_(scaled_double(value)), denominator_(scaled_double(1.0))
{
    assert(std::isfinite(value) && value > 0); // value = numerator / 2^1074, exactly
}

overhead_limit::overhead_limit(std::string_view text, double value) : overhead_limit(value)
{
    const std::optional<decimal> d = read_decimal(text);
    if (!d)
        return;
    // std::stod read a finite value > 0 from these digits: the power is within a few hundred of -digits
    const std::uint64_t magnitude =
        d->power >= 0 ? static_cast<std::uint64_t>(d->power) : 0 - static_cast<std::uint64_t>(d->power);
    const cpp_int power_of_ten = boost::multiprecision::pow(cpp_int(10), static_cast<unsigned>(magnitude));
    numerator_ = from_digits(d->digits);
    denominator_ = 1;
    if (d->power >= 0)
        numerator_ *= power_of_ten;
    else
        denominator_ = power_of_ten;
}

bool overhead_limit::admits(const std::vector<cost_term>& cost, const std::vector<cost_term>& base) const
{
    const cpp_int b = scaled_sum(base);
    if (b == 0) // the overhead is 1
        return denominator_ <= numerator_;
    // cost / base <= numerator / denominator
    return scaled_sum(cost) * denominator_ <= b * numerator_;
}

} // namespace remat::cli
