// A schedule given as a list of actions (tests only), and a way to spread a one-level schedule over two
// levels: slots [0, fast) stay on level 0, the rest move to level 1.
#pragma once

#include "remat/schedule/action.hpp"
#include "remat/schedule/cost.hpp"

#include <utility>
#include <vector>

namespace remat::test {

class vector_schedule {
public:
    vector_schedule(step_t steps, std::vector<action> actions) : steps_(steps), actions_(std::move(actions)) {}
    [[nodiscard]] step_t steps() const { return steps_; }
    [[nodiscard]] schedule_cost cost() const { return {}; }
    [[nodiscard]] const std::vector<action>& actions() const { return actions_; }

    class cursor_type {
    public:
        cursor_type() = default;
        explicit cursor_type(const std::vector<action>* a) : actions_(a) {}
        bool next(action& out)
        {
            if (actions_ == nullptr || i_ == actions_->size())
                return false;
            out = (*actions_)[i_++];
            return true;
        }

    private:
        const std::vector<action>* actions_ = nullptr;
        std::size_t i_ = 0;
    };
    [[nodiscard]] cursor_type cursor() const { return cursor_type(&actions_); }

private:
    step_t steps_;
    std::vector<action> actions_;
};

/// Moves slots >= `fast` of level 0 to level 1 (slot - fast).
template <class Schedule>
vector_schedule split_levels(const Schedule& plan, slot_t fast)
{
    std::vector<action> out;
    for (action a : plan) {
        std::visit(
            [&](auto& x) {
                if constexpr (requires {
                                  x.slot;
                                  x.level;
                              }) {
                    if (x.slot >= fast) {
                        x.level = 1;
                        x.slot -= fast;
                    }
                }
            },
            a);
        out.push_back(a);
    }
    return {plan.steps(), std::move(out)};
}

} // namespace remat::test
