// The largest costs a heterogeneous chain's planners can sum (internal): their tables hold float (remat::chain) or
// double (remat::plan_taped_chain) costs, and a cost past that range made every entry infinite, which read as "no
// schedule fits" however large the budget.
#pragma once

#include "remat/schedule/chain_model.hpp"

namespace remat::detail {

/// Throws argument_error where T * (sum of forward costs) + (sum of adjoint costs), which no schedule a planner
/// prices exceeds (no step is advanced more than T times), passes `limit`; `held_as` names the tables' type.
void require_costs_within(const chain_model& chain, double limit, const char* held_as);

} // namespace remat::detail
