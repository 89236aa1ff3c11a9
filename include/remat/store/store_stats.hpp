// remat/store/store_stats.hpp — what a store did, per level.
#pragma once

#include "remat/types.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace remat {

/// Counters of one storage level since the store was made.
struct level_stats {
    std::string name;           ///< "host", "disk", "device", ...
    std::uint64_t stores = 0;   ///< snapshots written into the level
    std::uint64_t restores = 0; ///< snapshots read from it
    std::uint64_t bytes_written = 0;
    std::uint64_t bytes_read = 0;
    slot_t slots_in_use = 0;        ///< now
    std::uint64_t bytes_in_use = 0; ///< now: bytes of the snapshots held
    slot_t peak_slots = 0;
    std::uint64_t peak_bytes = 0;
    double wait_seconds = 0;       ///< time the caller waited for this level's transfers
    double overlapped_seconds = 0; ///< transfer time hidden behind the caller's compute
};

/// Counters of a whole store, level 0 first.
struct store_stats {
    std::vector<level_stats> levels;
};

} // namespace remat
