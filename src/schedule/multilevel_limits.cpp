// The free-slot limits of the multi-level tables each structure builds, and whether a table fits the limits on
// work and entries.
#include "multilevel_structures.hpp"

#include <algorithm>

namespace remat::detail {

bool slow_level_unlimited(const cost_model& model, step_t steps)
{
    const slot_t slots = model.levels.back().slots;
    return slots == level_spec::unlimited || slots >= steps - 1;
}

// Free-slot limits of a table over segments of up to `horizon` steps: a level that holds horizon-1
// snapshots is as good as unlimited there.
std::vector<std::uint64_t> table_limits(const cost_model& model, step_t horizon)
{
    std::vector<std::uint64_t> limits;
    for (const level_spec& level : model.levels)
        limits.push_back(level.slots >= horizon - 1 ? detail::unlimited_free                    // unlimited too
                                                    : static_cast<std::uint64_t>(level.slots)); // >= 1
    return limits;
}

std::vector<std::uint64_t> relaxed_limits(std::vector<std::uint64_t> limits)
{
    limits.back() = detail::unlimited_free;
    return limits;
}

std::vector<std::uint64_t> periodic_limits(const cost_model& model, step_t horizon, bool spine)
{
    std::vector<std::uint64_t> limits = table_limits(model, horizon);
    // The slowest level: unlimited (spine), or only the segment start's own slot (nested: the outer
    // revolve owns the rest).
    limits.back() = spine ? detail::unlimited_free : 1;
    return limits;
}

bool affordable(std::size_t n, const std::vector<std::uint64_t>& limits, step_t horizon, std::uint64_t work_limit,
                std::uint64_t max_entries)
{
    return multilevel_table::work(n, limits, horizon) <= work_limit &&
           multilevel_table::entries(n, limits, horizon) <= max_entries;
}

// The largest horizon K <= T whose spine or nested table fits the limits (work grows with K).
step_t fitting_horizon(const cost_model& model, step_t steps, bool spine, std::uint64_t work_limit,
                       std::uint64_t max_entries)
{
    const std::size_t n = model.levels.size();
    auto fits = [&](step_t k) { return affordable(n, periodic_limits(model, k, spine), k, work_limit, max_entries); };
    step_t lo = std::min<step_t>(2, steps);
    step_t hi = steps;
    if (fits(hi))
        return hi;
    while (hi - lo > 1) {
        const step_t mid = lo + (hi - lo) / 2;
        (fits(mid) ? lo : hi) = mid;
    }
    return lo;
}

} // namespace remat::detail
