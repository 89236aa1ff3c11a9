// The writer behind the plans with taped advances (taped_revolve, taped_uniform): it appends the actions
// and counts what they cost, snapshots and tapes held included, so that each planner only decides.
#pragma once

#include "remat/error.hpp"
#include "remat/schedule/action.hpp"
#include "remat/schedule/cost.hpp"
#include "remat/types.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace remat::detail {

/// Refuses a step cost that is negative or not finite, naming the planner and the argument.
inline void check_step_cost(const char* planner, const char* name, double value)
{
    if (!std::isfinite(value) || value < 0)
        throw argument_error(std::string(planner) + ": " + name + " = " + std::to_string(value) +
                             " (expected a finite cost >= 0)");
}

class taped_plan_builder {
public:
    /// `rerun_units`: what a reverse from a state holds while it runs (its re-run's graph, its input
    /// included, so that x_k's snapshot, if held then, is counted once); 0 leaves it out.
    taped_plan_builder(step_t steps, slot_t tape_units, slot_t rerun_units = 0)
        : steps_(steps), tape_units_(tape_units), rerun_units_(rerun_units),
          actions_(std::make_shared<std::vector<action>>()), advanced_(static_cast<std::size_t>(steps), 0),
          copies_(static_cast<std::size_t>(steps) + 1, 0)
    {
    }

    /// Snapshots held now: the slot the next nested store takes.
    [[nodiscard]] slot_t snapshots_held() const noexcept { return snapshots_; }

    void store(slot_t slot, step_t k)
    {
        actions_->push_back(remat::store{0, slot, k});
        ++cost_.stores;
        ++snapshots_;
        if (static_cast<std::size_t>(slot) >= slot_step_.size())
            slot_step_.resize(static_cast<std::size_t>(slot) + 1, -1);
        slot_step_[static_cast<std::size_t>(slot)] = k;
        ++copies_[static_cast<std::size_t>(k)];
        note_memory();
    }
    void restore(slot_t slot, step_t k)
    {
        actions_->push_back(remat::restore{0, slot, k});
        ++cost_.restores;
    }
    void release(slot_t slot)
    {
        actions_->push_back(free_slot{0, slot});
        --snapshots_;
        --copies_[static_cast<std::size_t>(slot_step_[static_cast<std::size_t>(slot)])];
    }
    /// Steps from..to-1; a taped advance (one step) holds its tape until the step's reverse.
    void advance(step_t from, step_t to, bool taped)
    {
        actions_->push_back(remat::advance{from, to, taped});
        cost_.forward_steps += static_cast<std::uint64_t>(to - from);
        for (step_t k = from; k < to; ++k)
            cost_.repetition = std::max<std::uint64_t>(cost_.repetition, ++advanced_[static_cast<std::size_t>(k)]);
        if (taped) {
            ++cost_.taped_steps;
            ++tapes_;
            note_memory();
        }
    }
    /// `reverse k`, through k's tape when `from_tape`, else from x_k current (a re-run of step k).
    void reverse(step_t k, bool from_tape)
    {
        actions_->push_back(remat::reverse{k});
        if (from_tape) {
            --tapes_;
            return;
        }
        if (rerun_units_ > 0) {
            const bool input_held = copies_[static_cast<std::size_t>(k)] > 0;
            peak_units_ = std::max(peak_units_, units_held() + rerun_units_ - (input_held ? 1 : 0));
        }
    }

    struct plan {
        schedule_cost cost;
        std::uint64_t evaluations = 0; // advances plus the re-run of each reverse without a tape
        slot_t peak_units = 0;         // snapshots + tape_units x tapes (+ a re-run's units), the most held at once
        std::shared_ptr<const std::vector<action>> actions;
    };

    /// Completes the counts; the cost is priced F per evaluation and B per reverse.
    plan finish(double forward_cost, double backward_cost)
    {
        plan p;
        p.cost = cost_;
        p.cost.steps = steps_;
        p.cost.reverse_steps = static_cast<std::uint64_t>(steps_);
        p.cost.levels = {level_cost{p.cost.stores, p.cost.restores, p.cost.peak_slots}};
        p.evaluations = p.cost.forward_steps + static_cast<std::uint64_t>(steps_) - p.cost.taped_steps;
        p.cost.predicted_cost =
            forward_cost * static_cast<double>(p.evaluations) + backward_cost * static_cast<double>(steps_);
        p.peak_units = peak_units_;
        actions_->shrink_to_fit();
        p.actions = std::move(actions_);
        return p;
    }

private:
    void note_memory()
    {
        cost_.peak_slots = std::max(cost_.peak_slots, snapshots_);
        cost_.peak_tapes = std::max(cost_.peak_tapes, static_cast<std::uint64_t>(tapes_));
        peak_units_ = std::max(peak_units_, units_held());
    }
    [[nodiscard]] slot_t units_held() const noexcept { return snapshots_ + tapes_ * tape_units_; }

    step_t steps_;
    slot_t tape_units_;
    slot_t rerun_units_;
    std::shared_ptr<std::vector<action>> actions_;
    std::vector<std::uint32_t> advanced_; // times each step ran, for cost.repetition
    schedule_cost cost_;
    slot_t snapshots_ = 0;
    std::vector<step_t> slot_step_;     // slot -> the step whose state it holds
    std::vector<std::uint32_t> copies_; // step -> the slots holding its state
    slot_t tapes_ = 0;
    slot_t peak_units_ = 0;
};

} // namespace remat::detail
