// `--level NAME:SLOTS[:WRITE:READ]`: storage levels for multi-level schedules, parsed into a cost model.
#pragma once

#include "remat/schedule/multilevel_model.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace remat::cli {

/// One parsed `--level` text, with its byte capacity when SLOTS was given in bytes.
struct parsed_level {
    level_spec spec;
    std::string text;                   ///< as given, for messages
    std::optional<std::uint64_t> bytes; ///< SLOTS given as a byte size (16GiB), converted with --state-bytes
};

/// Parses every `--level` text, fastest first. SLOTS is an integer >= 1, `inf`, or a byte size such as
/// 16GiB (then `state_bytes` is required and the level holds floor(bytes / state_bytes) snapshots);
/// WRITE and READ are finite numbers >= 0 in forward steps (default 0). Throws usage_error naming the
/// bad `--level` text.
std::vector<parsed_level> parse_levels(const std::vector<std::string>& texts, std::optional<std::uint64_t> state_bytes);

/// A number >= 0 (> 0 when `positive`) given to `option`; throws usage_error naming it.
double parse_cost(const std::string& option, const std::string& text, bool positive);

} // namespace remat::cli
