// remat/cuda/basic_device_store.hpp — the device level: snapshots in slots preallocated in GPU memory,
// copied on the store's own stream and ordered against the user's kernels with events.
//
// Written once against remat::cuda::device_runtime; remat::cuda::device_store (device_store.hpp) is this
// template on the CUDA runtime, or on the host runtime under Thrust's CPU back ends.
//
// Ordering contract with the user's kernels (all of them enqueued on the user's stream, options::
// user_stream, by default CUDA's legacy default stream, where Thrust and plain <<<...>>> launches go):
//
//   write  The copy starts after every kernel enqueued on the user's stream before write() (so it sees
//          the state those kernels produce) and the user's stream waits for the copy: a kernel enqueued
//          after write() returns may modify the state at once, and cannot run before the copy has read
//          it. The host never blocks (except for a source in host memory, which is copied before write()
//          returns, as the store contract asks).
//   read   The copy into the state starts after the user's earlier kernels (an adjoint still reading the
//          state) and the user's stream waits for it: the next kernel on the user's stream sees the
//          restored state. The host blocks only when the destination is host memory.
//   Work that touches the state from the host or from another stream must first synchronise with the
//   user's stream (cudaStreamSynchronize), as it would for any kernel of the user's.
//
// Every slot has an event that completes with the latest copy into or out of the slot, on whichever
// stream; the next copy that touches the slot waits for it on the GPU. So a slot may be released and
// reused while a write-behind copy out of it (copy_out) is still running, and a read-ahead copy into it
// (copy_in) is complete before a read() of it starts — without the host waiting.
#pragma once

#include "remat/cuda/device_runtime.hpp"
#include "remat/detail/checked_math.hpp"
#include "remat/error.hpp"
#include "remat/store/detail/describe_snapshot.hpp"
#include "remat/store/detail/part_layout.hpp"
#include "remat/store/detail/slot_checks.hpp"
#include "remat/store/detail/store_capacity.hpp"
#include "remat/store/level_accounting.hpp"
#include "remat/store/snapshot_view.hpp"
#include "remat/store/storage_level.hpp"
#include "remat/store/store_stats.hpp"
#include "remat/types.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace remat::cuda {

/// One level of snapshots in device memory, modelling remat::storage_level (named "device"). All slots
/// are one allocation made once (in the constructor when options::slot_bytes is given, else at the
/// first write, sized by that snapshot), so a run allocates nothing per snapshot.
/// Capacity in slots, bytes, or both (the smaller wins); it must be bounded. Not thread-safe: one driver
/// uses it at a time, with the device that was current at its construction.
///
///     remat::cuda::device_store store(16);                        // 16 slots, sized by the first write
///     remat::cuda::device_store budget({.bytes = 8ull << 30}, {.slot_bytes = n * sizeof(float)});
///     thrust::device_vector<float> x = x0;
///     remat::run(remat::revolve(T, 16), store, x, remat::forward_step(forward), remat::adjoint_step(adjoint));
template <device_runtime Runtime>
class basic_device_store {
public:
    using runtime_type = Runtime;
    using stream_handle = typename Runtime::stream_handle;
    using event_handle = typename Runtime::event_handle;

    /// Slots start on this boundary (what coalesced device copies want).
    static constexpr std::size_t slot_alignment = 256;

    struct options {
        /// Bytes of one slot; 0 sizes the slots by the first snapshot written.
        std::size_t slot_bytes = 0;
        /// The stream of the user's kernels; the value-initialised handle is the default stream.
        stream_handle user_stream{};
        /// Level name in reports.
        const char* name = "device";
    };

