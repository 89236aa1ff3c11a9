#include "remat/bytes.hpp"

#include "remat/error.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <string>

namespace remat {
namespace {

// ASCII whitespace as Python's \s reads it (0x1c-0x1f, the separators, included).
bool is_space(char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r') || (c >= '\x1c' && c <= '\x1f');
}

bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

char lower(char c)
{
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

bool is_letter(char c)
{
    return lower(c) >= 'a' && lower(c) <= 'z';
}

struct unit {
    std::string_view name; // lower case
    std::uint64_t scale;
};

constexpr std::array units{unit{"", 1},
                           unit{"b", 1},
                           unit{"k", 1ull << 10},
                           unit{"kib", 1ull << 10},
                           unit{"kb", 1000},
                           unit{"m", 1ull << 20},
                           unit{"mib", 1ull << 20},
                           unit{"mb", 1000000},
                           unit{"g", 1ull << 30},
                           unit{"gib", 1ull << 30},
                           unit{"gb", 1000000000},
                           unit{"t", 1ull << 40},
                           unit{"tib", 1ull << 40},
                           unit{"tb", 1000000000000},
                           unit{"p", 1ull << 50},
                           unit{"pib", 1ull << 50},
                           unit{"pb", 1000000000000000},
                           unit{"eib", 1ull << 60}, // not "e" alone: "1e" is an exponent left unfinished
                           unit{"eb", 1000000000000000000}};

// The decimal digits of digits x scale (scale <= 2^60: each digit's product and carry stay below 10 x 2^60,
// which is below 2^64).
std::string times(const std::string& digits, std::uint64_t scale)
{
    std::string reversed;
    std::uint64_t carry = 0;
    for (auto d = digits.rbegin(); d != digits.rend(); ++d) {
        const std::uint64_t v = static_cast<std::uint64_t>(*d - '0') * scale + carry;
        reversed.push_back(static_cast<char>('0' + v % 10));
        carry = v / 10;
    }
    for (; carry > 0; carry /= 10)
        reversed.push_back(static_cast<char>('0' + carry % 10));
    return {reversed.rbegin(), reversed.rend()};
}

} // namespace

std::uint64_t parse_bytes(std::string_view text, std::string_view what)
{
    const std::string shown = std::string(what) + ": \"" + std::string(text) + "\"";
    auto malformed = [&] {
        return argument_error(std::string(what) + ": expected a byte count such as 4096, 64MiB or 2GiB, got \"" +
                              std::string(text) + "\"");
    };
    auto too_large = [&](const std::string& value) { // "": too long to say
        // the value itself while it is short (Python's remat.parse_bytes said it up to 128 bits)
        return overflow_error(shown + (!value.empty() && value.size() <= 39 ? " is " + value + " bytes," : " is") +
                              " more than a 64-bit count holds (2^64-1)");
    };
    // DIGITS[.DIGITS][eDIGITS] UNIT, spaces around both: Python's
    // ^\s*([0-9]+(\.[0-9]*)?([eE][0-9]+)?)\s*([A-Za-z]*)\s*$
    std::size_t i = 0;
    const std::size_t n = text.size();
    while (i < n && is_space(text[i]))
        ++i;
    std::string digits; // the number's, its fraction's included: the value is digits x 10^(exponent - fraction)
    while (i < n && is_digit(text[i]))
        digits.push_back(text[i++]);
    if (digits.empty())
        throw malformed();
    std::size_t fraction = 0;
    if (i < n && text[i] == '.')
        for (++i; i < n && is_digit(text[i]); ++i, ++fraction)
            digits.push_back(text[i]);
    std::string_view exponent;
    if (i + 1 < n && (text[i] == 'e' || text[i] == 'E') && is_digit(text[i + 1])) {
        const std::size_t from = ++i;
        while (i < n && is_digit(text[i]))
            ++i;
        exponent = text.substr(from, i - from);
    }
    while (i < n && is_space(text[i]))
        ++i;
    std::string name;
    while (i < n && is_letter(text[i]))
        name.push_back(lower(text[i++]));
    while (i < n && is_space(text[i]))
        ++i;
    std::uint64_t scale = 0;
    for (const unit& u : units)
        if (u.name == name)
            scale = u.scale;
    if (i != n || scale == 0)
        throw malformed();

    digits.erase(0, digits.find_first_not_of('0'));
    if (digits.empty())
        return 0; // zero, whatever its exponent
    exponent.remove_prefix(std::min(exponent.size(), exponent.find_first_not_of('0')));
    // past 18 digits the exponent exceeds any text's fraction digits by more than 60: too large. Up to there it
    // is read whole: a long fraction may bring it back into range (0.<9999 zeros>1e10000 is 1 byte)
    if (exponent.size() > 18)
        throw too_large("");
    const std::int64_t power =
        (exponent.empty() ? 0 : std::stoll(std::string(exponent))) - static_cast<std::int64_t>(fraction);
    if (power > 0) {
        if (digits.size() + static_cast<std::size_t>(power) > 60) // at least 10^59: past 64 bits, too long to say
            throw too_large("");
        digits.append(static_cast<std::size_t>(power), '0');
    }
    std::string value = times(digits, scale);
    if (power < 0) {
        // the last -power digits are the fraction of a byte, which must be 0
        const auto dropped = static_cast<std::size_t>(-power);
        if (dropped >= value.size() || value.find_first_not_of('0', value.size() - dropped) != std::string::npos)
            throw argument_error(shown + " is not a whole number of bytes");
        value.resize(value.size() - dropped);
    }
    std::uint64_t bytes = 0;
    for (const char c : value)
        if (__builtin_mul_overflow(bytes, std::uint64_t{10}, &bytes) ||
            __builtin_add_overflow(bytes, static_cast<std::uint64_t>(c - '0'), &bytes))
            throw too_large(value);
    return bytes;
}

} // namespace remat
