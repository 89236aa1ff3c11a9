// remat/store/snapshot_store.hpp — the contract between the driver and a store of several levels.
//
// A multi-level store (remat::tiered_store, or one of your own) owns slots on levels 0..n-1 (level 0
// the fastest) and moves snapshot bytes in and out. A single level is a remat::storage_level
// (storage_level.hpp) and needs no level argument; the driver takes either. Type S models
// remat::snapshot_store when, for s of type S, level L, slot N, step K and byte views src, dst:
//
//     | expression               | type           | meaning                                            |
//     |--------------------------|----------------|----------------------------------------------------|
//     | s.level_count()          | level_t        | number of levels                                   |
//     | s.capacity(L)            | level_capacity | slots (and bytes) level L may hold                 |
//     | s.write(L, N, K, src)    | void           | copy src into slot N of level L as x_K             |
//     | s.read(L, N, K, dst)     | void           | copy x_K from slot N of level L into dst           |
//     | s.release(L, N)          | void           | slot N of level L is no longer needed              |
//     | s.release_all()          | void, noexcept | every slot is released (after a failed run)        |
//     | s.snapshot_bytes(L, N)   | std::size_t    | bytes of the snapshot in slot N (0 when empty)     |
//     | s.stats()                | store_stats    | counters per level                                 |
//   optional:
//     | s.prefetch(L, N, K)      | void           | a hint: x_K in slot N of level L will be read soon |
//     | S::prefetches            | bool constant  | false: prefetch does nothing, skip the lookahead   |
//     | s.restart_peaks()        | void, noexcept | every level's peaks count from what it holds now   |
//     | s.wait_for_user()        | void           | blocks until the user's GPU work that the store's  |
//     |                          |                | copies are ordered after has finished              |
//
// A store that gathers multi-part snapshots (remat::gathering_store; tiered_store is one when each of its
// levels is a gathering_level) also has s.write(L, N, K, parts), s.read(L, N, K, parts) and
// s.part_sizes(L, N), as a gathering_level has them.
//
// Each operation means what it means for one storage_level, on level L. The driver checks L against
// level_count() before it calls the store (a schedule over more levels is refused before step 0).
//
//     remat::tiered_store store(remat::host_store(8), remat::hdf5_store("run.h5", remat::level_capacity{}));
//     store.capacity(1).slots;      // level_capacity::unlimited_slots
#pragma once

#include "remat/store/snapshot_view.hpp"
#include "remat/store/storage_level.hpp"
#include "remat/store/store_stats.hpp"
#include "remat/types.hpp"

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>