    /// Throws argument_error for a zero or unbounded capacity, capacity_error when options::slot_bytes is
    /// given and the slots do not fit in the capacity or in device memory.
    basic_device_store(level_capacity capacity, options opts, Runtime runtime) : runtime_(std::move(runtime))
    {
        remat::detail::require_room(capacity, "a device store");
        if (capacity.slots == level_capacity::unlimited_slots && capacity.bytes == level_capacity::unlimited_bytes)
            throw argument_error("a device store needs a bounded capacity: give its slots, its bytes or both");
        capacity_ = capacity;
        options_ = opts;
        options_.user_stream = canonical(opts.user_stream);
        counts_ = level_accounting(options_.name);
        copy_stream_ = runtime_.create_stream();
        try {
            transfer_stream_ = runtime_.create_stream();
            try {
                user_ready_ = runtime_.create_event();
            } catch (...) {
                runtime_.destroy_stream(transfer_stream_);
                throw;
            }
        } catch (...) {
            runtime_.destroy_stream(copy_stream_);
            throw;
        }
        owns_ = true;
        if (options_.slot_bytes != 0) {
            try {
                allocate_slots(options_.slot_bytes);
            } catch (...) {
                destroy();
                throw;
            }
        }
    }
    basic_device_store(level_capacity capacity, options opts) : basic_device_store(capacity, opts, Runtime{}) {}
    explicit basic_device_store(level_capacity capacity) : basic_device_store(capacity, options{}, Runtime{}) {}
    explicit basic_device_store(slot_t slots)
        : basic_device_store(level_capacity{.slots = remat::detail::require_slot_count(slots, "a device store")},
                             options{}, Runtime{})
    {
    }
    basic_device_store(slot_t slots, options opts)
        : basic_device_store(level_capacity{.slots = remat::detail::require_slot_count(slots, "a device store")}, opts,
                             Runtime{})
    {
    }

    /// Waits for the copies in flight, then frees the slots.
    ~basic_device_store() { destroy(); }
    basic_device_store(const basic_device_store&) = delete;
    basic_device_store& operator=(const basic_device_store&) = delete;
    /// The moved-from store owns nothing; it may only be destroyed or assigned to.
    basic_device_store(basic_device_store&& other) noexcept { steal(other); }
    basic_device_store& operator=(basic_device_store&& other) noexcept
    {
        if (this != &other) {
            destroy();
            steal(other);
        }
        return *this;
    }

    /// Device reads are fast: the driver skips its lookahead for this store.
    static constexpr bool prefetches = false;

    /// The capacity given, with the slots it holds once their size is known.
    [[nodiscard]] level_capacity capacity() const noexcept { return {slot_limit(), capacity_.bytes}; }

    /// Copies the state into `slot` as x_step (see the ordering contract at the top of this header). The
    /// first write sizes the slots when options::slot_bytes was 0. Throws schedule_error for a slot outside
    /// the slots asked for or one that is occupied, capacity_error for a snapshot larger than a slot or a
    /// slot beyond what the byte budget holds (docs/driver.md, Errors); the slot is then unchanged.
    void write(slot_t slot, step_t step, const_bytes src) { write(slot, step, const_parts(&src, 1)); }

    /// Copies x_step from `slot` into the state (see the ordering contract at the top of this header).
    /// Throws schedule_error for a slot that holds no snapshot, integrity_error when it holds another
    /// step or another size.
    void read(slot_t slot, step_t step, mutable_bytes dst) { read(slot, step, mutable_parts(&dst, 1)); }

    /// A state of several parts (an LSTM's h and c, say): each part is copied on the store's copy stream
    /// straight into its place in the slot, one after the other (device to device for device parts, no
    /// host round trip; host parts before write() returns), ordered as a single view is. Throws as write().
    ///
    ///     std::array<remat::const_bytes, 2> hc{snapshot_traits<V>::bytes(h), snapshot_traits<V>::bytes(c)};
    ///     store.write(3, 17, remat::const_parts(hc));
    void write(slot_t slot, step_t step, const_parts parts)
    {
        const std::size_t size = total_bytes(parts);
        if (base_ == nullptr)
            allocate_slots(size);
        slot_entry& e = entry(slot);
        remat::detail::require_slot_takes(e.step, step, "store", [&] { return "device slot " + std::to_string(slot); });
        require_fits(size);
        runtime_.record(user_ready_, options_.user_stream);
        runtime_.wait(copy_stream_, user_ready_);
        runtime_.wait(copy_stream_, e.done);
        bool foreign = false;
        std::size_t at = 0;
        for (const const_bytes& p : parts) {
            runtime_.copy(slot_data(slot) + at, Runtime::device_memory, p.data, p.space, p.size, copy_stream_);
            foreign = foreign || is_foreign_host(p.space);
            at += p.size;
        }
        runtime_.record(e.done, copy_stream_);
        runtime_.wait(options_.user_stream, e.done);
        if (foreign)
            timed_synchronize(e.done);
        e.size = size;
        e.step = step;
        e.parts.assign(parts);
        counts_.wrote(size);
    }

