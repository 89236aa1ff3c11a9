// remat/store/host_store.hpp — snapshots in host RAM: one level, capacity in slots and/or bytes.
#pragma once

#include "remat/schedule/action.hpp"
#include "remat/store/detail/store_capacity.hpp"
#include "remat/store/snapshot_store.hpp"
#include "remat/store/snapshot_view.hpp"
#include "remat/store/store_stats.hpp"

#include <cstddef>
#include <cstdint>
#include <memory_resource>
#include <vector>

namespace remat {

/// A store with one level of snapshots in host memory. Slot buffers are allocated on a slot's first
/// write and reused after, so a run allocates nothing per step once every slot has been used. Not
/// thread-safe: one driver uses it at a time.
///
///     remat::host_store store(10);                                   // 10 slots
///     remat::host_store budget({.slots = remat::level_capacity::unlimited, .bytes = 1 << 30});
///     remat::run(remat::revolve(T, 10), store, x, forward, adjoint);
class host_store {
public:
    struct options {
        /// Where slot buffers come from (pinned memory under CUDA, for instance).
        std::pmr::memory_resource* memory = std::pmr::new_delete_resource();
        /// Copies into and out of the slots; host_copy unless device states are snapshotted.
        byte_copier copy = host_copy;
        /// Level name in reports.
        const char* name = "host";
    };

    /// Throws remat::argument_error when both limits are zero or slots is zero.
    explicit host_store(level_capacity capacity, options opts);
    explicit host_store(level_capacity capacity) : host_store(capacity, options{}) {}
    /// `slots` slots (>= 1; a negative count is refused, not wrapped).
    explicit host_store(slot_t slots) : host_store(slots, options{}) {}
    /// `slots` slots with the given options, e.g. pinned memory and remat::cuda::copy_bytes for device
    /// states: `host_store(64, {.memory = &pinned, .copy = remat::cuda::copy_bytes})`.
    host_store(slot_t slots, options opts)
        : host_store(level_capacity{detail::require_slot_count(slots, "host_store"), level_capacity::unlimited}, opts)
    {
    }
    ~host_store();
    host_store(const host_store&) = delete;
    host_store& operator=(const host_store&) = delete;
    host_store(host_store&&) noexcept;
    host_store& operator=(host_store&&) noexcept;

    /// RAM needs no read-ahead: the driver skips its lookahead for this store.
    static constexpr bool prefetches = false;

    [[nodiscard]] level_t level_count() const noexcept { return 1; }
    [[nodiscard]] level_capacity capacity(level_t level) const;
    /// Throws capacity_error when the slot is outside the capacity, the bytes would exceed it, or the memory
    /// resource cannot allocate the slot (out of memory; the slot is left as it was).
    void write(level_t level, slot_t slot, step_t step, const_bytes src);
    void read(level_t level, slot_t slot, step_t step, mutable_bytes dst);
    void release(level_t level, slot_t slot);
    void release_all() noexcept;
    void prefetch(level_t, slot_t, step_t) noexcept {}
    [[nodiscard]] std::size_t snapshot_bytes(level_t level, slot_t slot) const;
    [[nodiscard]] store_stats stats() const { return {{stats_}}; }

    /// Returns the memory of every slot to the resource (the store stays usable).
    void shrink() noexcept;

private:
    struct slot_entry {
        std::byte* data = nullptr;
        std::size_t allocated = 0;
        std::size_t size = 0;
        step_t step = -1; // -1: empty
    };
    slot_entry& entry(level_t level, slot_t slot, bool grow);
    slot_entry& entry_outside(level_t level, slot_t slot, bool grow);
    void deallocate(slot_entry& e) noexcept;

    level_capacity capacity_;
    options options_;
    std::vector<slot_entry> slots_;
    std::uint64_t allocated_bytes_ = 0;
    level_stats stats_;
};

} // namespace remat
