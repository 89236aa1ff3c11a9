// Which inner states of a heterogeneous chain are worth least as checkpoints (internal): shared by the greedy
// ranking (chain_greedy.cpp) and the keep options of a block (chain_keep.cpp).
#pragma once

#include "remat/schedule/chain.hpp"

#include <vector>

namespace remat::detail {

/// The states x_k, first < k < last, ordered by the bytes they hold per unit of forward cost that keeping them
/// saves (that of step k - 1, which makes them), most first: the first ones are the ones to drop first. Ties keep
/// the chain's order.
std::vector<step_t> states_by_bytes_per_forward_cost(const chain_model& m, step_t first, step_t last);

} // namespace remat::detail