    /// Copies x_step from `slot` back into the parts, each from its place in the slot, on the copy stream.
    /// Throws as read() does; integrity_error naming the part and both sizes unless the parts match those
    /// written.
    void read(slot_t slot, step_t step, mutable_parts parts)
    {
        slot_entry& e = held(slot, step, "read");
        if (const std::optional<std::string> why = remat::detail::part_mismatch(e.parts.sizes(), parts, step))
            throw integrity_error("device slot " + std::to_string(slot) + " holds " + *why);
        runtime_.record(user_ready_, options_.user_stream);
        runtime_.wait(copy_stream_, user_ready_);
        runtime_.wait(copy_stream_, e.done);
        bool foreign = false;
        std::size_t at = 0;
        for (const mutable_bytes& p : parts) {
            runtime_.copy(p.data, p.space, slot_data(slot) + at, Runtime::device_memory, p.size, copy_stream_);
            foreign = foreign || is_foreign_host(p.space);
            at += p.size;
        }
        runtime_.record(e.done, copy_stream_);
        runtime_.wait(options_.user_stream, e.done);
        if (foreign)
            timed_synchronize(e.done);
        counts_.read(e.size);
    }

    /// Sizes of the parts the slot holds (one for a single view; empty when it holds none).
    [[nodiscard]] std::span<const std::size_t> part_sizes(slot_t slot) const
    {
        if (slot < 0 || static_cast<std::uint64_t>(slot) >= slots_.size() || slots_[index(slot)].step < 0)
            return {};
        return slots_[index(slot)].parts.sizes();
    }

    /// The slot is free for another snapshot at once; a copy still reading it finishes first on the GPU.
    void release(slot_t slot)
    {
        if (slot < 0 || static_cast<std::uint64_t>(slot) >= slots_.size() || slots_[index(slot)].step < 0)
            throw schedule_error("free of device slot " + std::to_string(slot) + ", which holds no snapshot");
        slot_entry& e = slots_[index(slot)];
        counts_.released(e.size);
        e.step = -1;
        e.size = 0;
    }

    void release_all() noexcept
    {
        for (slot_entry& e : slots_) {
            e.step = -1;
            e.size = 0;
        }
        counts_.released_all();
    }

    [[nodiscard]] std::size_t snapshot_bytes(slot_t slot) const
    {
        if (slot < 0 || static_cast<std::uint64_t>(slot) >= slots_.size())
            return 0;
        const slot_entry& e = slots_[index(slot)];
        return e.step >= 0 ? e.size : 0;
    }

    [[nodiscard]] const level_stats& stats() const noexcept { return counts_.stats(); }
    /// The peaks count from what the level holds now (the driver calls it as a run starts).
    void restart_peaks() noexcept { counts_.restart_peaks(); }

    /// Blocks until the user's stream is idle. The driver calls it when a user step returns, inside the
    /// step's timing: the GPU time of the kernels the step enqueued is the step's, and a later host wait of
    /// the store's (a copy into host memory) waits for the store's copy alone (docs/cuda.md, "Time").
    void wait_for_user() { runtime_.synchronize_stream(options_.user_stream); }

    // --- for levels behind this one: write-behind and read-ahead ----------------------------------------

