// The replay loop every simulator shares (simulator.hpp, taped_simulator.hpp): feeds a plan's actions to
// the simulator and names the first illegal one by its index and text.
#pragma once

#include "remat/schedule/action.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace remat::test {

/// `Simulator` has apply(action) and finish(), each returning an error if any, and counts(). Returns the first
/// error; `counts` is set only when every action was accepted.
template <class Simulator, class Schedule, class Counts>
std::optional<std::string> replay_actions(Simulator& sim, const Schedule& plan, Counts& counts)
{
    std::uint64_t index = 0;
    for (const action& a : plan) {
        if (auto e = sim.apply(a))
            return "action " + std::to_string(index) + " (" + to_string(a) + "): " + *e;
        ++index;
    }
    auto e = sim.finish();
    counts = sim.counts();
    return e;
}

} // namespace remat::test
