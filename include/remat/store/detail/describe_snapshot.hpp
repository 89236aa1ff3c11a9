// remat/store/detail/describe_snapshot.hpp — what a slot holds, as the stores' error messages say it.
#pragma once

#include "remat/types.hpp"

#include <string>

namespace remat::detail {

/// "x_1200", or "no snapshot" for a step < 0 (an empty slot).
[[nodiscard]] inline std::string describe_snapshot(step_t step)
{
    return step < 0 ? std::string("no snapshot") : "x_" + std::to_string(step);
}

} // namespace remat::detail