    /// Write-behind: enqueues a copy of x_step, held in `slot`, into `dst` (pinned host memory for an
    /// asynchronous copy) on the store's transfer stream, after the copy that filled the slot, and returns
    /// at once. The user's kernels do not wait for it. `dst` holds the snapshot once slot_ready(slot)
    /// (until another copy touches the slot). Throws like read().
    ///
    ///     store.write(3, k, state_bytes);                 // fast device copy; the kernels go on
    ///     store.copy_out(3, k, host_slot);                // device -> host behind the kernels
    ///     ...; store.wait_slot(3);                        // before host_slot is used
    void copy_out(slot_t slot, step_t step, mutable_bytes dst)
    {
        slot_entry& e = held(slot, step, "copy out");
        if (dst.size != e.size)
            throw integrity_error("copy out of device slot " + std::to_string(slot) + " needs " +
                                  std::to_string(e.size) + " bytes, got a buffer of " + std::to_string(dst.size));
        runtime_.wait(transfer_stream_, e.done);
        runtime_.copy(dst.data, dst.space, slot_data(slot), Runtime::device_memory, e.size, transfer_stream_);
        runtime_.record(e.done, transfer_stream_);
    }

    /// Read-ahead: enqueues a copy of x_step from `src` into the free `slot` on the transfer stream and
    /// returns at once; a later read() of the slot waits for it on the GPU. Pinned `src` must stay
    /// unchanged until slot_ready(slot). Throws like write().
    void copy_in(slot_t slot, step_t step, const_bytes src)
    {
        if (base_ == nullptr)
            allocate_slots(src.size);
        slot_entry& e = entry(slot);
        remat::detail::require_slot_takes(e.step, step, "copy", [&] { return "device slot " + std::to_string(slot); });
        require_fits(src.size);
        runtime_.wait(transfer_stream_, e.done);
        runtime_.copy(slot_data(slot), Runtime::device_memory, src.data, src.space, src.size, transfer_stream_);
        runtime_.record(e.done, transfer_stream_);
        e.size = src.size;
        e.step = step;
        e.parts.assign_single(src.size);
        counts_.wrote(src.size);
    }

    /// Whether every copy enqueued so far into or out of `slot` has completed (never blocks).
    [[nodiscard]] bool slot_ready(slot_t slot) { return runtime_.ready(slots_[index_checked(slot)].done); }

    /// Blocks until every copy enqueued so far into or out of `slot` has completed; the time counts as
    /// the level's wait_seconds.
    void wait_slot(slot_t slot) { timed_synchronize(slots_[index_checked(slot)].done); }

    /// Blocks until every copy the store enqueued has completed.
    void synchronize()
    {
        runtime_.synchronize_stream(copy_stream_);
        runtime_.synchronize_stream(transfer_stream_);
    }

    /// The device view of the snapshot in `slot` (empty when it holds none), for a copy of one's own;
    /// order it after slot_ready(slot) or synchronize().
    [[nodiscard]] const_bytes snapshot(slot_t slot) const
    {
        if (slot < 0 || static_cast<std::uint64_t>(slot) >= slots_.size() || slots_[index(slot)].step < 0)
            return {nullptr, 0, Runtime::device_memory};
        return {slot_data(slot), slots_[index(slot)].size, Runtime::device_memory};
    }

    /// The largest snapshot a slot takes (options::slot_bytes or the first snapshot's size; 0 until
    /// sized) and the slots preallocated (0 until sized).
    [[nodiscard]] std::size_t slot_bytes() const noexcept { return slot_size_; }
    [[nodiscard]] slot_t slot_count() const noexcept { return static_cast<slot_t>(slots_.size()); }

