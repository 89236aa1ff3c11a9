// remat/driver/run_accounting.hpp — the counting side of a run: the time inside the user's callables, the
// snapshots held on all levels together, and the report made from these and the store's own counters.
//
//     remat::run_accounting acc;
//     acc.start(access);                               // before step 0: the store's counters as they are
//     acc.set_timing(true);                            // else the user's calls are not timed
//     acc.timed(remat::user_call::forward, [&] { step(k, x); });   // a user call, timed
//     remat::run_report r = acc.finish(access);        // counts since start, seconds
//
// Timing, off unless set_timing(true), reads the time-stamp counter twice per user call
// (remat/detail/tick_clock.hpp); off, it reads none, the report's per-callable seconds stay 0 and its
// user_timed is false (its `seconds`, the run's wall time, is measured either way).
#pragma once

#include "remat/detail/tick_clock.hpp"
#include "remat/driver/run_report.hpp"
#include "remat/error.hpp"
#include "remat/store/store_stats.hpp"
#include "remat/types.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

namespace remat {

/// The user's callables whose time a run reports apart.
enum class user_call { forward, adjoint, final_state, test };

class run_accounting {
public:
    /// Starts the run's clock and reads the store's counters (finish() subtracts them); the store's peaks
    /// restart from what it holds now. `store` is a remat::detail::store_access.
    template <class Access>
    void start(Access& store)
    {
        store.restart_peaks();
        before_ = store.stats();
        report_.levels.resize(static_cast<std::size_t>(store.level_count()));
        for (std::size_t i = 0; i < report_.levels.size() && i < before_.levels.size(); ++i)
            report_.levels[i].name = before_.levels[i].name;
        clock_ = detail::tick_calibration{};
    }

    /// Whether the user's calls are timed (default: no).
    void set_timing(bool on) noexcept { timing_ = on; }
    [[nodiscard]] bool timing() const noexcept { return timing_; }

    /// Runs the user's call `f` (returning what it returns), its time added to `call`'s when timing: one
    /// test of the flag, and no clock read when not timing.
    template <class F>
    auto timed(user_call call, F&& f)
    {
        if (!timing_)
            return f();
        const std::uint64_t start = detail::tick_clock::now();
        if constexpr (std::is_void_v<std::invoke_result_t<F&>>) {
            f();
            ticks_[static_cast<std::size_t>(call)] += detail::tick_clock::now() - start;
        } else {
            auto result = f();
            ticks_[static_cast<std::size_t>(call)] += detail::tick_clock::now() - start;
            return result;
        }
    }

    /// The report being filled: the executor counts steps into it.
    [[nodiscard]] run_report& report() noexcept { return report_; }
    [[nodiscard]] const run_report& report() const noexcept { return report_; }
    [[nodiscard]] std::size_t level_count() const noexcept { return report_.levels.size(); }

    /// A snapshot of `bytes` is held now / no longer. The snapshots of all levels together are the one count
    /// no level keeps: counted here for a store of several levels; one level counts its own.
    void hold(std::uint64_t bytes) noexcept
    {
        if (!several_levels())
            return;
        ++held_slots_;
        held_bytes_ += bytes;
        report_.peak_slots = std::max(report_.peak_slots, held_slots_);
        report_.peak_snapshot_bytes = std::max(report_.peak_snapshot_bytes, held_bytes_);
    }
    void let_go(std::uint64_t bytes) noexcept
    {
        held_slots_ -= std::min<slot_t>(held_slots_, 1);
        held_bytes_ -= std::min(held_bytes_, bytes);
    }
    [[nodiscard]] bool several_levels() const noexcept { return report_.levels.size() > 1; }

    /// The report: the counts, the seconds, and the store's counters since start().
    template <class Access>
    run_report finish(Access& store)
    {
        const double per_tick = clock_.seconds_per_tick();
        report_.seconds = clock_.elapsed_seconds();
        report_.forward_seconds = seconds(user_call::forward, per_tick);
        report_.adjoint_seconds = seconds(user_call::adjoint, per_tick);
        report_.final_seconds = seconds(user_call::final_state, per_tick);
        report_.test_seconds = seconds(user_call::test, per_tick);
        report_.user_timed = timing_;
        add_store_counts(store.stats());
        return report_;
    }

private:
    [[nodiscard]] double seconds(user_call call, double per_tick) const noexcept
    {
        return static_cast<double>(ticks_[static_cast<std::size_t>(call)]) * per_tick;
    }

    // The report's counts, peaks and waits, as the store's levels counted them since start().
    void add_store_counts(const store_stats& after)
    {
        for (std::size_t i = 0; i < report_.levels.size() && i < after.levels.size(); ++i) {
            const level_stats& now = after.levels[i];
            const level_stats then = i < before_.levels.size() ? before_.levels[i] : level_stats{};
            level_report& l = report_.levels[i];
            l.stores = now.stores - then.stores;
            l.restores = now.restores - then.restores;
            l.bytes_written = now.bytes_written - then.bytes_written;
            l.bytes_read = now.bytes_read - then.bytes_read;
            l.peak_slots = now.peak_slots;
            l.peak_bytes = now.peak_bytes;
            l.wait_seconds = now.wait_seconds - then.wait_seconds;
            l.overlapped_seconds = now.overlapped_seconds - then.overlapped_seconds;
            report_.stores += l.stores;
            report_.restores += l.restores;
            report_.bytes_written += l.bytes_written;
            report_.bytes_read += l.bytes_read;
            report_.wait_seconds += l.wait_seconds;
            report_.overlapped_seconds += l.overlapped_seconds;
        }
        if (!several_levels() && !report_.levels.empty()) {
            report_.peak_slots = report_.levels[0].peak_slots;
            report_.peak_snapshot_bytes = report_.levels[0].peak_bytes;
        }
    }

    run_report report_;
    store_stats before_; // the store's counters as the run started
    detail::tick_calibration clock_;
    std::array<std::uint64_t, 4> ticks_{}; // per user_call
    slot_t held_slots_ = 0;                // snapshots held on all levels together (several levels only)
    std::uint64_t held_bytes_ = 0;
    bool timing_ = false;
};

} // namespace remat
