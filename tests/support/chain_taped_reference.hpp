// Independent references for heterogeneous chains with taped advances (tests only; the model of
// remat/schedule/chain_taped.hpp): a replay that checks an action stream and prices it, and the optimum
// over every legal action sequence by exhaustive search. Neither knows how remat::plan_taped_chain plans.
#pragma once

#include "chain_reference.hpp"

namespace remat::test {

/// Replays `actions` (level 0, unlimited slots) under the taped model: snapshots, tapes held from `advance k
/// k+1 tape` to `reverse k`, the current state and running steps.
chain_replay replay_taped_chain(const chain_model& chain, const std::vector<action>& actions);

/// The least cost of any legal action sequence within `budget` (Dijkstra over the current state, the next
/// step to reverse, the held snapshots and the held tapes) among those that keep every x_j, in a snapshot
/// or in step j's tape, until step j is reversed; infinity when none fits. T <= 7.
double brute_force_taped_chain_optimum(const chain_model& chain, std::uint64_t budget);

} // namespace remat::test