    /// The user's stream (CUDA's legacy default stream is nullptr however it was named, as copier_stream says).
    [[nodiscard]] stream_handle user_stream() const noexcept { return options_.user_stream; }
    /// Changes the stream the copies are ordered against (between runs, or when the kernels move).
    void set_user_stream(stream_handle s) noexcept { options_.user_stream = canonical(s); }
    /// The copier of the store this level is part of (tiered_store calls it). One made by
    /// remat::cuda::copier(stream) names the user's stream, and this level's copies are then ordered
    /// against it: the stream is configured once, for every level. argument_error when options::user_stream
    /// named another stream. Other copiers (and the CPU back end, which has no streams) change nothing.
    void use_copier(byte_copier copy)
    {
        if constexpr (requires { Runtime::stream_of(copy); }) {
            const auto stream = Runtime::stream_of(copy);
            if (!stream || *stream == options_.user_stream)
                return;
            if (options_.user_stream != stream_handle{})
                throw argument_error("device level " + std::string(options_.name) +
                                     " was given a user_stream of its own and the store's copier another stream; give "
                                     "the stream once, to the store (tiered_store(remat::cuda::copier(stream), ...))");
            options_.user_stream = *stream;
        }
    }
    /// The streams of the copies to and from the state (write, read) and of copy_out / copy_in.
    [[nodiscard]] stream_handle copy_stream() const noexcept { return copy_stream_; }
    [[nodiscard]] stream_handle transfer_stream() const noexcept { return transfer_stream_; }
    [[nodiscard]] Runtime& runtime() noexcept { return runtime_; }

private:
    struct slot_entry {
        std::size_t size = 0;
        step_t step = -1; // -1: empty
        event_handle done{};
        remat::detail::part_layout parts;
    };

    static std::size_t index(slot_t slot) noexcept { return static_cast<std::size_t>(slot); }

    /// The one handle of a stream that has several (CUDA: cudaStreamLegacy and nullptr).
    static stream_handle canonical(stream_handle s) noexcept
    {
        if constexpr (requires { Runtime::canonical_stream(s); })
            return Runtime::canonical_stream(s);
        else
            return s;
    }

    /// Host memory the runtime does not own: the host may touch it as soon as the call returns.
    static constexpr bool is_foreign_host(memory_space space) noexcept
    {
        return space == memory_space::host && Runtime::device_memory != memory_space::host;
    }

    [[nodiscard]] slot_t slot_limit() const noexcept
    {
        return base_ != nullptr ? static_cast<slot_t>(slots_.size()) : capacity_.slots;
    }

    [[nodiscard]] std::byte* slot_data(slot_t slot) const noexcept { return base_ + index(slot) * stride_; }

    std::size_t index_checked(slot_t slot) const
    {
        if (slot < 0 || slot >= capacity_.slots)
            throw schedule_error("slot " + std::to_string(slot) + " is outside the device store's " +
                                 remat::detail::describe_slots(capacity_.slots) + " slots");
        if (slot >= slot_limit()) // within the slots asked for, beyond what the byte budget holds
            throw capacity_error("slot " + std::to_string(slot) + " does not fit the device store's " +
                                 std::to_string(capacity_.bytes) + "-byte budget, which holds " +
                                 std::to_string(slot_limit()) + " slots of " + std::to_string(stride_) + " bytes");
        if (static_cast<std::uint64_t>(slot) >= slots_.size())
            throw schedule_error("slot " + std::to_string(slot) + " of the device store was never written");
        return index(slot);
    }

    slot_entry& entry(slot_t slot) { return slots_[index_checked(slot)]; }

    slot_entry& held(slot_t slot, step_t step, const char* what)
    {
        slot_entry& e = entry(slot);
        if (e.step < 0)
            throw schedule_error(std::string(what) + " of x_" + std::to_string(step) + " from device slot " +
                                 std::to_string(slot) + ", which holds no snapshot");
        if (e.step != step)
            throw integrity_error(std::string(what) + " of x_" + std::to_string(step) + " from device slot " +
                                  std::to_string(slot) + ", which holds " + remat::detail::describe_snapshot(e.step));
        return e;
    }

    void require_fits(std::size_t size) const
    {
        if (size > slot_size_)
            throw capacity_error("a snapshot of " + std::to_string(size) + " bytes does not fit the device store's " +
                                 std::to_string(slot_size_) + "-byte slots (sized " +
                                 (options_.slot_bytes != 0 ? std::string("by options::slot_bytes")
                                                           : std::string("by the first snapshot")) +
                                 ")");
    }