namespace remat {

template <class S>
concept snapshot_store =
    requires(S& s, const S& cs, level_t level, slot_t slot, step_t step, const_bytes src, mutable_bytes dst) {
        { cs.level_count() } -> std::convertible_to<level_t>;
        { cs.capacity(level) } -> std::same_as<level_capacity>;
        s.write(level, slot, step, src);
        s.read(level, slot, step, dst);
        s.release(level, slot);
        s.release_all();
        { cs.snapshot_bytes(level, slot) } -> std::convertible_to<std::size_t>;
        { cs.stats() } -> std::convertible_to<store_stats>;
    };

/// A multi-level store that gathers a snapshot's parts into one slot (see remat::gathering_level).
template <class S>
concept gathering_store = snapshot_store<S> && requires(S& s, const S& cs, level_t level, slot_t slot, step_t step,
                                                        const_parts src, mutable_parts dst) {
    s.write(level, slot, step, src);
    s.read(level, slot, step, dst);
    { cs.part_sizes(level, slot) } -> std::convertible_to<std::span<const std::size_t>>;
};

/// What remat::run, run_online and executor accept as a store: one storage level or a multi-level store.
template <class S>
concept store_for_run = storage_level<S> || snapshot_store<S>;

/// A store that takes multi-part states (remat::multipart_state).
template <class S>
concept store_for_parts = (gathering_level<S> && !snapshot_store<S>) || gathering_store<S>;

namespace detail {

/// The driver's view of a store, with level arguments either way. For a storage level the level has
/// been checked (it is 0) before these calls, so they cost nothing over calling the level itself.
template <class S>
class store_access {
public:
    explicit store_access(S& s) noexcept : s_(s) {}
    [[nodiscard]] level_t level_count() const { return static_cast<level_t>(s_.level_count()); }
    [[nodiscard]] level_capacity capacity(level_t l) const { return s_.capacity(l); }
    void write(level_t l, slot_t n, step_t k, const_bytes src) { s_.write(l, n, k, src); }
    void read(level_t l, slot_t n, step_t k, mutable_bytes dst) { s_.read(l, n, k, dst); }
    void release(level_t l, slot_t n) { s_.release(l, n); }
    void release_all() noexcept { s_.release_all(); }
    void prefetch(level_t l, slot_t n, step_t k)
    {
        if constexpr (requires { s_.prefetch(l, n, k); })
            s_.prefetch(l, n, k);
    }
    void restart_peaks() noexcept
    {
        if constexpr (requires { s_.restart_peaks(); })
            s_.restart_peaks();
    }
    void wait_for_user()
    {
        if constexpr (requires { s_.wait_for_user(); })
            s_.wait_for_user();
    }
    [[nodiscard]] std::size_t snapshot_bytes(level_t l, slot_t n) const { return s_.snapshot_bytes(l, n); }
    [[nodiscard]] store_stats stats() const { return s_.stats(); }
    void write(level_t l, slot_t n, step_t k, const_parts src)
        requires gathering_store<S>
    {
        s_.write(l, n, k, src);
    }
    void read(level_t l, slot_t n, step_t k, mutable_parts dst)
        requires gathering_store<S>
    {
        s_.read(l, n, k, dst);
    }
    [[nodiscard]] std::span<const std::size_t> part_sizes(level_t l, slot_t n) const
        requires gathering_store<S>
    {
        return s_.part_sizes(l, n);
    }

private:
    S& s_;
};

template <class S>
    requires(storage_level<S> && !snapshot_store<S>)
class store_access<S> {
public:
    explicit store_access(S& s) noexcept : s_(s) {}
    [[nodiscard]] static level_t level_count() noexcept { return 1; }
    [[nodiscard]] level_capacity capacity(level_t) const { return s_.capacity(); }
    void write(level_t, slot_t n, step_t k, const_bytes src) { s_.write(n, k, src); }
    void read(level_t, slot_t n, step_t k, mutable_bytes dst) { s_.read(n, k, dst); }
    void release(level_t, slot_t n) { s_.release(n); }
    void release_all() noexcept { s_.release_all(); }
    void prefetch(level_t, slot_t n, step_t k)
    {
        if constexpr (requires { s_.prefetch(n, k); })
            s_.prefetch(n, k);
    }
    void restart_peaks() noexcept
    {
        if constexpr (requires { s_.restart_peaks(); })
            s_.restart_peaks();
    }
    void wait_for_user()
    {
        if constexpr (requires { s_.wait_for_user(); })
            s_.wait_for_user();
    }
    [[nodiscard]] std::size_t snapshot_bytes(level_t, slot_t n) const { return s_.snapshot_bytes(n); }
    [[nodiscard]] store_stats stats() const { return {{level_stats(s_.stats())}}; }
    void write(level_t, slot_t n, step_t k, const_parts src)
        requires gathering_level<S>
    {
        s_.write(n, k, src);
    }
    void read(level_t, slot_t n, step_t k, mutable_parts dst)
        requires gathering_level<S>
    {
        s_.read(n, k, dst);
    }
    [[nodiscard]] std::span<const std::size_t> part_sizes(level_t, slot_t n) const
        requires gathering_level<S>
    {
        return s_.part_sizes(n);
    }

private:
    S& s_;
};

} // namespace detail
} // namespace remat
