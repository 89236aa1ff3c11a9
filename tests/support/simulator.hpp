// An independent replay of an action stream (tests only). It knows nothing of how schedules are
// generated: it tracks which x_k each slot holds and what the current state is, and checks that
//  - advances start from the current state and never pass the next step to reverse,
//  - stores go into free slots within each level's capacity, restores read what was stored there,
//  - frees release occupied slots, and nothing is left stored at the end,
//  - every step is reversed exactly once, in the order T-1..0, with the current state x_K,
// and it counts what happened.
#pragma once

#include "replay_actions.hpp"

#include "remat/schedule/action.hpp"
#include "remat/types.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace remat::test {

struct replay_counts {
    std::uint64_t forward_steps = 0;
    std::uint64_t reverse_steps = 0;
    std::uint64_t stores = 0;
    std::uint64_t restores = 0;
    slot_t peak_slots = 0; ///< all levels together
    std::uint64_t actions = 0;
    std::vector<std::uint64_t> stores_per_level;
    std::vector<std::uint64_t> restores_per_level;
    std::vector<slot_t> peak_per_level;
    std::uint64_t max_advances_of_one_step = 0; ///< only when tracked (small T)
};

class simulator {
public:
    /// `capacity[L]` is the number of slots of level L; `track_steps` records per-step advance counts.
    simulator(step_t steps, std::vector<slot_t> capacity, bool track_steps = true);

    /// Applies one action; returns an error message when it is illegal (and then stops accepting).
    std::optional<std::string> apply(const action& a);
    /// After the last action: returns an error when steps are left unreversed or slots still held.
    std::optional<std::string> finish();
    [[nodiscard]] const replay_counts& counts() const { return counts_; }

private:
    step_t steps_;
    std::vector<slot_t> capacity_;
    std::vector<std::vector<std::optional<step_t>>> slots_; // grown on demand up to capacity
    std::vector<slot_t> occupied_;
    slot_t occupied_total_ = 0;
    std::optional<step_t> current_ = 0; // x_0 is the current state at the start
    step_t next_reverse_;
    std::vector<std::uint32_t> advances_;
    bool broken_ = false;
    replay_counts counts_;
};

/// Replays a whole schedule; BOOST-free so it can be used anywhere. Returns the first error, if any.
template <class Schedule>
std::optional<std::string> replay(const Schedule& plan, std::vector<slot_t> capacity, replay_counts& counts,
                                  bool track_steps = true)
{
    simulator sim(plan.steps(), std::move(capacity), track_steps);
    return replay_actions(sim, plan, counts);
}

} // namespace remat::test
