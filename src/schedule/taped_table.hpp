// The optimum of remat::taped_revolve for every segment: evaluations(l, b), the fewest forward
// evaluations that reverse l steps from a current, unstored x_s with b units free (the segment's own
// snapshot of x_s, if it stores one, inside b). See remat/schedule/taped_revolve.hpp for the model.
#pragma once

#include "remat/types.hpp"

#include <cstdint>
#include <vector>

namespace remat::detail {

class taped_table {
public:
    static constexpr std::uint32_t infeasible = UINT32_MAX;

    /// Fills the table for l <= steps, b <= units (units already capped at (steps-1) x tape_units).
    taped_table(step_t steps, slot_t units, slot_t tape_units);

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
    // The fewest evaluations of a split of (l, b) and a j reaching it; `guess` seeds the bound.
    struct split {
        std::uint64_t evaluations;
        step_t left;
    };
    [[nodiscard]] split best_split_of(step_t l, slot_t b, step_t guess) const;

    std::size_t width_;
    slot_t tape_units_;
    std::vector<std::uint32_t> rows_; // row b, column l
};

} // namespace remat::detail