    void allocate_slots(std::size_t snapshot_size)
    {
        const std::uint64_t wanted = std::max<std::uint64_t>(snapshot_size, 1);
        const std::uint64_t stride = remat::detail::checked_mul((wanted + slot_alignment - 1) / slot_alignment,
                                                                slot_alignment, "device slot size");
        auto count = static_cast<std::uint64_t>(capacity_.slots);
        if (capacity_.bytes != level_capacity::unlimited_bytes)
            count = std::min(count, capacity_.bytes / stride);
        if (count == 0)
            throw capacity_error("the device store's " + std::to_string(capacity_.bytes) +
                                 "-byte budget cannot hold one " + std::to_string(stride) + "-byte slot");
        const std::uint64_t total = remat::detail::checked_mul(count, stride, "device store bytes");
        if (total > static_cast<std::uint64_t>(SIZE_MAX))
            throw capacity_error("the device store's " + std::to_string(count) + " slots of " + std::to_string(stride) +
                                 " bytes exceed the address space");
        // The memory first: a capacity beyond the device fails before any per-slot work.
        void* memory = runtime_.allocate(static_cast<std::size_t>(total));
        std::vector<slot_entry> fresh;
        std::size_t events = 0;
        try {
            fresh.resize(static_cast<std::size_t>(count));
            for (; events < fresh.size(); ++events)
                fresh[events].done = runtime_.create_event();
        } catch (...) {
            for (std::size_t i = 0; i < events; ++i)
                runtime_.destroy_event(fresh[i].done);
            runtime_.deallocate(memory, static_cast<std::size_t>(total));
            throw;
        }
        base_ = static_cast<std::byte*>(memory);
        allocated_ = static_cast<std::size_t>(total);
        stride_ = static_cast<std::size_t>(stride);
        slot_size_ = snapshot_size;
        slots_ = std::move(fresh);
    }

    void timed_synchronize(event_handle e)
    {
        const level_accounting::wait_timer timer(counts_);
        runtime_.synchronize(e);
    }

    void destroy() noexcept
    {
        if (!owns_)
            return;
        // Copies in flight still read or write the slots: let them finish before the memory goes.
        try {
            synchronize();
        } catch (...) { // NOLINT(bugprone-empty-catch): a destructor cannot report; the memory is freed anyway
        }
        for (slot_entry& e : slots_)
            runtime_.destroy_event(e.done);
        slots_.clear();
        if (base_ != nullptr)
            runtime_.deallocate(base_, allocated_);
        base_ = nullptr;
        runtime_.destroy_event(user_ready_);
        runtime_.destroy_stream(transfer_stream_);
        runtime_.destroy_stream(copy_stream_);
        owns_ = false;
    }

    void steal(basic_device_store& other) noexcept
    {
        runtime_ = std::move(other.runtime_);
        capacity_ = other.capacity_;
        options_ = other.options_;
        stride_ = std::exchange(other.stride_, 0);
        slot_size_ = std::exchange(other.slot_size_, 0);
        allocated_ = std::exchange(other.allocated_, 0);
        base_ = std::exchange(other.base_, nullptr);
        copy_stream_ = other.copy_stream_;
        transfer_stream_ = other.transfer_stream_;
        user_ready_ = other.user_ready_;
        slots_ = std::move(other.slots_);
        other.slots_.clear();
        counts_ = std::move(other.counts_);
        owns_ = std::exchange(other.owns_, false);
    }

    Runtime runtime_;
    level_capacity capacity_;
    options options_;
    std::size_t slot_size_ = 0; // the largest snapshot a slot takes; 0 until the slots are allocated
    std::size_t stride_ = 0;    // bytes from one slot to the next (slot_size_ rounded up to the alignment)
    std::size_t allocated_ = 0; // bytes of the one allocation
    std::byte* base_ = nullptr;
    stream_handle copy_stream_{};
    stream_handle transfer_stream_{};
    event_handle user_ready_{}; // recorded on the user's stream before each copy to or from the state
    std::vector<slot_entry> slots_;
    level_accounting counts_;
    bool owns_ = false;
};

} // namespace remat::cuda
