// remat/store/detail/store_capacity.hpp — the stores' checks of the capacity they are given, with
// messages that name the value as the caller gave it (-1 slots, not 18446744073709551615).
#pragma once

#include "remat/error.hpp"
#include "remat/store/snapshot_store.hpp"
#include "remat/types.hpp"

#include <cstdint>
#include <string>

namespace remat::detail {

/// "12", or "unlimited" for level_capacity::unlimited.
[[nodiscard]] inline std::string describe_limit(std::uint64_t limit)
{
    return limit == level_capacity::unlimited ? std::string("unlimited") : std::to_string(limit);
}

/// A slot count given as slot_t, checked before it becomes a capacity: throws argument_error naming the
/// count for one below 1.
[[nodiscard]] inline std::uint64_t require_slot_count(slot_t slots, const char* store)
{
    if (slots < 1)
        throw argument_error(std::string(store) + " needs at least 1 slot, got " + std::to_string(slots));
    return static_cast<std::uint64_t>(slots);
}

/// Throws argument_error when `c` has room for no snapshot (zero slots or zero bytes).
inline void require_room(const level_capacity& c, const char* store)
{
    if (c.slots == 0 || c.bytes == 0)
        throw argument_error(std::string(store) + " needs room for at least one snapshot, got " +
                             describe_limit(c.slots) + " slots and " + describe_limit(c.bytes) + " bytes");
}

} // namespace remat::detail
