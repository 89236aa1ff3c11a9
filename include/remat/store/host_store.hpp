// remat/store/host_store.hpp — snapshots in host RAM: one level, capacity in slots and/or bytes.
#pragma once

#include "remat/store/detail/part_layout.hpp"
#include "remat/store/detail/store_capacity.hpp"
#include "remat/store/detail/use_copier.hpp"
#include "remat/store/level_accounting.hpp"
#include "remat/store/snapshot_view.hpp"
#include "remat/store/storage_level.hpp"
#include "remat/store/store_stats.hpp"
#include "remat/types.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory_resource>
#include <span>
#include <vector>

namespace remat {

/// One storage level (remat::storage_level) of snapshots in host memory. Slot buffers are allocated on a slot's first
/// write and reused after, so a run allocates nothing per step once every slot has been used. Not
/// thread-safe: one driver uses it at a time.
///
///     remat::host_store store(10);                                   // 10 slots
///     remat::host_store budget({.bytes = 1 << 30});                   // as many as fit in 1 GiB
///     remat::run(remat::revolve(T, 10), store, x, remat::forward_step(forward), remat::adjoint_step(adjoint));
class host_store {
public:
    struct options {
        /// Where slot buffers come from (pinned memory under CUDA, for instance).
        std::pmr::memory_resource* memory = std::pmr::new_delete_resource();
        /// Copies into and out of the slots; host_copy unless device states are snapshotted (a
        /// tiered_store hands its own copier to the level instead, see use_copier).
        byte_copier copy = host_copy;
        /// Level name in reports.
        const char* name = "host";
    };

    /// Throws remat::argument_error, naming the value, for fewer than one slot or a zero byte budget.
    explicit host_store(level_capacity capacity, options opts);
    explicit host_store(level_capacity capacity) : host_store(capacity, options{}) {}
    /// `slots` slots (>= 1; a negative count is refused, not wrapped).
    explicit host_store(slot_t slots) : host_store(slots, options{}) {}
    /// `slots` slots with the given options, e.g. pinned memory and remat::cuda::copier() for device
    /// states: `host_store(64, {.memory = &pinned, .copy = remat::cuda::copier(stream)})`.
    host_store(slot_t slots, options opts)
        : host_store(level_capacity{.slots = detail::require_slot_count(slots, "host_store")}, opts)
    {
    }
    ~host_store();
    host_store(const host_store&) = delete;
    host_store& operator=(const host_store&) = delete;
    host_store(host_store&&) noexcept;
    host_store& operator=(host_store&&) noexcept;

    /// RAM needs no read-ahead: the driver skips its lookahead for this store.
    static constexpr bool prefetches = false;

