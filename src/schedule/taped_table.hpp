// The optimum of remat::taped_revolve for every segment: evaluations(l, b), the fewest forward
// evaluations that reverse l steps from a current, unstored x_s with b units free (the segment's own
// snapshot of x_s, if it stores one, inside b; a reverse from a state holding rerun_units while it runs,
// its input among them). See remat/schedule/taped_revolve.hpp for the model.
#pragma once

#include "remat/types.hpp"

#include <cstdint>
#include <vector>

namespace remat::detail {

class taped_table {
public:
    static constexpr std::uint32_t infeasible = UINT32_MAX;

    /// Fills the table for l <= steps, b <= units (units already below (steps-1) x tape_units + rerun_units),
    /// or stops once its work (entries filled plus split points priced) passes `work_limit`: complete() tells.
    taped_table(step_t steps, slot_t units, slot_t tape_units, slot_t rerun_units = 0,
                std::uint64_t work_limit = UINT64_MAX);

    /// Whether every entry was filled within the work limit.
    [[nodiscard]] bool complete() const noexcept { return complete_; }
    /// Entries filled, split points priced and 4 per range of splits bounded: a deterministic measure of
    /// the planning time.
    [[nodiscard]] std::uint64_t work() const noexcept { return work_; }

    [[nodiscard]] std::uint32_t at(step_t l, slot_t b) const
    {
        return rows_[static_cast<std::size_t>(b) * width_ + static_cast<std::size_t>(l)];
    }
    /// Whether the taped first step reaches the optimum of (l, b), l >= 2.
    [[nodiscard]] bool taped_is_best(step_t l, slot_t b) const;
    /// A left-part length j of an optimal split of (l, b), l >= 2 (x_s stored, j steps advanced, the right
    /// part with b - 1, then the left part with b); only when taped_is_best is false.
    [[nodiscard]] step_t best_split(step_t l, slot_t b) const;

private:
    // Range minima of one row's increments E(i, b) - E(i-1, b) (a sparse table), for the search's bounds.
    class increments {
    public:
        void reset(std::size_t width);
        void set(std::size_t i, std::uint32_t increment);
        /// The least increment at indices x..y (x <= y).
        [[nodiscard]] std::uint32_t least(std::size_t x, std::size_t y) const;

    private:
        std::vector<std::vector<std::uint32_t>> levels_; // levels_[k][i]: the least over i .. i + 2^k - 1
    };

    struct split {
        std::uint64_t evaluations;
        step_t left; // 0: no split beats the incumbent
    };
    // The fewest evaluations of a split of (l, b) that beats `incumbent` and a j reaching it (else the
    // incumbent), `guess` tried first; stops early at a split costing `enough` or less (a lower bound).
    // Adds the split points and ranges it prices to `priced`.
    // With `left_steps` and `right_steps` (the increments of rows b and b-1), a tighter bound (below).
    [[nodiscard]] split best_split_of(step_t l, slot_t b, step_t guess, split incumbent, std::uint64_t enough,
                                      std::uint64_t& priced, const increments* left_steps = nullptr,
                                      const increments* right_steps = nullptr) const;

    std::size_t width_;
    slot_t tape_units_;
    std::vector<std::uint32_t> rows_; // row b, column l
    std::uint64_t work_ = 0;
    bool complete_ = true;
};

} // namespace remat::detail
