// remat/store/storage_level.hpp — the contract of one storage level: slots that hold snapshot bytes.
//
// host_store (RAM), hdf5_store (a file) and cuda::device_store (GPU memory) are storage levels. A level
// is a store by itself — remat::run takes one directly — and tiered_store stacks several into one
// multi-level store (remat::snapshot_store, snapshot_store.hpp). Type L models remat::storage_level
// when, for l of type L, slot N, step K and byte views src, dst:
//
//     | expression              | type           | meaning                                             |
//     |-------------------------|----------------|-----------------------------------------------------|
//     | l.capacity()            | level_capacity | slots (and bytes) the level may hold                |
//     | l.write(N, K, src)      | void           | copy src into slot N as x_K; src may be reused at   |
//     |                         |                | once (an asynchronous level copies it first)        |
//     | l.read(N, K, dst)       | void           | copy x_K from slot N into dst; integrity_error      |
//     |                         |                | unless slot N holds x_K of size dst.size            |
//     | l.release(N)            | void           | slot N is no longer needed                          |
//     | l.release_all()         | void, noexcept | every slot is released (after a failed run)         |
//     | l.snapshot_bytes(N)     | std::size_t    | bytes of the snapshot in slot N (0 when empty)      |
//     | l.stats()               | level_stats    | the level's counters and name                       |
//   optional:
//     | l.prefetch(N, K)        | void           | a hint: x_K in slot N will be read soon             |
//     | l.flush()               | void           | wait for transfers in flight; raise their failures  |
//     | L::prefetches           | bool constant  | false: prefetch does nothing, skip the lookahead    |
//     | l.use_copier(c)         | void           | take the store's byte_copier c (tiered_store hands  |
//     |                         |                | its own to every level); argument_error if the level|
//     |                         |                | was given another one                               |
//     | l.restart_peaks()       | void, noexcept | the peaks count from what the level holds now (the  |
//     |                         |                | driver calls it as a run starts; without it, a run  |
//     |                         |                | reports the level's peaks since it was made)        |
//     | l.wait_for_user()       | void           | blocks until the user's GPU work that the level's   |
//     |                         |                | copies are ordered after has finished (the driver   |
//     |                         |                | calls it when a user step returns; behind an        |
//     |                         |                | asynchronous tier, on the driver's thread while the |
//     |                         |                | worker may be in a transfer: touch no slot)         |
//
// A level that also takes snapshots made of several parts (remat::gathering_level; every level remat
// provides is one) has, for parts src (const_parts) and dst (mutable_parts):
//
//     | l.write(N, K, src)      | void           | gather: the parts one after the other into slot N   |
//     | l.read(N, K, dst)       | void           | scatter: back into their places; integrity_error    |
//     |                         |                | naming the part and both sizes unless they match    |
//     | l.part_sizes(N)         | span<const size_t> | sizes of the parts held (empty when empty)      |
//
// A single view is a snapshot of one part: both forms read each other's snapshots.
//
// A write that fails (capacity, I/O) leaves the slot as it was before; a level is never left holding
// half a snapshot that reads as valid.
//
// The run report reads a level's stats(): its counts and peaks are kept by the level alone (remat::
// level_accounting, level_accounting.hpp, keeps them for the levels remat provides), never again by the driver.
//
//     remat::host_store ram(4);                            // a storage_level of 4 slots
//     std::vector<double> x(100, 1.0);
//     ram.write(2, 17, remat::host_bytes(std::as_bytes(std::span(x))));          // x_17 into slot 2
//     ram.read(2, 17, remat::host_bytes(std::as_writable_bytes(std::span(x))));  // and back
//     ram.release(2);
#pragma once

#include "remat/error.hpp"
#include "remat/store/snapshot_view.hpp"
#include "remat/store/store_stats.hpp"
#include "remat/types.hpp"

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>

namespace remat {

/// How much one level may hold: a number of slots, a number of bytes, or both (the smaller wins).
///
///     remat::level_capacity{.slots = 64}             // 64 snapshots of any size
///     remat::level_capacity{.bytes = 8ull << 30}     // as many as fit in 8 GiB
///     remat::level_capacity{}                        // unlimited (a disk level)
struct level_capacity {
    static constexpr slot_t unlimited_slots = std::numeric_limits<slot_t>::max();
    static constexpr std::uint64_t unlimited_bytes = std::numeric_limits<std::uint64_t>::max();
    slot_t slots = unlimited_slots;
    std::uint64_t bytes = unlimited_bytes;
    friend bool operator==(const level_capacity&, const level_capacity&) = default;
};

template <class L>
concept storage_level = requires(L& l, const L& cl, slot_t slot, step_t step, const_bytes src, mutable_bytes dst) {
    { cl.capacity() } -> std::same_as<level_capacity>;
    l.write(slot, step, src);
    l.read(slot, step, dst);
    l.release(slot);
    l.release_all();
    { cl.snapshot_bytes(slot) } -> std::convertible_to<std::size_t>;
    { cl.stats() } -> std::convertible_to<level_stats>;
};

/// A storage level that gathers a snapshot's parts into one slot and scatters them back (see the table
/// above); what a multi-part state (remat::multipart_state) needs.
template <class L>
concept gathering_level =
    storage_level<L> && requires(L& l, const L& cl, slot_t slot, step_t step, const_parts src, mutable_parts dst) {
        l.write(slot, step, src);
        l.read(slot, step, dst);
        { cl.part_sizes(slot) } -> std::convertible_to<std::span<const std::size_t>>;
    };

/// Whether a level (or a multi-level store) wants to be told about coming reads (see `prefetches`).
template <class S>
inline constexpr bool store_prefetches =
    requires(S& s) { s.prefetch(slot_t{}, step_t{}); } || requires(S& s) { s.prefetch(level_t{}, slot_t{}, step_t{}); };
template <class S>
    requires requires { S::prefetches; }
inline constexpr bool store_prefetches<S> = S::prefetches;

} // namespace remat
