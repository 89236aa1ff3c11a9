// The replay loop every simulator shares (simulator.hpp, taped_simulator.hpp): feeds a plan's actions (or a
// program's printed ones) to the simulator and names the first illegal one by its index and text.
#pragma once

#include "remat/schedule/action.hpp"

#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

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

/// The actions a program printed, one a line (`remat plan --format actions`).
inline std::vector<action> parse_actions(const std::string& printed)
{
    std::vector<action> actions;
    std::istringstream lines(printed);
    for (std::string line; std::getline(lines, line);)
        actions.push_back(parse_action(line));
    return actions;
}

/// replay_actions for the actions a program printed.
template <class Simulator, class Counts>
std::optional<std::string> replay_printed(Simulator& sim, const std::string& printed, Counts& counts)
{
    return replay_actions(sim, parse_actions(printed), counts);
}

} // namespace remat::test