    [[nodiscard]] level_capacity capacity() const noexcept { return capacity_; }
    /// Throws schedule_error for a slot outside the capacity or one still occupied, capacity_error when the
    /// bytes would exceed the budget or the memory resource cannot allocate the slot (out of memory; the
    /// slot is left as it was). read() throws schedule_error for a slot that holds no snapshot,
    /// integrity_error when it holds another step or size (docs/driver.md, Errors).
    ///
    /// The single-view write and read are inline: a host state into a slot already allocated for its size,
    /// with the default copier, is one memcpy and the checks of the general path (the slot is free, or
    /// holds this step in one part of this size); anything else takes the general path below.
    void write(slot_t slot, step_t step, const_bytes src)
    {
        slot_entry* e = plain_entry(slot);
        if (e != nullptr && e->step < 0 && step >= 0 && e->allocated >= src.size && src.space == memory_space::host)
            [[likely]]
            return fill(*e, step, src);
        write(slot, step, const_parts(&src, 1));
    }
    void read(slot_t slot, step_t step, mutable_bytes dst)
    {
        const slot_entry* e = plain_entry(slot);
        if (e != nullptr && step >= 0 && e->step == step && e->parts.is_single(dst.size) &&
            dst.space == memory_space::host) [[likely]] {
            if (dst.size != 0)
                std::memcpy(dst.data, e->data, dst.size);
            counts_.read(e->size);
            return;
        }
        read(slot, step, mutable_parts(&dst, 1));
    }
    /// Gathers the parts, one after the other, into the slot (host parts with a plain copy, device parts
    /// through options::copy); throws as the single-view write does.
    ///
    ///     std::array<remat::const_bytes, 2> hc{remat::host_bytes(std::as_bytes(std::span(h))),
    ///                                          remat::host_bytes(std::as_bytes(std::span(c)))};
    ///     store.write(0, 17, remat::const_parts(hc));
    void write(slot_t slot, step_t step, const_parts src);
    /// Scatters x_step back into the parts; integrity_error naming the part and both sizes when the parts
    /// do not match those written.
    void read(slot_t slot, step_t step, mutable_parts dst);
    /// Sizes of the parts the slot holds (one for a single view; empty when it holds none).
    [[nodiscard]] std::span<const std::size_t> part_sizes(slot_t slot) const noexcept
    {
        const slot_entry* e = held_entry(slot);
        return e != nullptr ? e->parts.sizes() : std::span<const std::size_t>{};
    }
    /// Throws schedule_error for a slot outside the capacity or one that holds no snapshot.
    void release(slot_t slot)
    {
        slot_entry* e = held_entry(slot);
        if (e == nullptr) [[unlikely]]
            refuse_release(slot);
        e->step = -1;
        counts_.released(e->size);
        e->size = 0;
    }
    void release_all() noexcept;
    [[nodiscard]] std::size_t snapshot_bytes(slot_t slot) const noexcept
    {
        const slot_entry* e = held_entry(slot);
        return e != nullptr ? e->size : 0;
    }
    [[nodiscard]] const level_stats& stats() const noexcept { return counts_.stats(); }
    /// The peaks count from what the level holds now (the driver calls it as a run starts).
    void restart_peaks() noexcept { counts_.restart_peaks(); }
    /// Waits for the user's work on the stream of the copier (a remat::cuda::copier's); nothing for
    /// host_copy. The driver calls it when a user step returns, so that the step's GPU time is the step's.
    void wait_for_user() const { options_.copy.wait_for_user(); }

    /// The copier of the store this level is part of (tiered_store calls it): taken when the level has the
    /// default copier or the same one; argument_error when it was given another one.
    void use_copier(byte_copier copy)
    {
        detail::use_copier(options_.copy, copy, options_.name);
        plain_copy_ = options_.copy == host_copy;
    }
    /// The copier the level copies with.
    [[nodiscard]] byte_copier copier() const noexcept { return options_.copy; }

    /// Returns the memory of every slot to the resource (the store stays usable).
    void shrink() noexcept;

private:
    struct alignas(64) slot_entry { // 128 bytes: a slot is two whole cache lines, and slots_.size() a shift
        std::byte* data = nullptr;
        std::size_t allocated = 0;
        std::size_t size = 0;
        step_t step = -1; // -1: empty
        detail::part_layout parts;
    };
    slot_entry& entry(slot_t slot, bool grow);
    slot_entry& entry_outside(slot_t slot, bool grow);
    [[noreturn]] void refuse_release(slot_t slot);
    void deallocate(slot_entry& e) noexcept;

    // The slot's entry when the level copies with host_copy (its copies may be plain memcpy), else null.
    slot_entry* plain_entry(slot_t slot) noexcept
    {
        const auto index = static_cast<std::uint64_t>(slot); // a negative slot becomes huge: one compare
        return plain_copy_ && index < slots_.size() ? &slots_[static_cast<std::size_t>(index)] : nullptr;
    }
    // The slot's entry when it holds a snapshot, else null.
    slot_entry* held_entry(slot_t slot) noexcept
    {
        const auto index = static_cast<std::uint64_t>(slot);
        slot_entry* e = index < slots_.size() ? &slots_[static_cast<std::size_t>(index)] : nullptr;
        return e != nullptr && e->step >= 0 ? e : nullptr;
    }
    const slot_entry* held_entry(slot_t slot) const noexcept { return const_cast<host_store*>(this)->held_entry(slot); }
    // x_step of one host view into the free slot e, allocated for at least its size.
    void fill(slot_entry& e, step_t step, const_bytes src) noexcept
    {
        if (src.size != 0)
            std::memcpy(e.data, src.data, src.size);
        e.parts.assign_single(src.size);
        e.size = src.size;
        e.step = step;
        counts_.wrote(src.size);
    }

    level_capacity capacity_;
    options options_;
    std::vector<slot_entry> slots_;
    std::uint64_t allocated_bytes_ = 0;
    level_accounting counts_;
    bool plain_copy_ = true; // options_.copy is host_copy
};

static_assert(gathering_level<host_store>);

} // namespace remat
