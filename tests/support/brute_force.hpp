// Reference optima computed by brute force (tests only), independent of the schedule generators.
#pragma once

#include "remat/schedule/action.hpp"

#include <cstdint>
#include <utility>
#include <vector>

namespace remat::test {

/// (forward steps, stores), compared lexicographically: fewest forward steps, then fewest stores.
using forward_and_stores = std::pair<std::uint64_t, std::uint64_t>;

/// Dynamic program over every way to split the loop (store x_m, reverse the right part with one slot
/// less, then the left part): the lexicographic optimum for all T <= max_steps, s <= max_slots.
/// O(max_steps^2 * max_slots). table[s][T] counts the store of x_0.
class split_optimum {
public:
    split_optimum(step_t max_steps, slot_t max_slots);
    [[nodiscard]] forward_and_stores operator()(step_t steps, slot_t slots) const;

private:
    std::vector<std::vector<forward_and_stores>> inner_; // x_0 already stored
};

/// Shortest path over *all* action sequences (any advance, store, restore, free and reverse that is
/// legal), with x_0 the current state at the start: the true lexicographic optimum, assuming no split
/// structure at all. Exponential; meant for T <= 10 and s <= 4.
forward_and_stores general_optimum(step_t steps, slot_t slots);

} // namespace remat::test
