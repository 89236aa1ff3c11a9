// remat/store/tiered_store.hpp — several storage levels as one store: device, host, disk, ...
//
// Level L of a multi-level schedule is the L-th storage level given here (each a remat::storage_level:
// a host_store, an hdf5_store, a cuda::device_store, ...; anything else does not compile). A level may be asynchronous:
// its transfers then run on a worker thread of its own (remat::async_level) — writes go out behind the computation and
// reads are started ahead of the restores the driver sees coming — so the step loop waits only when data
// is not ready. The run report shows, per level, the time waited and the transfer time overlapped.
#pragma once

#include "remat/error.hpp"
#include "remat/store/async_level.hpp"
#include "remat/store/detail/level_interface.hpp"
#include "remat/store/snapshot_store.hpp"
#include "remat/store/storage_level.hpp"
#include "remat/store/store_stats.hpp"

#include <array>
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <utility>

namespace remat {

/// How one level of a tiered store runs.
struct tier_options {
    bool asynchronous = false; ///< transfers on a worker thread (slow levels: disk)
    async_options async{};     ///< staging buffers, when asynchronous
};

/// A multi-level store (remat::snapshot_store) made of storage levels, fastest first.
///
/// The store has one copier (remat::byte_copier; host_copy unless one is given): it hands it to every
/// level that copies bytes (`level.use_copier(copy)`: host_store, hdf5_store; a cuda::device_store takes
/// the user's stream from a remat::cuda::copier) and to the staging of every asynchronous level. A level
/// given a different copier of its own is refused (argument_error): the copier is configured once.
///
///     remat::tiered_store store({remat::tier_options{}, remat::tier_options{.asynchronous = true}},
///                               remat::host_store(8), remat::hdf5_store("/scratch/run.h5", remat::level_capacity{}));
///     remat::run(remat::multilevel(T, levels), store, x, remat::forward_step(forward), remat::adjoint_step(adjoint));
///
///     remat::tiered_store gpu(remat::cuda::copier(stream), remat::cuda::device_store(16),
///                             remat::host_store(64, {.memory = &pinned}));
template <storage_level... Levels>
class tiered_store {
    static constexpr std::size_t count = sizeof...(Levels);
    static_assert(count >= 1, "a tiered store needs at least one level");

public:
    /// The driver shows this store the restores ahead, for read-ahead on asynchronous levels.
    static constexpr bool prefetches = true;

    /// Every level synchronous, copying with host_copy.
    explicit tiered_store(Levels... levels)
        : tiered_store(host_copy, std::array<tier_options, sizeof...(Levels)>{}, std::move(levels)...)
    {
    }
    tiered_store(std::array<tier_options, sizeof...(Levels)> options, Levels... levels)
        : tiered_store(host_copy, options, std::move(levels)...)
    {
    }
    /// Every level synchronous, copying with `copy`.
    tiered_store(byte_copier copy, Levels... levels)
        : tiered_store(copy, std::array<tier_options, sizeof...(Levels)>{}, std::move(levels)...)
    {
    }
    /// Throws argument_error when a level was given a copier (or a device level a user stream) other than
    /// the store's.
    tiered_store(byte_copier copy, std::array<tier_options, sizeof...(Levels)> options, Levels... levels)
        : levels_(std::move(levels)...)
    {
        bind(copy, options, std::index_sequence_for<Levels...>{});
    }
    ~tiered_store() = default;
    // Adapters and workers point into levels_: the object stays where it was made.
    tiered_store(const tiered_store&) = delete;
    tiered_store& operator=(const tiered_store&) = delete;

    [[nodiscard]] level_t level_count() const noexcept { return static_cast<level_t>(count); }
    [[nodiscard]] level_capacity capacity(level_t level) const { return tier(level).capacity(); }
    void write(level_t level, slot_t slot, step_t step, const_bytes src) { tier(level).write(slot, step, src); }
    void read(level_t level, slot_t slot, step_t step, mutable_bytes dst) { tier(level).read(slot, step, dst); }
    /// A snapshot of several parts (remat::gathering_store), when every level gathers: each level, and an
    /// asynchronous level's staging buffer, takes the parts one after the other into one slot.
    void write(level_t level, slot_t slot, step_t step, const_parts src)
        requires(gathering_level<Levels> && ...)
    {
        tier(level).write(slot, step, src);
    }
    void read(level_t level, slot_t slot, step_t step, mutable_parts dst)
        requires(gathering_level<Levels> && ...)
    {
        tier(level).read(slot, step, dst);
    }
    [[nodiscard]] std::span<const std::size_t> part_sizes(level_t level, slot_t slot) const
        requires(gathering_level<Levels> && ...)
    {
        return tier(level).part_sizes(slot);
    }
    void release(level_t level, slot_t slot) { tier(level).release(slot); }
    void release_all() noexcept
    {
        for (auto& t : tiers_)
            t->release_all();
    }
    void prefetch(level_t level, slot_t slot, step_t step) { tier(level).prefetch(slot, step); }
    [[nodiscard]] std::size_t snapshot_bytes(level_t level, slot_t slot) const
    {
        return tier(level).snapshot_bytes(slot);
    }
    [[nodiscard]] store_stats stats() const
    {
        store_stats s;
        for (const auto& t : tiers_)
            s.levels.push_back(t->stats());
        return s;
    }

