// remat/store/detail/store_capacity.hpp — the stores' checks of the capacity they are given, with
// messages that name the value as the caller gave it (-1 slots, not 18446744073709551615).
#pragma once

#include "remat/error.hpp"
#include "remat/store/storage_level.hpp"
#include "remat/types.hpp"

#include <cstdint>
#include <string>

namespace remat::detail {

/// "12", or "unlimited" for level_capacity::unlimited_slots.
[[nodiscard]] inline std::string describe_slots(slot_t slots)
{
    return slots == level_capacity::unlimited_slots ? std::string("unlimited") : std::to_string(slots);
}

/// "4096", or "unlimited" for level_capacity::unlimited_bytes.
[[nodiscard]] inline std::string describe_bytes(std::uint64_t bytes)
{
    return bytes == level_capacity::unlimited_bytes ? std::string("unlimited") : std::to_string(bytes);
}

/// A slot count given on its own, checked before it becomes a capacity: throws argument_error naming
/// the count for one below 1.
[[nodiscard]] inline slot_t require_slot_count(slot_t slots, const char* store)
{
    if (slots < 1)
        throw argument_error(std::string(store) + " needs at least 1 slot, got " + std::to_string(slots));
    return slots;
}

/// Throws argument_error when `c` has room for no snapshot (fewer than one slot, or zero bytes).
inline void require_room(const level_capacity& c, const char* store)
{
    if (c.slots < 1 || c.bytes == 0)
        throw argument_error(std::string(store) + " needs room for at least one snapshot, got " +
                             describe_slots(c.slots) + " slots and " + describe_bytes(c.bytes) + " bytes");
}

} // namespace remat::detail
