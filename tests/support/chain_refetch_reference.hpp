// The recurrence of remat::chain at one byte per unit, memoised, with and without the non-persistent split
// of chain::options::non_persistent (tests and bench/chain_gap only; written apart from the planner's tables).
#pragma once

#include "remat/schedule/chain_model.hpp"

#include <cstdint>

namespace remat::test {

/// The least cost of the persistent recurrence (`refetch` false) or of the recurrence extended by the split
/// "advance j steps, reverse the right part but its first step (its start freed at its last restore), then
/// the left part one step longer" (`refetch` true), at one byte per unit; infinity when none fits.
double refetch_recurrence_cost(const chain_model& chain, std::uint64_t budget, bool refetch);

} // namespace remat::test
