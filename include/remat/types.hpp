// remat/types.hpp — the index types every part of remat shares: steps, slots and storage levels.
#pragma once

#include <cstdint>

namespace remat {

/// Step index k of a loop of T steps, 0 <= k < T. Always 64-bit: T may be up to 2^63-1.
using step_t = std::int64_t;
/// Slot index within one storage level.
using slot_t = std::int64_t;
/// Storage level index; 0 is the fastest level.
using level_t = std::int32_t;

} // namespace remat
