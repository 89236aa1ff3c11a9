// A second dynamic program for heterogeneous chains (internal), for chain::options::non_persistent: the
// persistent recurrence of chain_plan.hpp plus one kind of split in which a checkpoint is freed at its last
// restore and its own step reversed later from the enclosing checkpoint (docs/heterogeneous.md, "What is
// exact, and what is not"). Plain tables, for small chains only; the plan is written out as actions.
#pragma once

#include "remat/schedule/action.hpp"
#include "remat/schedule/chain_model.hpp"

#include <cstdint>
#include <optional>
#include <vector>

namespace remat::detail {

/// The optimal plan of the extended recurrence for `chain` within `units` units of `granularity` bytes
/// (sizes rounded up, as the main tables do), or nothing when no plan fits, or when its two tables would
/// hold more than `max_entries` entries each (T (T + 1) / 2 x (U + 1), 8 bytes an entry) or its work (2T
/// splits an entry at most) exceed `max_work`.
std::optional<std::vector<action>> plan_refetch(const chain_model& chain, std::uint64_t granularity,
                                                std::uint64_t units, std::uint64_t max_entries, std::uint64_t max_work);

} // namespace remat::detail
