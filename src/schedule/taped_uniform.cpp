// remat::taped_uniform: writes checkpoint_sequential's actions (the file's header explains the plan) and
// chooses the spacing for a budget from the closed-form counts.
#include "remat/schedule/taped_uniform.hpp"

#include "remat/detail/checked_math.hpp"
#include "remat/error.hpp"
#include "taped_plan_builder.hpp"

#include <algorithm>
#include <limits>
#include <string>

namespace remat {
namespace {

constexpr step_t max_steps = step_t{1} << 24; // the actions are written out: ~100 bytes a step

void check_arguments(step_t steps, slot_t tape_units)
{
    if (steps < 1 || steps > max_steps)
        throw argument_error("taped_uniform: steps = " + std::to_string(steps) + " (expected 1 to " +
                             std::to_string(max_steps) + ")");
    if (tape_units < 1)
        throw argument_error("taped_uniform: tape_units = " + std::to_string(tape_units) +
                             " (expected at least 1: a tape holds its step's input state)");
}

} // namespace

slot_t taped_uniform::peak_units_for(step_t steps, step_t every, slot_t tape_units)
{
    const step_t k = std::min(every, steps);
    const step_t n = (steps + k - 1) / k;
    const step_t last = steps - (n - 1) * k;
    // snapshots + tapes x tape_units, with tape_units as large as the caller likes: checked.
    const auto units = [&](step_t snapshots, step_t tapes) {
        const std::uint64_t total = detail::checked_add(static_cast<std::uint64_t>(snapshots),
                                                        detail::checked_mul(static_cast<std::uint64_t>(tapes),
                                                                            static_cast<std::uint64_t>(tape_units),
                                                                            "taped_uniform: the units of the tapes"),
                                                        "taped_uniform: the units held");
        if (total > static_cast<std::uint64_t>(std::numeric_limits<slot_t>::max()))
            throw overflow_error("taped_uniform: the units held overflow 63 bits");
        return static_cast<slot_t>(total);
    };
    const slot_t last_segment = units(n - 1, last - 1); // every input stored, the last segment taped
    return n == 1 ? last_segment : std::max(last_segment, units(n - 2, k - 1));
}

taped_uniform::taped_uniform(step_t steps, step_t every, slot_t tape_units, double forward_cost, double backward_cost)
    : steps_(steps), every_(every), tape_units_(tape_units)
{
    check_arguments(steps, tape_units);
    if (every < 1)
        throw argument_error("taped_uniform: every = " + std::to_string(every) +
                             " (expected a segment length of at least 1)");
    detail::check_step_cost("taped_uniform", "forward_cost", forward_cost);
    detail::check_step_cost("taped_uniform", "backward_cost", backward_cost);
    every_ = std::min(every, steps);
    const step_t k = every_;
    const step_t n = (steps + k - 1) / k;
    detail::taped_plan_builder b(steps, tape_units);
    for (step_t j = 0; j + 1 < n; ++j) {
        b.store(j, j * k);
        b.advance(j * k, (j + 1) * k, false);
    }
    for (step_t j = n - 1; j >= 0; --j) {
        const step_t base = j * k;
        const step_t length = j == n - 1 ? steps - base : k;
        if (j < n - 1) {
            b.restore(j, base);
            b.release(j); // the first tape (or the state itself) holds x_base now
        }
        for (step_t i = 0; i + 1 < length; ++i)
            b.advance(base + i, base + i + 1, true);
        b.reverse(base + length - 1, false); // from the state the taped steps left: no tape needed
        for (step_t i = length - 2; i >= 0; --i)
            b.reverse(base + i, true);
    }
    detail::taped_plan_builder::plan p = b.finish(forward_cost, backward_cost);
    cost_ = std::move(p.cost);
    evaluations_ = p.evaluations;
    peak_units_ = p.peak_units;
    actions_ = std::move(p.actions);
}

step_t taped_uniform::fit_every(step_t steps, slot_t units, slot_t tape_units)
{
    check_arguments(steps, tape_units);
    if (units < 1)
        throw argument_error("taped_uniform: units = " + std::to_string(units) +
                             " (expected at least 1: x_0's snapshot; memory is counted in states)");
    // Evaluations are 2T - L_last: the longest last segment wins, then the fewest units, then (as a scan
    // from k = 1 meets them) the smallest spacing. Only the first spacing of each segment count needs
    // pricing, O(sqrt(T)) of them: the spacings that make n >= 2 segments are a run k0 = ceil(T/n), ..., and
    // along it L_last = T - (n - 1) k falls while the peak, max(n - 1 + (L_last - 1) u, n - 2 + (k - 1) u),
    // is its second term, which grows with k, wherever n k > T (the first minus the second is
    // 1 + (T - n k) u <= 0); only k0 can have n k0 = T, and its peak n - 1 + (k0 - 1) u is then at most
    // the next one's n - 2 + k0 u. So k0 leaves the longest last segment in the fewest units of its run:
    // the best spacing and the least units over every spacing are found among the first ones. (A peak
    // that overflows overflows at k = T too, the largest peak, (T - 1) u, which is always priced.)
    step_t best = 0;
    step_t best_last = -1;
    slot_t best_units = 0;
    slot_t least = std::numeric_limits<slot_t>::max();
    for (step_t k = 1; k <= steps;) {
        const step_t n = (steps + k - 1) / k;
        const slot_t need = peak_units_for(steps, k, tape_units);
        least = std::min(least, need);
        const step_t last = steps - (n - 1) * k;
        if (need <= units && (last > best_last || (last == best_last && need < best_units))) {
            best = k;
            best_last = last;
            best_units = need;
        }
        k = n == 1 ? steps + 1 : (steps + n - 2) / (n - 1); // the first spacing of fewer segments
    }
    if (best == 0)
        throw capacity_error("taped_uniform: no segment length fits " + std::to_string(units) + " units for " +
                             std::to_string(steps) + " steps with tapes of " + std::to_string(tape_units) +
                             " units; it needs at least " + std::to_string(least) + " units");
    return best;
}

taped_uniform taped_uniform::fit(step_t steps, slot_t units, slot_t tape_units, double forward_cost,
                                 double backward_cost)
{
    return taped_uniform(steps, fit_every(steps, units, tape_units), tape_units, forward_cost, backward_cost);
}

} // namespace remat
