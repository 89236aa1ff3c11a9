// snapshot_bytes.hpp — the bytes a plan's peak of snapshots takes, for the tool's reports.
#pragma once

#include "remat/cli/parse.hpp"

#include "remat/types.hpp"

#include <cstdint>
#include <fmt/format.h>
#include <optional>

namespace remat::cli {

/// peak_slots * state_bytes, or nullopt where the product passes 64 bits (never wrapped or saturated: a report
/// would otherwise print a wrong size).
[[nodiscard]] inline std::optional<std::uint64_t> snapshot_bytes_within_64_bits(slot_t peak_slots,
                                                                                std::uint64_t state_bytes)
{
    std::uint64_t bytes = 0;
    if (peak_slots < 0 || __builtin_mul_overflow(static_cast<std::uint64_t>(peak_slots), state_bytes, &bytes))
        return std::nullopt;
    return bytes;
}

/// peak_slots * state_bytes; a product beyond 64 bits is refused (usage_error naming both): one plan's report
/// has nothing to show without it.
[[nodiscard]] inline std::uint64_t snapshot_bytes(slot_t peak_slots, std::uint64_t state_bytes)
{
    const std::optional<std::uint64_t> bytes = snapshot_bytes_within_64_bits(peak_slots, state_bytes);
    if (!bytes)
        throw usage_error(fmt::format("--state-bytes {}: {} snapshots of it take about {:.3g} bytes, beyond the "
                                      "64-bit range",
                                      state_bytes, peak_slots,
                                      static_cast<double>(peak_slots) * static_cast<double>(state_bytes)));
    return *bytes;
}

} // namespace remat::cli
