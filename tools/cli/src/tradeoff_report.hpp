// `remat tradeoff`'s outputs: a table, JSON and an SVG chart of overhead against slots.
#pragma once

#include "tradeoff.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <vector>

namespace remat::cli {

/// Everything a report shows: the rows over the grid and the answers to the inverse questions asked.
struct tradeoff_answers {
    std::vector<tradeoff_row> rows;
    std::vector<omitted_row> omitted;
    std::optional<double> max_overhead;
    /// With --max-overhead: per schedule (in tradeoff::schedules() order), the fewest slots, or the
    /// reason it could not be answered.
    std::vector<std::pair<tradeoff_schedule, std::optional<tradeoff_row>>> least;
    std::vector<omitted_row> least_omitted;
    std::optional<std::uint64_t> budget_bytes;
    slot_t budget_slots = 0;
    std::vector<std::pair<tradeoff_schedule, std::optional<tradeoff_row>>> within;
    std::vector<omitted_row> within_omitted;
};

/// Computes the rows and the answers the options ask for; work that lasts over half a second shows its
/// progress on `progress_out`.
tradeoff_answers answer(const tradeoff& t, const std::optional<overhead_limit>& max_overhead,
                        std::optional<std::uint64_t> budget, std::ostream& progress_out);

/// {"steps", "reverse_cost", ..., "rows": [...], "least_slots": {...}, "within_budget": {...}}.
nlohmann::ordered_json tradeoff_json(const tradeoff& t, const tradeoff_answers& a);

void write_tradeoff_text(std::ostream& out, const tradeoff& t, const tradeoff_answers& a);

/// Overhead against slots, both on log axes: a curve per schedule labelled at itself, the √T point
/// called out, and the --max-overhead line.
void write_tradeoff_svg(std::ostream& out, const tradeoff& t, const tradeoff_answers& a);

} // namespace remat::cli
