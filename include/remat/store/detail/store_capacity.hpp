// remat/store/detail/store_capacity.hpp — the stores' checks of the capacity they are given, with
// messages that name the value as the caller gave it (-1 slots, not 18446744073709551615).
#pragma once

#include "remat/error.hpp"
#include "remat/store/storage_level.hpp"
#include "remat/types.hpp"

#include <cstddef>
#include <cstdint>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

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

/// Grows a level's table of slots so that `slot` (>= 0, within the capacity) exists. A level of
/// unlimited slots may be handed any index; one whose table does not fit in memory is a capacity_error
/// naming the slot, not a bare std::length_error or std::bad_alloc (the table is then unchanged).
template <class Entry>
void grow_slot_table(std::vector<Entry>& table, slot_t slot, const char* level)
{
    try {
        table.resize(static_cast<std::size_t>(slot) + 1);
    } catch (const std::length_error&) {
        throw capacity_error("slot " + std::to_string(slot) + " of the " + level +
                             " level needs a table of that many slots, more than memory holds");
    } catch (const std::bad_alloc&) {
        throw capacity_error("slot " + std::to_string(slot) + " of the " + level +
                             " level needs a table of that many slots, more than memory holds");
    }
}

} // namespace remat::detail
