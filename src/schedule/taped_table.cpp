// The dynamic program of remat::taped_revolve. For l >= 2 steps and b units:
//   taped:  1 + E(l-1, b-u)                                  (b >= u; x_s's snapshot lives in the tape)
//   split:  min over 1 <= j < l of j + E(j, b) + E(l-j, b-1)  (b >= 1; store x_s, advance j, right, left)
// with E(1, b) = 1 (reverse from x_s, re-running step s) where b >= w, the units that re-run holds while it
// runs (0 in revolve's convention; x_s's snapshot, if held, is the re-run's input and inside both), else
// infeasible; and E(l, b) infeasible for l >= 2 and b <= w. B is the same T x B for every plan, so only
// evaluations are minimised.
//
// The split's minimum is found exactly by branch and bound: E(l+1, b) >= E(l, b) + 1 (drop the last step
// from a plan of l+1 steps: it ran at least once, in a taped advance or in its reverse's re-run; what the plan
// holds can only shrink), so over
// j in [a, c] the cost is at least c + E(a, b) + E(l-c, b-1). E is not convex in l (measured: it fails
// for u = 1..10 at b >= 2), so no Monge or monotone-argmin shortcut holds. Tighter: with mL the least
// increment E(i, b) - E(i-1, b) over i in a+1..c and mR that of E(., b-1) over l-c+1..l-a, the cost is at
// least E(a, b) + E(l-c, b-1) + j + mL (j - a) + mR (c - j), a line in j, so at least its smaller end:
// E(a, b) + E(l-c, b-1) + min(a + mR (c - a), c + mL (c - a)). Where both rows rise evenly this is the
// exact minimum over the range, so only where their increments alternate are splits priced one by one.
// The range minima come from a sparse table of each of the two rows in use (increments).
//
// Two more cuts keep the search short without losing exactness. (1) E(l, b) >= 2l - 1 - floor(b/u): before the
// segment's first reverse (of its last step) each of its other l - 1 steps has run, and the tapes taken on
// those first runs are all still held, at most floor(b/u) of them; every other step among the l - 1 must
// run again for its reverse, and the last step runs at least once. A choice reaching this floor is
// optimal, so the search stops there. (2) Only a split strictly cheaper than the taped choice changes the
// entry, so the taped choice's cost seeds the bound. The plan writer, knowing E(l, b), stops at the first
// split that reaches it.
#include "taped_table.hpp"
#include "table_substrate.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <utility>

