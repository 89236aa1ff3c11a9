// remat::chain: plans a heterogeneous chain (the recurrences are at the top of chain_plan.hpp, the stages in
// chain_stages.hpp), in blocks where its table is too short, and takes the cheaper listed plan where one is.
#include "remat/schedule/chain.hpp"

#include "chain_cost_limit.hpp"
#include "chain_plan.hpp"
#include "chain_refetch.hpp"
#include "chain_stages.hpp"

#include "remat/error.hpp"
#include "remat/schedule/any_schedule.hpp"
#include "remat/schedule/chain_greedy.hpp"

#include <algorithm>
#include <exception>
#include <limits>
#include <string>

namespace remat {
namespace detail {
namespace {

/// Throws the capacity_error of a plan whose least units exceed its budget's, naming the least budget that fits.
[[noreturn]] void throw_no_fit(const chain_plan& p, const chain::options& opts)
{
    std::string least;
    try { // the same granularity with room for storing everything, which always fits
        chain_plan roomy = p;
        roomy.units = roomy.budget_units = store_all_units(roomy);
        choose_horizon(roomy, opts);
        build_inner(roomy);
        build_outer(roomy);
        std::uint64_t bytes = 0; // a granularity near 2^64 wrapped: "at least 18446744073709551614 bytes"
        least = __builtin_mul_overflow(least_units(roomy), p.granularity, &bytes)
                    ? "; it needs more than 2^64-1 bytes at this granularity"
                    : "; it needs at least " + std::to_string(bytes) + " bytes";
    } catch (const capacity_error&) {
        least = "; it needs more (every snapshot it must keep, and a step running on top)";
    }
    throw capacity_error("no schedule of this chain fits a budget of " + std::to_string(p.budget) +
                         " bytes at a granularity of " + std::to_string(p.granularity) + " bytes" +
                         (p.horizon < p.steps ? " and a horizon of " + std::to_string(p.horizon) + " steps" : "") +
                         (p.block > 1 ? " in blocks of " + std::to_string(p.block) + " steps" : "") + least);
}

/// Where the tables' plan is not optimal, or the non-persistent recurrence is asked for, takes a listed plan
/// that fits the budget and costs less than `cost` (the tables' plan's).
void take_cheaper_listed(chain_plan& p, const chain::options& opts, double cost)
{
    // Not optimal (blocks, or a short horizon): where the greedy ranking's plan costs less, it is the plan.
    if (opts.greedy_fallback && (p.block > 1 || p.horizon < p.steps)) {
        const listed_plan greedy = greedy_ranking(p.fine, p.budget);
        if (!greedy.empty() && greedy.peak_bytes() <= p.budget && greedy.cost().predicted_cost < cost) {
            p.listed = greedy.actions();
            p.listed_method = "greedy ranking";
            p.counts = greedy.cost();
            p.peak_bytes = greedy.peak_bytes();
        }
    }
    // Opt-in: the extended recurrence (a checkpoint may be dropped at its last restore and its step reversed
    // from the enclosing one; chain_refetch.hpp), on exact plans small enough for its plain tables. Taken only
    // where it fits the budget in true bytes and costs less, so the plan never gets dearer.
    if (opts.non_persistent && p.block == 1 && p.horizon >= p.steps) {
        constexpr std::uint64_t max_entries = std::uint64_t{1} << 22; // 32 MiB a table
        constexpr std::uint64_t max_work = 100'000'000;               // splits priced: under a second
        if (auto actions = plan_refetch(p.fine, p.granularity, p.budget_units, max_entries, max_work)) {
            auto shared = std::make_shared<const std::vector<action>>(std::move(*actions));
            const chain_evaluation r = evaluate(p.fine, listed_plan(p.steps, shared, {}));
            if (r.peak_bytes <= p.budget && r.cost < cost) {
                p.listed = std::move(shared);
                p.listed_method = "dynamic program, non-persistent";
                p.counts = r.counts;
                p.peak_bytes = r.peak_bytes;
            }
        }
    }
}

} // namespace
} // namespace detail

using detail::chain_plan;

chain::chain(chain_model model, std::uint64_t budget_bytes, const options& opts)
{
    validate(model);
    detail::require_costs_within(model, std::numeric_limits<float>::max(), "float");
    auto p = std::make_shared<chain_plan>();
    p->fine = std::move(model);
    p->budget = budget_bytes;
    for (step_t k = 0; k < p->fine.size(); ++k)
        if (p->fine.adjoint_need(k) > budget_bytes)
            throw argument_error("a budget of " + std::to_string(budget_bytes) + " bytes is below what step " +
                                 std::to_string(k) + " alone needs while its adjoint runs (max(m_k, m_k+1) + a_k = " +
                                 std::to_string(p->fine.adjoint_need(k)) + " bytes)");
    if (opts.block_steps < 0)
        throw argument_error("block_steps must be >= 0, got " + std::to_string(opts.block_steps));
    const step_t t = p->fine.size();
    if (opts.block_steps > 0) {
        bool limited = false;
        p->block = std::min(opts.block_steps, t);
        build(p, opts, limited);
        return;
    }
    // Automatic: the chain itself; where its table's horizon is too short for any plan to fit (long chains),
    // blocks.
    std::exception_ptr unblocked;
    {
        bool limited = false;
        try {
            build(std::make_shared<chain_plan>(*p), opts, limited);
            return;
        } catch (const capacity_error&) {
            if (!limited)
                throw; // a full horizon found nothing: the budget is too small, and blocks need more
            unblocked = std::current_exception();
        }
    }
    // Blocks that leave about a thousand to plan (a full-length table of fine units at a horizon of 8), and
    // twice as long while none fits: blocks of 2 on a 10000-step chain left units so coarse that the plan cost
    // 9% more than blocks of 10.
    for (step_t block = std::max<step_t>(2, (t + 999) / 1000); block < t; block *= 2) {
        auto tried = std::make_shared<chain_plan>(*p);
        tried->block = block;
        bool limited = false;
        try {
            build(tried, opts, limited);
            return;
        } catch (const capacity_error&) { // NOLINT(bugprone-empty-catch): larger blocks next
        }
    }
    std::rethrow_exception(unblocked);
}

void chain::build(const std::shared_ptr<detail::chain_plan>& p, const options& opts, bool& limited)
{
    const std::uint64_t budget_bytes = p->budget;
    detail::shape_tables(*p, opts, limited);
    if (p->block > 1)
        detail::choose_keep_options(*p);
    detail::build_inner(*p);
    detail::build_outer(*p);
    p->least_units = detail::least_units(*p);
    if (p->least_units > p->budget_units) {
        detail::throw_no_fit(*p, opts);
    }
    // Walked from budget_units the plan fits (every size rounded up); from more units it may still fit in true
    // bytes, and costs no more (G(0, M) does not grow with M). Bisect for the most units that fit.
    const auto walk = [&](std::uint64_t from) {
        p->start_units = from;
        plan_ = p;
        return evaluate(p->fine, *this);
    };
    chain_evaluation e = walk(p->budget_units);
    std::uint64_t best = p->budget_units; // the most units walked whose plan fits
    std::uint64_t low = best;             // the search: a plan from `low` fits or costs no less than best's
    std::uint64_t high = p->units + 1;    // ... and none from `high` on was found to fit
    while (high - low > 1) {
        const std::uint64_t mid = low + (high - low) / 2;
        if (!(detail::root_cost(*p, mid) < detail::root_cost(*p, best))) { // no cheaper there: nothing to walk
            low = mid;
            continue;
        }
        const chain_evaluation tried = walk(mid);
        if (tried.peak_bytes <= budget_bytes && tried.cost <= e.cost) {
            low = best = mid;
            e = tried;
        } else {
            high = mid;
        }
    }
    p->start_units = best;
    plan_ = p;
    p->counts = e.counts;
    p->peak_bytes = e.peak_bytes;
    detail::take_cheaper_listed(*p, opts, e.cost);
}

step_t chain::steps() const noexcept
{
    return plan_->fine.size();
}
const chain_model& chain::model() const noexcept
{
    return plan_->fine;
}
step_t chain::block_steps() const noexcept
{
    return plan_->block;
}
std::uint64_t chain::budget_bytes() const noexcept
{
    return plan_->budget;
}
std::uint64_t chain::granularity() const noexcept
{
    return plan_->granularity;
}
std::uint64_t chain::units() const noexcept
{
    return plan_->budget_units;
}
std::uint64_t chain::planned_units() const noexcept
{
    return plan_->start_units;
}
step_t chain::horizon() const noexcept
{
    return plan_->horizon;
}
bool chain::exact() const noexcept
{
    return plan_->block == 1 && plan_->horizon >= plan_->steps;
}
bool chain::lossless() const noexcept
{
    return plan_->lossless;
}
std::uint64_t chain::discretisation_gap_bytes() const noexcept
{
    if (plan_->lossless)
        return 0;
    const auto items = static_cast<std::uint64_t>(plan_->steps) + 3;
    std::uint64_t gap = 0;
    return __builtin_mul_overflow(items, plan_->granularity, &gap) ? std::numeric_limits<std::uint64_t>::max() : gap;
}
const char* chain::method() const noexcept
{
    return plan_->listed != nullptr ? plan_->listed_method : "dynamic program";
}
std::uint64_t chain::peak_bytes() const noexcept
{
    return plan_->peak_bytes;
}
std::uint64_t chain::table_bytes() const noexcept
{
    const chain_plan& p = *plan_;
    return p.cost.size() * sizeof(float) + (p.finite.size() + p.flat.size()) * sizeof(std::uint64_t) +
           p.outer_cost.size() * sizeof(double) + p.outer_split.size() * sizeof(std::uint16_t) +
           (p.first_row.size() + p.prefix.size()) * 8 + p.keep_first.size() * sizeof(std::uint32_t) +
           p.keep_options.size() * sizeof(chain_plan::keep_option) + p.keep_flags.size();
}
std::uint64_t chain::least_budget_bytes() const noexcept
{
    return plan_->least_units * plan_->granularity;
}
schedule_cost chain::cost() const
{
    return plan_->counts;
}

} // namespace remat