    /// The peaks of every level count from what it holds now (the driver calls it as a run starts).
    void restart_peaks() noexcept
    {
        for (auto& t : tiers_)
            t->restart_peaks();
    }
    /// Waits for the user's work that each level's copies are ordered after (a device level's user
    /// stream, the copier's stream): the driver calls it when a user step returns (docs/cuda.md, "Time").
    void wait_for_user()
    {
        for (auto& t : tiers_)
            t->wait_for_user();
    }

    /// Waits until every asynchronous transfer has reached its level; raises a pending failure.
    void flush()
    {
        for (auto& t : tiers_)
            t->flush();
    }
    /// A resumed run (remat/driver/resume.hpp): level `level` itself already holds x_step, of `size` bytes, in
    /// `slot` (an hdf5_store opened in resume mode); an asynchronous level's engine learns of it here.
    void adopt(level_t level, slot_t slot, step_t step, std::size_t size) { tier(level).adopt(slot, step, size); }
    /// The engine's counters of an asynchronous level (zeros for a synchronous one).
    [[nodiscard]] async_counters counters(level_t level) const
    {
        const async_level* a = async_[index(level)];
        return a != nullptr ? a->counters() : async_counters{};
    }
    /// The I-th level itself. While the store lives, touch an asynchronous level only after flush().
    template <std::size_t I>
    [[nodiscard]] auto& level() noexcept
    {
        return std::get<I>(levels_);
    }

private:
    template <std::size_t... I>
    void bind(byte_copier copy, const std::array<tier_options, count>& options, std::index_sequence<I...>)
    {
        if (copy.target() == nullptr)
            throw argument_error("tiered_store's copier has no copy function");
        (bind_one<I>(copy, options[I]), ...);
    }
    template <std::size_t I>
    void bind_one(byte_copier copy, const tier_options& options)
    {
        auto& level = std::get<I>(levels_);
        if constexpr (requires { level.use_copier(copy); })
            level.use_copier(copy);
        else if (copy != host_copy)
            throw argument_error("level " + std::to_string(I) +
                                 " cannot take the store's copier (it has no use_copier; a wrapper must pass it on)");
        // The staging engine copies as the level does: with the store's copier, or, where the store was given
        // none, with the level's own (a pinned host level of device states, say).
        byte_copier staging = copy;
        if constexpr (requires { byte_copier{level.copier()}; })
            if (copy == host_copy)
                staging = level.copier();
        using adapter = detail::level_adapter<std::tuple_element_t<I, std::tuple<Levels...>>>;
        if (options.asynchronous) {
            // The level's own wait for the user's work (a device level's user stream) goes on from the
            // driver's thread; a level that copies with a copier waits as the staging copier does already.
            constexpr bool own_wait = requires { level.wait_for_user(); } && !requires { byte_copier{level.copier()}; };
            auto a = std::make_unique<async_level>(std::make_unique<adapter>(level), options.async, staging, own_wait);
            async_[I] = a.get();
            tiers_[I] = std::move(a);
        } else {
            tiers_[I] = std::make_unique<adapter>(level);
        }
    }
    [[nodiscard]] std::size_t index(level_t level) const
    {
        if (level < 0 || static_cast<std::size_t>(level) >= count)
            throw schedule_error("level " + std::to_string(level) + " does not exist; the store has " +
                                 std::to_string(count) + " levels");
        return static_cast<std::size_t>(level);
    }
    [[nodiscard]] detail::level_interface& tier(level_t level) const { return *tiers_[index(level)]; }
    std::tuple<Levels...> levels_;
    // Each level behind the interface: its adapter, or the asynchronous engine that owns one.
    std::array<std::unique_ptr<detail::level_interface>, count> tiers_{};
    std::array<async_level*, count> async_{}; // the engines among them, for counters()
};

} // namespace remat
