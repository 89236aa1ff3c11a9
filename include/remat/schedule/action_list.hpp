// remat/schedule/action_list.hpp — a cursor over a plan's actions written out at construction, shared by
// the copies of the plan (remat::taped_revolve, remat::taped_uniform, remat::listed_plan).
#pragma once

#include "remat/schedule/action.hpp"

#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

namespace remat {

/// One pass over a list of actions; copies of a plan share the list.
class action_list_cursor {
public:
    action_list_cursor() = default;
    explicit action_list_cursor(std::shared_ptr<const std::vector<action>> actions) : actions_(std::move(actions)) {}

    bool next(action& out)
    {
        if (actions_ == nullptr || next_ == actions_->size())
            return false;
        out = (*actions_)[next_++];
        return true;
    }

private:
    std::shared_ptr<const std::vector<action>> actions_;
    std::size_t next_ = 0;
};

} // namespace remat
