// remat/bytes.hpp — byte sizes written as text ("8GiB", "1.5 kB", "1e9"): the one parser of the `remat` tool's
// options and of Python's remat.parse_bytes, so that both accept and refuse the same texts.
#pragma once

#include <cstdint>
#include <string_view>

namespace remat {

/// The bytes of `text`: a decimal number (digits, an optional fraction, an optional unsigned exponent: 4096,
/// 1.5, 1e9, 2.5e3), optionally followed by a unit, case-insensitive: B; KiB, MiB, GiB, TiB, PiB, EiB (powers of
/// 1024; K, M, G, T, P alike, but not E: "1e" is an unfinished exponent); kB, MB, GB, TB, PB, EB (powers of
/// 1000): every unit the tool prints. Spaces may surround the number and the unit. The value is read
/// exactly from its digits (no floating point): it must be a whole number of bytes (1.5 and 0.1KiB are not)
/// and at most 2^64-1. Throws remat::argument_error for any other text or a fraction of a byte and
/// remat::overflow_error past 2^64-1, each naming `what` (the option or argument) and the text.
///
///     remat::parse_bytes("1.5GiB", "--budget");   // 1610612736
[[nodiscard]] std::uint64_t parse_bytes(std::string_view text, std::string_view what);

} // namespace remat
