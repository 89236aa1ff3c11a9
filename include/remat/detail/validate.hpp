// remat/detail/validate.hpp — argument checks shared by the schedules, each naming the bad value.
#pragma once

#include "remat/error.hpp"
#include "remat/schedule/action.hpp"

#include <string>

namespace remat::detail {

inline void require_positive_steps(step_t steps)
{
    if (steps < 1)
        throw argument_error("steps must be at least 1, got " + std::to_string(steps));
}

inline void require_positive_slots(slot_t slots)
{
    if (slots < 1)
        throw argument_error("slots must be at least 1, got " + std::to_string(slots));
}

} // namespace remat::detail
