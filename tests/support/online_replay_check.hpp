// Replays a known-T run of an online schedule (remat::online_replay_of) through the independent simulator.
// With online_end::after_last_step the forward sweep's final `advance T-1 T` (the loop ran the step before
// learning that it had ended) is counted but not shown to the simulator, which knows nothing of x_T.
#pragma once

#include "remat/schedule/online_replay.hpp"
#include "simulator.hpp"

#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace remat::test {

/// The first illegal action (or what finish() finds), or nothing; `counts` gets what the replay did.
template <class OnlineReplay>
std::optional<std::string> check_online_replay(const OnlineReplay& plan, std::vector<slot_t> capacity,
                                               replay_counts& counts, bool track_steps = true)
{
    simulator sim(plan.steps(), std::move(capacity), track_steps);
    std::uint64_t index = 0;
    std::uint64_t beyond = 0;
    for (const action& a : plan) {
        if (const auto* x = std::get_if<advance>(&a); x != nullptr && x->to == plan.steps()) {
            if (plan.convention() != online_end::after_last_step)
                return "action " + std::to_string(index) + " (" + to_string(a) + "): advance to x_T with at_last_step";
            if (x->from != plan.steps() - 1)
                return "action " + std::to_string(index) + " (" + to_string(a) + "): reaches x_T not from x_{T-1}";
            ++beyond;
            continue;
        }
        if (auto e = sim.apply(a))
            return "action " + std::to_string(index) + " (" + to_string(a) + "): " + *e;
        ++index;
    }
    auto e = sim.finish();
    counts = sim.counts();
    counts.forward_steps += beyond;
    return e;
}

} // namespace remat::test
