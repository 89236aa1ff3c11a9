// remat/store/snapshot_store.hpp — the contract between the driver and a store of snapshots.
//
// A store owns slots on one or more levels (level 0 the fastest) and moves snapshot bytes in and out.
// Type S models remat::snapshot_store when, for s of type S, level L, slot N, step K and byte views
// src, dst:
//
//     | expression               | type           | meaning                                            |
//     |--------------------------|----------------|----------------------------------------------------|
//     | s.level_count()          | level_t        | number of levels                                   |
//     | s.capacity(L)            | level_capacity | slots (and bytes) level L may hold                 |
//     | s.write(L, N, K, src)    | void           | copy src into slot N as x_K; src may be reused at  |
//     |                          |                | once (an asynchronous level copies it first)       |
//     | s.read(L, N, K, dst)     | void           | copy x_K from slot N into dst; throws              |
//     |                          |                | integrity_error unless slot N holds x_K of size    |
//     |                          |                | dst.size                                           |
//     | s.release(L, N)          | void           | slot N is no longer needed                         |
//     | s.release_all()          | void           | every slot is released (after a failed run)        |
//     | s.prefetch(L, N, K)      | void           | a hint: x_K in slot N will be read soon            |
//     | s.snapshot_bytes(L, N)   | std::size_t    | bytes of the snapshot in slot N (0 when empty)     |
//     | s.stats()                | store_stats    | counters per level                                 |
//
// A store whose prefetch does nothing may say so with `static constexpr bool prefetches = false;`, and
// the driver then skips its lookahead.
//
// A write that fails (capacity, I/O) leaves the slot as it was before; a store is never left holding
// half a snapshot that reads as valid.
#pragma once

#include "remat/schedule/action.hpp"
#include "remat/store/snapshot_view.hpp"
#include "remat/store/store_stats.hpp"

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>

namespace remat {

/// How much one level may hold. Either limit may be unlimited.
struct level_capacity {
    static constexpr std::uint64_t unlimited = std::numeric_limits<std::uint64_t>::max();
    std::uint64_t slots = unlimited;
    std::uint64_t bytes = unlimited;
    friend bool operator==(const level_capacity&, const level_capacity&) = default;
};

template <class S>
concept snapshot_store =
    requires(S& s, const S& cs, level_t level, slot_t slot, step_t step, const_bytes src, mutable_bytes dst) {
        { cs.level_count() } -> std::convertible_to<level_t>;
        { cs.capacity(level) } -> std::same_as<level_capacity>;
        s.write(level, slot, step, src);
        s.read(level, slot, step, dst);
        s.release(level, slot);
        s.release_all();
        s.prefetch(level, slot, step);
        { cs.snapshot_bytes(level, slot) } -> std::convertible_to<std::size_t>;
        { cs.stats() } -> std::convertible_to<store_stats>;
    };

/// Whether the driver should show a store the actions ahead (see `prefetches` above).
template <class S>
inline constexpr bool store_prefetches = true;
template <class S>
    requires requires { S::prefetches; }
inline constexpr bool store_prefetches<S> = S::prefetches;

} // namespace remat
