// How a chain is discretised for its tables: the memory unit (granularity), the chain of blocks a long chain is
// planned as, the horizon the table allows, and the units of storing every state (chain_plan.hpp).
#include "chain_stages.hpp"

#include "remat/error.hpp"

#include <algorithm>
#include <numeric>
#include <string>

namespace remat::detail {
namespace {

constexpr std::uint64_t max_horizon = chain_plan::keep - 1; // splits are step counts below the keep marker

std::uint64_t common_divisor(const chain_model& m)
{
    std::uint64_t d = m.final_state_bytes;
    for (const chain_step& s : m.steps) {
        d = std::gcd(d, s.state_bytes);
        d = std::gcd(d, s.adjoint_bytes);
    }
    return d;
}

} // namespace

void choose_granularity(chain_plan& p, const chain::options& opts)
{
    const std::uint64_t divisor = common_divisor(p.fine); // blocks keep their inner states
    bool automatic = false;
    if (opts.granularity != 0) {
        p.granularity = opts.granularity;
    } else {
        if (opts.units_target == 0)
            throw argument_error("units_target must be at least 1, got 0");
        // Units enough for a table of horizon min(T, 8), at least units_target, at most max_units: on long
        // chains finer units matter more than longer left parts (bench/chain_plan, T = 1000: 4096 units at a
        // horizon of 8 cost 9% less than 256 units at a horizon of 131). A chain of blocks has few of them, and
        // its blocks' states are counted in units too: it takes all the units the table allows (bench/chain_plan,
        // T = 10000 in blocks of 80 at 50%: 29795 units cost 2.8% less than 4096). An eighth of them is kept above
        // the budget for the rounding's slack (below).
        // Memory past what storing every state needs is never used (that plan is the cheapest of all), so it
        // must not coarsen the units. Blocks keep the budget: their kept states may hold more than that.
        const std::uint64_t useful = p.block == 1 ? std::min(p.budget, p.fine.store_all_bytes()) : p.budget;
        const auto t = static_cast<std::uint64_t>(p.model.size());
        const std::uint64_t allowed = opts.max_table_entries / (t * std::min<std::uint64_t>(t, 8) + 1);
        const std::uint64_t most = p.block > 1 ? std::max(opts.max_units, allowed) : opts.max_units;
        const bool fits = useful / divisor <= most;
        const std::uint64_t table =
            std::clamp<std::uint64_t>(allowed, opts.units_target, std::max(opts.units_target, most));
        automatic = !fits;
        p.granularity = fits ? divisor : std::max<std::uint64_t>(1, units_of(useful, table - table / 9));
    }
    p.lossless = divisor % p.granularity == 0;
    p.budget_units = p.budget / p.granularity;
    p.units = p.budget_units;
    // Rounding every size up wastes up to a unit per size held at once, so plans made for a few more units
    // than the budget often still fit it in true bytes: the tables reach that far and the plan is walked
    // from the most units whose plan fits (an automatic granularity only; a given one keeps its table).
    if (automatic && !p.lossless && opts.use_rounding_slack) {
        const auto items = static_cast<std::uint64_t>(p.model.size()) + 3;
        p.units += std::min(items, p.budget_units / 8);
    }
}

chain_model blocked(const chain_model& fine, step_t block)
{
    chain_model out;
    const step_t t = fine.size();
    for (step_t a = 0; a < t; a += block) {
        const step_t b = std::min(t, a + block);
        chain_step s{};
        s.state_bytes = fine.state_bytes(a);
        const std::uint64_t ends = std::max(fine.state_bytes(a), fine.state_bytes(b));
        for (step_t k = a; k < b; ++k) {
            s.forward += fine.steps[static_cast<std::size_t>(k)].forward;
            s.adjoint += fine.steps[static_cast<std::size_t>(k)].adjoint;
            if (k + 1 < b)
                s.adjoint += fine.steps[static_cast<std::size_t>(k)].forward;
        }
        // The block's adjoint as the cursor runs it, in the same accounting as remat::evaluate: store x_k and
        // advance for k < b - 1, reverse b - 1, then restore, free and reverse each stored state.
        std::uint64_t held = 0;
        std::uint64_t peak = 0;
        for (step_t k = a; k + 1 < b; ++k) {
            held += fine.state_bytes(k);
            peak = std::max(
                {peak, held + fine.state_bytes(k), held + std::max(fine.state_bytes(k), fine.state_bytes(k + 1))});
        }
        peak = std::max(peak, held + fine.adjoint_need(b - 1));
        for (step_t k = b - 2; k >= a; --k) {
            peak = std::max(peak, held + fine.state_bytes(k));
            held -= fine.state_bytes(k);
            peak = std::max(peak, held + fine.adjoint_need(k));
        }
        s.adjoint_bytes = peak > ends ? peak - ends : 0;
        out.steps.push_back(s);
    }
    out.final_state_bytes = fine.final_state_bytes;
    return out;
}

void choose_horizon(chain_plan& p, const chain::options& opts)
{
    const auto t = static_cast<std::uint64_t>(p.steps);
    const std::uint64_t rows = opts.max_table_entries / p.row(); // rows of U + 1 entries that fit
    if (rows < t)
        throw capacity_error("a chain of " + std::to_string(t) + " steps at " + std::to_string(p.units) +
                             " memory units (granularity " + std::to_string(p.granularity) +
                             " bytes) needs more than max_table_entries = " + std::to_string(opts.max_table_entries) +
                             " table entries; use a coarser granularity");
    // A horizon of K has min(K, T - s) rows for each start s: K T - K (K - 1) / 2 in all, growing with K.
    const auto rows_for = [&](std::uint64_t h) { return h * t - h * (h - 1) / 2; };
    std::uint64_t fitting = 1; // rows_for(1) = T fits
    for (std::uint64_t high = std::min(t, max_horizon); fitting < high;) {
        const std::uint64_t mid = fitting + (high - fitting + 1) / 2;
        if (rows_for(mid) <= rows)
            fitting = mid;
        else
            high = mid - 1;
    }
    if (opts.horizon < 0)
        throw argument_error("horizon must be >= 0, got " + std::to_string(opts.horizon));
    if (opts.horizon > 0 && static_cast<std::uint64_t>(opts.horizon) > fitting && fitting < t)
        throw capacity_error("a horizon of " + std::to_string(opts.horizon) + " steps needs more than " +
                             std::to_string(opts.max_table_entries) + " table entries; at most " +
                             std::to_string(fitting) + " fit");
    p.horizon = static_cast<step_t>(
        opts.horizon > 0 ? std::min<std::uint64_t>(static_cast<std::uint64_t>(opts.horizon), fitting) : fitting);
}

std::uint64_t store_all_units(const chain_plan& p)
{
    std::uint64_t held = 0;
    std::uint64_t peak = 0;
    const auto t = static_cast<std::size_t>(p.steps);
    for (std::size_t k = 0; k + 1 < t; ++k) {
        held += p.u[k];
        peak = std::max(peak, held + std::max(p.u[k], p.u[k + 1]));
    }
    peak = std::max(peak, held + p.r[t - 1]);
    for (std::size_t k = t - 1; k-- > 0;) {
        held -= p.u[k];
        peak = std::max(peak, held + p.r[k]);
    }
    return peak;
}

void shape_tables(chain_plan& p, const chain::options& opts, bool& limited)
{
    p.model = p.block > 1 ? blocked(p.fine, p.block) : p.fine;
    p.steps = p.model.size();
    const chain_model& m = p.model;
    choose_granularity(p, opts);
    p.u.resize(static_cast<std::size_t>(p.steps) + 1);
    p.r.resize(static_cast<std::size_t>(p.steps));
    for (step_t k = 0; k <= p.steps; ++k)
        p.u[static_cast<std::size_t>(k)] = units_of(m.state_bytes(k), p.granularity);
    for (step_t k = 0; k < p.steps; ++k) {
        const auto ki = static_cast<std::size_t>(k);
        p.r[ki] = std::max(p.u[ki], p.u[ki + 1]) + units_of(m.steps[ki].adjoint_bytes, p.granularity);
    }
    if (p.block == 1) { // every entry is the same from the units of storing everything on: a longer row only
                        // costs table (and horizon); blocks' kept states may hold more, so they keep theirs
        const std::uint64_t all = store_all_units(p);
        p.units = std::min(p.units, all);
        p.budget_units = std::min(p.budget_units, all);
    }
    limited = true; // until the horizon is known
    choose_horizon(p, opts);
    limited = p.horizon < p.steps;
    // An advance through a block holds its widest state, which may be an inner one.
    p.wide.assign(static_cast<std::size_t>(p.steps), 0);
    for (step_t k = 0; k < p.fine.size(); ++k) {
        const std::uint64_t running =
            units_of(std::max(p.fine.state_bytes(k), p.fine.state_bytes(k + 1)), p.granularity);
        std::uint64_t& w = p.wide[static_cast<std::size_t>(k / p.block)];
        w = std::max(w, running);
    }
}

} // namespace remat::detail
