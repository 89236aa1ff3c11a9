// Independent references for heterogeneous chains (tests only): a replay that checks any action stream
// against the model of remat/schedule/chain_model.hpp and prices it, and the brute-force optimum over
// every legal action sequence. Neither knows how remat::chain plans.
#pragma once

#include "remat/schedule/action.hpp"
#include "remat/schedule/chain_model.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace remat::test {

struct chain_replay {
    std::optional<std::string> error; ///< the first illegal action, or what was left undone
    double cost = 0;                  ///< f_k of every advanced step + every b_k
    std::uint64_t peak_bytes = 0;
    std::uint64_t forward_steps = 0;
    std::uint64_t stores = 0;
    std::uint64_t restores = 0;
};

/// Replays `actions` on one level of unlimited slots, tracking the bytes of every held snapshot.
chain_replay replay_chain(const chain_model& chain, const std::vector<action>& actions);

/// Replays a schedule (anything iterable over actions).
template <class Schedule>
chain_replay replay_chain_plan(const chain_model& chain, const Schedule& plan)
{
    std::vector<action> actions;
    for (const action& a : plan)
        actions.push_back(a);
    return replay_chain(chain, actions);
}

/// The least cost of any legal action sequence whose peak stays within `budget` (Dijkstra over the
/// current state, the set of held snapshots and the next step to reverse); infinity when none fits.
/// `persistent`: only sequences that keep every snapshot x_j until step j is reversed (x_j may be freed
/// once it is restored for the adjoint of step j, or later). Exponential: T <= 12 ((T+1)^2 2^T states).
double brute_force_chain_optimum(const chain_model& chain, std::uint64_t budget, bool persistent);

} // namespace remat::test
