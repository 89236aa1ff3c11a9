// Parsing and printing of command-line quantities: counts and byte sizes.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace remat::cli {

/// Bad usage: the tool prints the message on one line and exits 2.
class usage_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// An integer in [min, max] given to `option`: decimal digits, or any decimal or scientific form whose value
/// is exactly an integer (1e15, 1.05e8, 150e-1). Non-integers (1.5, 1e-3) are refused.
/// Throws usage_error naming the option and the accepted range.
std::int64_t parse_count(std::string_view option, std::string_view text, std::int64_t min,
                         std::int64_t max = INT64_MAX);

/// A byte size such as 4096, 64MiB, 2GiB, 1.5GB, 1e9 or 512K, as remat::parse_bytes reads it (remat/bytes.hpp: K, M,
/// G, T are binary, like KiB; a whole number of bytes, at most 2^64-1), and Python's remat.parse_bytes alike. "inf"
/// gives std::nullopt when `allow_infinite`. Throws usage_error naming the option.
std::optional<std::uint64_t> parse_bytes(std::string_view option, std::string_view text, bool allow_infinite = false);

/// "64.0 MiB", "2.00 GiB", "512 B".
std::string format_bytes(std::uint64_t bytes);

} // namespace remat::cli
