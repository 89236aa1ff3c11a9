// An independent replay of a schedule that may hold tapes (tests only). It knows nothing of how the plan
// was made: it tracks the snapshots (one level), the tapes and the current state, and checks that
//  - advances start from the current state; plain ones never pass the next step to reverse; taped ones
//    run one step K <= the next step to reverse and K's tape is not held already,
//  - snapshots + tape_units x tapes never exceed `units` (the current state is not counted), nor, while a
//    reverse K from a state re-runs step K, do they with rerun_units more (less x_K's snapshot if held:
//    the re-run's input is that state),
//  - restores read what was stored, frees release occupied slots, nothing is held at the end,
//  - every step is reversed once, in the order T-1..0, with x_K current or K's tape held,
// and it counts forward evaluations (advanced steps, plus one re-run per reverse without a tape).
#pragma once

#include "replay_actions.hpp"

#include "remat/schedule/action.hpp"
#include "remat/types.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

namespace remat::test {

struct taped_counts {
    std::uint64_t forward_steps = 0; ///< steps run by advances, taped ones included
    std::uint64_t taped_steps = 0;   ///< taped advances
    std::uint64_t reruns = 0;        ///< reverses from a state (each re-runs its step)
    std::uint64_t tape_reverses = 0; ///< reverses through a tape
    std::uint64_t stores = 0;
    std::uint64_t restores = 0;
    slot_t peak_slots = 0;
    std::uint64_t peak_tapes = 0;
    slot_t peak_units = 0;
    [[nodiscard]] std::uint64_t evaluations() const { return forward_steps + reruns; }
};

class taped_simulator {
public:
    taped_simulator(step_t steps, slot_t units, slot_t tape_units, slot_t rerun_units = 0);
    /// Applies one action; returns why it is illegal (and then accepts nothing more).
    std::optional<std::string> apply(const action& a);
    /// After the last action: why the run is incomplete, if it is.
    std::optional<std::string> finish();
    [[nodiscard]] const taped_counts& counts() const { return counts_; }

private:
    std::optional<std::string> fail(std::string why);
    [[nodiscard]] slot_t held_units() const;

    step_t steps_;
    slot_t units_;
    slot_t tape_units_;
    slot_t rerun_units_;
    std::map<slot_t, step_t> slots_;
    std::set<step_t> tapes_;
    std::optional<step_t> current_ = 0;
    step_t next_reverse_;
    bool broken_ = false;
    taped_counts counts_;
};

/// Replays a whole plan; returns the first error, with the action's index and text.
template <class Schedule>
std::optional<std::string> replay_taped(const Schedule& plan, slot_t units, slot_t tape_units, taped_counts& counts,
                                        slot_t rerun_units = 0)
{
    taped_simulator sim(plan.steps(), units, tape_units, rerun_units);
    return replay_actions(sim, plan, counts);
}

} // namespace remat::test
