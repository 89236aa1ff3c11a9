// remat::plan_taped_chain (remat/schedule/chain_taped.hpp): the memory unit, the table of the dynamic program
// (chain_taped_table.hpp: the recurrence, and how it is filled fast), the plan read off it, and its price under the
// model in true bytes (remat::price_taped_chain, chain_taped_price.cpp).
#include "remat/schedule/chain_taped.hpp"

#include "chain_cost_limit.hpp"
#include "chain_taped_emit.hpp"
#include "chain_taped_table.hpp"
#include "remat/error.hpp"
#include "remat/schedule/chain_taped_least.hpp"
#include "remat/schedule/chain_taped_price.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <string>

namespace remat {
namespace {

using unit_chain = detail::taped_unit_chain;

constexpr std::uint64_t max_units = 4096;
constexpr std::uint64_t max_entries = std::uint64_t{1} << 23;
constexpr std::uint64_t runs_from = 32; // memories per step from which the table is held as runs
constexpr std::size_t layers_from = 50; // steps from which the dense table is filled a memory at a time
constexpr double infinity = std::numeric_limits<double>::infinity();
// A chain of two or more steps needs two units at least (E(s, 1) = max(2 u_s, r_s), and every plan's peak is at
// least an E's or a tape on top of a part's H): its table needs three memories, 0 to 2, at any granularity.
constexpr std::uint64_t least_memories = 3;

// The most steps whose table holds least_memories memories of every part (2,364).
constexpr std::uint64_t most_steps()
{
    std::uint64_t n = 1;
    while (least_memories * (n + 1) * (n + 2) / 2 <= max_entries)
        ++n;
    return n;
}

std::uint64_t units_of(std::uint64_t bytes, std::uint64_t g)
{
    return bytes / g + (bytes % g != 0 ? 1 : 0);
}

std::uint64_t auto_granularity(const chain_model& c, std::uint64_t budget)
{
    std::uint64_t g = 0;
    for (step_t k = 0; k <= c.size(); ++k)
        g = std::gcd(g, c.state_bytes(k));
    for (const chain_step& s : c.steps)
        g = std::gcd(std::gcd(g, s.adjoint_bytes), s.tape_bytes);
    const std::uint64_t rows = static_cast<std::uint64_t>(c.size()) * static_cast<std::uint64_t>(c.size() + 1) / 2;
    const std::uint64_t most = std::max<std::uint64_t>(1, std::min(max_units, max_entries / rows - 1));
    const std::uint64_t wanted = std::min(budget, all_taped_bytes(c));
    if (wanted / g <= most)
        return g;
    return units_of(wanted, most);
}

} // namespace

namespace detail {

std::unique_ptr<taped_chain_optimum> taped_chain_solve(const taped_unit_chain& chain, std::uint64_t units)
{
    // Runs where a row's hundreds of memories per step hold few changes of plan; else, for long chains, every split
    // priced a memory at a time (4-11x less CPU than the bounded search from 100 steps, 2x at 60, about even at 40:
    // measured, docs/heterogeneous.md); else the dense table's bounded search.
    if (units + 1 >= runs_from * chain.f.size())
        return std::make_unique<taped_chain_runs>(chain, units);
    if (chain.f.size() >= layers_from)
        return std::make_unique<taped_chain_layers>(chain, units);
    return std::make_unique<taped_chain_table>(chain, units);
}

// More memory never costs more, so the first finite entry is found by halving.
std::uint64_t taped_chain_optimum::least(std::uint64_t most) const
{
    std::uint64_t lo = 0, hi = most; // whole(hi) finite
    while (lo < hi) {
        const std::uint64_t mid = lo + (hi - lo) / 2;
        if (whole(mid) == infinity)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void taped_chain_optimum::emit(std::uint64_t m, std::vector<action>& out) const
{
    // A split j is kept in the code's low 14 bits, e_taped (their largest value) marking E's taped advance: the
    // splits of the longest chain the table takes fit below it.
    static_assert(most_steps() < e_option);
    emit_taped_chain(
        c_, m,
        [this](std::size_t s, std::size_t l, std::uint64_t at) {
            const std::uint16_t c = code(s, l, at);
            const std::uint16_t option = c & e_option;
            return taped_part_options{.h_taped = (c & h_taped) != 0, .e_split = option == e_taped ? e_tapes : option};
        },
        out);
}

} // namespace detail

void set_price(const chain_model& chain, taped_chain_plan& plan)
{
    const taped_chain_price price = price_taped_chain(chain, plan.actions);
    plan.cost = price.cost;
    plan.peak_bytes = price.peak_bytes;
    plan.forward_steps = price.forward_steps;
    plan.taped_steps = price.taped_steps;
    plan.stores = price.stores;
    plan.restores = price.restores;
    plan.peak_slots = price.peak_slots;
    plan.repetition = price.repetition;
}

std::uint64_t all_taped_bytes(const chain_model& chain)
{
    validate(chain); // its tapes' sum fits 64 bits
    return unit_chain(chain, 1).all_taped();
}

taped_chain_plan plan_taped_chain(const chain_model& chain, std::uint64_t budget_bytes, std::uint64_t granularity)
{
    validate(chain);
    detail::require_costs_within(chain, std::numeric_limits<double>::max(), "double");
    const auto n = static_cast<std::uint64_t>(chain.size());
    const std::uint64_t rows = n * (n + 1) / 2;
    // Past this no granularity makes a table that plans anything (the search for one never ended: from 4,096
    // steps the rows alone pass the table; below, the least budget's table took tens of GB).
    if (n > 1 && rows * least_memories > max_entries)
        throw capacity_error("plan_taped_chain: a chain of " + std::to_string(n) + " steps has too many parts for " +
                             "the table at any granularity (" + std::to_string(max_entries) +
                             " entries, three memories of each part: at most " + std::to_string(most_steps()) +
                             " steps); remat::plan_taped_chain_least plans such a chain at its least budget");
    std::uint64_t g = granularity != 0 ? granularity : auto_granularity(chain, budget_bytes);
    // Rounding every size up can take the all-taped peak past the units chosen: coarser until it fits.
    while (granularity == 0 && (std::min(budget_bytes / g, unit_chain(chain, g).all_taped()) + 1) * rows > max_entries)
        g += g / 8 + 1;
    const unit_chain units(chain, g);
    const std::uint64_t u = std::min(budget_bytes / g, units.all_taped());
    if ((u + 1) * rows > max_entries)
        throw capacity_error("plan_taped_chain: a table of " + std::to_string(n) + " steps at " + std::to_string(u) +
                             " units of " + std::to_string(g) + " bytes passes " + std::to_string(max_entries) +
                             " entries; give a coarser granularity");
    const auto solved = detail::taped_chain_solve(units, u);
    const detail::taped_chain_optimum& t = *solved;
    if (t.whole(u) == infinity) {
        // The least budget: from a table that reaches the all-taped plan (which always fits its own peak)...
        const std::uint64_t g2 = granularity != 0 && (units.all_taped() + 1) * rows <= max_entries
                                     ? g
                                     : auto_granularity(chain, all_taped_bytes(chain));
        const unit_chain wide(chain, g2);
        std::uint64_t least_bytes = 0;
        bool beyond = false; // a granularity near 2^64 wrapped: "at least 18446744073709551614 bytes"
        if ((wide.all_taped() + 1) * rows <= max_entries) {
            const auto all = detail::taped_chain_solve(wide, wide.all_taped());
            beyond = __builtin_mul_overflow(all->least(wide.all_taped()), g2, &least_bytes);
        } else {
            // ...where one fits: every size rounded up to a unit of its own, the all-taped peak is T units at least,
            // and from about 250 steps no such table fits (it was filled all the same: gigabytes, or bad_alloc).
            // Then the least in true bytes, without a memory axis: no plan of the model fits less.
            least_bytes = plan_taped_chain_least(chain).least_budget_bytes;
        }
        throw capacity_error("no schedule of this chain fits a budget of " + std::to_string(budget_bytes) +
                             " bytes at a granularity of " + std::to_string(g) + " bytes; it needs " +
                             (beyond ? "more than 2^64-1 bytes at this granularity"
                                     : "at least " + std::to_string(least_bytes) + " bytes"));
    }
    const std::uint64_t least = t.least(u);
    taped_chain_plan plan;
    plan.granularity = g;
    plan.least_budget_bytes = least * g;
    plan.work = t.work();
    t.emit(u, plan.actions);
    set_price(chain, plan);
    return plan;
}

} // namespace remat