namespace remat::detail {

taped_table::taped_table(step_t steps, slot_t units, slot_t tape_units, slot_t rerun_units, std::uint64_t work_limit)
    : width_(static_cast<std::size_t>(steps) + 1), tape_units_(tape_units),
      rows_(static_cast<std::size_t>(units + 1) * width_, infeasible)
{
    // Its work goes on the planners' shared meter (table_substrate.hpp) whichever way the table ends.
    const struct metered {
        const std::uint64_t& work;
        ~metered() { table_work_meter() += work; }
    } meter{work_};
    increments left_steps;  // of row b, as it is filled
    increments right_steps; // of row b - 1
    left_steps.reset(width_);
    right_steps.reset(width_);
    for (slot_t b = 0; b <= units; ++b) {
        // Row b's increments overwrite row b-2's in order: a query reads only entries set in this row.
        std::swap(left_steps, right_steps);
        work_ += width_;
        if (work_ > work_limit) {
            complete_ = false;
            return;
        }
        std::uint32_t* row = rows_.data() + static_cast<std::size_t>(b) * width_;
        row[0] = 0;
        if (steps >= 1 && b >= rerun_units) {
            row[1] = 1;
            left_steps.set(1, 1);
        }
        // An infeasible entry (rows b <= rerun_units only) counts as the least increment any row has, 1.
        const auto note = [&](step_t l) {
            const bool both = row[l] != infeasible && row[l - 1] != infeasible;
            left_steps.set(static_cast<std::size_t>(l), both ? row[l] - row[l - 1] : 1);
        };
        step_t guess = 1;
        for (step_t l = 2; l <= steps; ++l) {
            // Every step but the last taped, then the last re-run: the lower bound l, reached (and nothing
            // else is needed).
            if (b >= (l - 1) * tape_units + rerun_units) {
                row[l] = static_cast<std::uint32_t>(l);
                note(l);
                continue;
            }
            std::uint64_t best = UINT64_MAX;
            if (b >= tape_units && at(l - 1, b - tape_units) != infeasible)
                best = 1 + static_cast<std::uint64_t>(at(l - 1, b - tape_units));
            // The floor (1) above: a choice that reaches it is optimal, nothing more is searched.
            // (At most l - 1 tapes count: b may hold that many and still miss the last re-run's units.)
            const std::uint64_t floor = 2 * static_cast<std::uint64_t>(l) - 1 -
                                        static_cast<std::uint64_t>(std::min<slot_t>(b / tape_units, l - 1));
            if (b >= 1 && best > floor) {
                // Only a split strictly better than the taped choice matters: it seeds the bound.
                const split s = best_split_of(l, b, guess, {best, 0}, floor, work_, &left_steps, &right_steps);
                if (s.left != 0)
                    guess = s.left;
                best = s.evaluations;
            }
            row[l] = best == UINT64_MAX ? infeasible : static_cast<std::uint32_t>(best);
            note(l);
            if (work_ > work_limit) {
                complete_ = false;
                return;
            }
        }
    }
}

void taped_table::increments::reset(std::size_t width)
{
    levels_.resize(static_cast<std::size_t>(std::bit_width(width)));
    for (auto& level : levels_)
        level.assign(width, 1);
}

void taped_table::increments::set(std::size_t i, std::uint32_t increment)
{
    levels_[0][i] = increment;
    for (std::size_t k = 1; k < levels_.size() && i + 1 >= (std::size_t{1} << k); ++k) {
        const std::size_t start = i + 1 - (std::size_t{1} << k);
        levels_[k][start] = std::min(levels_[k - 1][start], levels_[k - 1][start + (std::size_t{1} << (k - 1))]);
    }
}

std::uint32_t taped_table::increments::least(std::size_t x, std::size_t y) const
{
    const auto k = static_cast<std::size_t>(std::bit_width(y - x + 1) - 1);
    return std::min(levels_[k][x], levels_[k][y + 1 - (std::size_t{1} << k)]);
}

taped_table::split taped_table::best_split_of(step_t l, slot_t b, step_t guess, split incumbent, std::uint64_t enough,
                                              std::uint64_t& priced, const increments* left_steps,
                                              const increments* right_steps) const
{
    const std::uint32_t* left = rows_.data() + static_cast<std::size_t>(b) * width_;
    const std::uint32_t* right = rows_.data() + static_cast<std::size_t>(b - 1) * width_;
    auto cost = [&](step_t j) -> std::uint64_t {
        if (right[l - j] == infeasible || left[j] == infeasible)
            return UINT64_MAX;
        return static_cast<std::uint64_t>(j) + left[j] + right[l - j];
    };
    split best = incumbent;
    if (guess >= 1 && guess < l)
        if (const std::uint64_t c = cost(guess); c < best.evaluations)
            best = {c, guess};
    struct range {
        step_t from, to;
    };
    std::array<range, 130> stack{}; // depth <= 2 log2(T) + 2: halving intervals
    std::size_t top = 0;
    stack[top++] = {1, l - 1};
    while (top > 0 && best.evaluations > enough) {
        const range r = stack[--top];
        priced += 4; // a range costs about four split points: its bound reads four range minima
        if (right[l - r.to] == infeasible || left[r.from] == infeasible)
            continue; // no j here is feasible (infeasibility is monotone in l)
        // E(j, b) >= E(from, b) + (j - from) and E(l-j, b-1) >= E(l-to, b-1) + (to - j) on [from, to]
        std::uint64_t bound = static_cast<std::uint64_t>(r.to) + left[r.from] + right[l - r.to];
        if (left_steps != nullptr && r.to > r.from) {
            // With the least increments mL of E(., b) over from+1..to and mR of E(., b-1) over l-to+1..l-from,
            // the cost j + E(j, b) + E(l-j, b-1) is at least a line in j through the interval: its smaller end.
            const auto from = static_cast<std::uint64_t>(r.from);
            const auto to = static_cast<std::uint64_t>(r.to);
            const std::uint64_t ml =
                left_steps->least(static_cast<std::size_t>(r.from + 1), static_cast<std::size_t>(r.to));
            const std::uint64_t mr =
                right_steps->least(static_cast<std::size_t>(l - r.to + 1), static_cast<std::size_t>(l - r.from));
            bound = left[r.from] + static_cast<std::uint64_t>(right[l - r.to]) +
                    std::min(from + mr * (to - from), to + ml * (to - from));
        }
        if (bound >= best.evaluations)
            continue;
        if (r.to - r.from < 8) {
            priced += static_cast<std::uint64_t>(r.to - r.from + 1);
            for (step_t j = r.from; j <= r.to; ++j)
                if (const std::uint64_t c = cost(j); c < best.evaluations)
                    best = {c, j};
            continue;
        }
        const step_t mid = r.from + (r.to - r.from) / 2;
        if (best.left <= mid) { // the half nearer the best so far first
            stack[top++] = {mid + 1, r.to};
            stack[top++] = {r.from, mid};
        } else {
            stack[top++] = {r.from, mid};
            stack[top++] = {mid + 1, r.to};
        }
    }
    return best;
}

bool taped_table::taped_is_best(step_t l, slot_t b) const
{
    return b >= tape_units_ && at(l - 1, b - tape_units_) != infeasible &&
           1 + static_cast<std::uint64_t>(at(l - 1, b - tape_units_)) == at(l, b);
}

step_t taped_table::best_split(step_t l, slot_t b) const
{
    // at(l, b) is the optimum: the search stops at the first split that reaches it.
    std::uint64_t priced = 0;
    return best_split_of(l, b, 1, {UINT64_MAX, 0}, at(l, b), priced).left;
}

} // namespace remat::detail
