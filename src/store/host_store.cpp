#include "remat/store/host_store.hpp"

#include "remat/error.hpp"
#include "remat/store/detail/describe_snapshot.hpp"
#include "remat/store/detail/slot_checks.hpp"
#include "remat/store/detail/store_capacity.hpp"

#include <algorithm>
#include <new>
#include <optional>
#include <string>
#include <utility>

namespace remat {
namespace {

constexpr std::size_t slot_alignment = 64; // a cache line; also what vectorised copies like

} // namespace

host_store::host_store(level_capacity capacity, options opts) : capacity_(capacity), options_(opts)
{
    detail::require_room(capacity, "host_store");
    if (options_.memory == nullptr || options_.copy.target() == nullptr)
        throw argument_error("host_store options need a memory resource and a copy function");
    counts_ = level_accounting(options_.name);
    plain_copy_ = options_.copy == host_copy;
    if (capacity.slots != level_capacity::unlimited_slots)
        slots_.resize(static_cast<std::size_t>(capacity.slots));
}

host_store::~host_store()
{
    release_all();
    shrink();
}

host_store::host_store(host_store&& other) noexcept
    : capacity_(other.capacity_), options_(other.options_), slots_(std::move(other.slots_)),
      allocated_bytes_(std::exchange(other.allocated_bytes_, 0)), counts_(std::move(other.counts_)),
      plain_copy_(other.plain_copy_)
{
    other.slots_.clear();
}

host_store& host_store::operator=(host_store&& other) noexcept
{
    if (this != &other) {
        shrink();
        capacity_ = other.capacity_;
        options_ = other.options_;
        slots_ = std::move(other.slots_);
        other.slots_.clear();
        allocated_bytes_ = std::exchange(other.allocated_bytes_, 0);
        counts_ = std::move(other.counts_);
        plain_copy_ = other.plain_copy_;
    }
    return *this;
}

host_store::slot_entry& host_store::entry(slot_t slot, bool grow)
{
    const auto index = static_cast<std::uint64_t>(slot); // a negative slot becomes huge: one compare
    if (index < slots_.size()) [[likely]]
        return slots_[static_cast<std::size_t>(index)];
    return entry_outside(slot, grow);
}

host_store::slot_entry& host_store::entry_outside(slot_t slot, bool grow)
{
    if (slot < 0 || slot >= capacity_.slots)
        throw schedule_error("slot " + std::to_string(slot) + " is outside the host store's " +
                             detail::describe_slots(capacity_.slots) + " slots");
    if (!grow)
        throw schedule_error("slot " + std::to_string(slot) + " of the host store was never written");
    detail::grow_slot_table(slots_, slot, "host");
    return slots_[static_cast<std::size_t>(slot)];
}

void host_store::write(slot_t slot, step_t step, const_parts parts)
{
    const const_bytes src{nullptr, total_bytes(parts), memory_space::host}; // the whole snapshot, for its size
    slot_entry& e = entry(slot, true);
    detail::require_slot_takes(e.step, step, "store", [&] { return "host slot " + std::to_string(slot); });
    if (e.allocated < src.size) {
        const std::uint64_t after = allocated_bytes_ - e.allocated + src.size;
        if (after > capacity_.bytes)
            throw capacity_error("the host store's " + std::to_string(capacity_.bytes) + "-byte budget cannot hold " +
                                 "another snapshot of " + std::to_string(src.size) + " bytes (" +
                                 std::to_string(allocated_bytes_) + " bytes in use)");
        void* fresh = nullptr;
        try {
            fresh = options_.memory->allocate(src.size, slot_alignment); // e is unchanged if this throws
        } catch (const std::bad_alloc&) {
            throw capacity_error("out of memory: cannot allocate " + std::to_string(src.size) + " bytes for x_" +
                                 std::to_string(step) + " in host slot " + std::to_string(slot) + " (" +
                                 std::to_string(allocated_bytes_) + " bytes of slots already allocated)");
        }
        deallocate(e);
        e.data = static_cast<std::byte*>(fresh);
        e.allocated = src.size;
        allocated_bytes_ += src.size;
    }
    std::size_t at = 0;
    for (const const_bytes& p : parts) {
        options_.copy(e.data + at, memory_space::host, p.data, p.space, p.size);
        at += p.size;
    }
    e.parts.assign(parts);
    e.size = src.size;
    e.step = step;
    counts_.wrote(src.size);
}

void host_store::read(slot_t slot, step_t step, mutable_parts dst)
{
    const slot_entry& e = entry(slot, false);
    if (e.step < 0)
        throw schedule_error("restore of x_" + std::to_string(step) + " from host slot " + std::to_string(slot) +
                             ", which holds no snapshot");
    if (e.step != step)
        throw integrity_error("host slot " + std::to_string(slot) + " holds " + detail::describe_snapshot(e.step) +
                              ", not x_" + std::to_string(step));
    if (const std::optional<std::string> why = detail::part_mismatch(e.parts.sizes(), dst, step))
        throw integrity_error("host slot " + std::to_string(slot) + " holds " + *why);
    std::size_t at = 0;
    for (const mutable_bytes& p : dst) {
        options_.copy(p.data, p.space, e.data + at, memory_space::host, p.size);
        at += p.size;
    }
    counts_.read(e.size);
}

void host_store::refuse_release(slot_t slot)
{
    entry(slot, false); // throws for a slot outside the capacity or never written
    throw schedule_error("free of host slot " + std::to_string(slot) + ", which holds no snapshot");
}

void host_store::release_all() noexcept
{
    for (slot_entry& e : slots_) {
        e.step = -1;
        e.size = 0;
    }
    counts_.released_all();
}

void host_store::deallocate(slot_entry& e) noexcept
{
    if (e.data != nullptr) {
        options_.memory->deallocate(e.data, e.allocated, slot_alignment);
        allocated_bytes_ -= e.allocated;
    }
    e.data = nullptr;
    e.allocated = 0;
}

void host_store::shrink() noexcept
{
    for (slot_entry& e : slots_)
        if (e.step < 0)
            deallocate(e);
}

} // namespace remat
