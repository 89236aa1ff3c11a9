#include "remat/cli/parse.hpp"

#include "remat/bytes.hpp"
#include "remat/error.hpp"

#include <fmt/format.h>

#include <array>
#include <charconv>

namespace remat::cli {
namespace {

std::string quoted(std::string_view text)
{
    return "\"" + std::string(text) + "\"";
}

} // namespace

std::int64_t parse_count(std::string_view option, std::string_view text, std::int64_t min, std::int64_t max)
{
    auto fail = [&](std::string_view why) -> std::int64_t {
        throw usage_error(
            fmt::format("{}: expected an integer from {} to {}, got {}{}", option, min, max, quoted(text), why));
    };
    // DIGITS[.DIGITS][e[+-]DIGITS], read exactly: the value is the digits times a power of ten, which must
    // leave no fraction (1.05e8 and 150e-1 are integers, 1.5 and 1e-3 are not).
    std::string_view mantissa = text;
    std::string_view exponent;
    if (const auto e = text.find_first_of("eE"); e != std::string_view::npos) {
        mantissa = text.substr(0, e);
        exponent = text.substr(e + 1);
        if (exponent.empty())
            return fail("");
    }
    bool negative = false;
    if (!mantissa.empty() && (mantissa.front() == '-' || mantissa.front() == '+')) {
        negative = mantissa.front() == '-';
        mantissa.remove_prefix(1);
    }
    std::string digits;
    std::int64_t power = 0; // of ten, applied to `digits`
    bool point = false;
    for (const char c : mantissa) {
        if (c == '.' && !point) {
            point = true;
        } else if (c >= '0' && c <= '9') {
            digits.push_back(c);
            if (point)
                --power;
        } else {
            return fail("");
        }
    }
    if (digits.empty())
        return fail("");
    if (!exponent.empty()) {
        if (exponent.front() == '+')
            exponent.remove_prefix(1);
        int e = 0;
        auto [end, ec] = std::from_chars(exponent.data(), exponent.data() + exponent.size(), e);
        if (ec != std::errc{} || end != exponent.data() + exponent.size() || e < -1000 || e > 1000)
            return fail("");
        power += e;
    }
    // A negative power drops trailing digits, which must all be zeros.
    while (power < 0) {
        if (digits.back() != '0')
            return fail(" (not an integer)");
        digits.pop_back();
        ++power;
        if (digits.empty())
            digits = "0";
    }
    std::int64_t value = 0;
    auto overflow = [&] { return fail(" (out of range)"); };
    for (const char c : digits)
        if (__builtin_mul_overflow(value, std::int64_t{10}, &value) ||
            __builtin_add_overflow(value, std::int64_t{c - '0'}, &value))
            return overflow();
    for (std::int64_t i = 0; i < power && value != 0; ++i)
        if (__builtin_mul_overflow(value, std::int64_t{10}, &value))
            return overflow();
    if (negative)
        value = -value;
    if (value < min || value > max)
        return fail("");
    return value;
}

std::optional<std::uint64_t> parse_bytes(std::string_view option, std::string_view text, bool allow_infinite)
{
    if (allow_infinite && (text == "inf" || text == "unlimited"))
        return std::nullopt;
    try {
        return remat::parse_bytes(text, option); // Python's remat.parse_bytes reads its texts alike
    } catch (const remat::error& e) {
        throw usage_error(e.what());
    }
}

std::string format_bytes(std::uint64_t bytes)
{
    static constexpr std::array names{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (bytes < 1024)
        return fmt::format("{} B", bytes);
    auto value = static_cast<double>(bytes);
    std::size_t unit = 0;
    while (value >= 1024.0 && unit + 1 < names.size()) {
        value /= 1024.0;
        ++unit;
    }
    return fmt::format("{:.{}f} {}", value, value < 10 ? 2 : (value < 100 ? 1 : 0), names[unit]);
}

} // namespace remat::cli
