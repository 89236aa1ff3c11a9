// remat/store/level_accounting.hpp — the one place where a storage level's counts and peaks are kept.
//
// Every level remat provides (host_store, hdf5_store, cuda::device_store, the asynchronous engine of a
// tiered_store, mpi::parallel_hdf5_store) reports each snapshot it takes in, gives back and lets go to
// one level_accounting, and answers stats() from it; the driver's run report reads those stats instead
// of counting the same snapshots again (docs/driver.md, "Accounting").
#pragma once

#include "remat/store/store_stats.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <utility>

namespace remat {

/// The counters of one storage level (remat::level_stats), kept as the level reports what it did. A
/// level of one's own may keep one too and return stats() from its stats().
///
///     remat::level_accounting counts("ram");
///     counts.wrote(4096);                  // a snapshot of 4096 bytes entered a slot
///     counts.read(4096);                   // and was read back
///     counts.released(4096);               // its slot was freed
///     counts.stats().peak_bytes;           // 4096
class level_accounting {
public:
    explicit level_accounting(std::string name = {}) { stats_.name = std::move(name); }

    /// A snapshot of `bytes` was written into a free slot.
    void wrote(std::uint64_t bytes) noexcept
    {
        ++stats_.stores;
        stats_.bytes_written += bytes;
        holds(bytes);
    }
    /// A slot holds a snapshot of `bytes` that was not written through this object (found in a file
    /// opened to resume a run): it is in use, but no store is counted.
    void holds(std::uint64_t bytes) noexcept
    {
        ++stats_.slots_in_use;
        stats_.bytes_in_use += bytes;
        stats_.peak_slots = std::max(stats_.peak_slots, stats_.slots_in_use);
        stats_.peak_bytes = std::max(stats_.peak_bytes, stats_.bytes_in_use);
    }
    /// A snapshot of `bytes` was read out of a slot.
    void read(std::uint64_t bytes) noexcept
    {
        ++stats_.restores;
        stats_.bytes_read += bytes;
    }
    /// The slot holding a snapshot of `bytes` was freed.
    void released(std::uint64_t bytes) noexcept
    {
        stats_.slots_in_use -= std::min<slot_t>(stats_.slots_in_use, 1);
        stats_.bytes_in_use -= std::min(stats_.bytes_in_use, bytes);
    }
    /// Every slot was freed.
    void released_all() noexcept
    {
        stats_.slots_in_use = 0;
        stats_.bytes_in_use = 0;
    }
    /// The caller waited `seconds` for the level's transfers.
    void waited(double seconds) noexcept { stats_.wait_seconds += seconds; }
    /// `seconds` of the level's transfers were hidden behind the caller's compute.
    void overlapped(double seconds) noexcept { stats_.overlapped_seconds += seconds; }
    /// The peaks start again from what the level holds now: the driver calls it as a run starts, so that
    /// the run report's peaks are the run's even on a store used before.
    void restart_peaks() noexcept
    {
        stats_.peak_slots = stats_.slots_in_use;
        stats_.peak_bytes = stats_.bytes_in_use;
    }

    [[nodiscard]] const level_stats& stats() const noexcept { return stats_; }

    /// Adds the time from its construction to its destruction to the level's wait_seconds.
    ///
    ///     { remat::level_accounting::wait_timer t(counts); blocking_io(); }
    class wait_timer {
    public:
        explicit wait_timer(level_accounting& counts) noexcept
            : counts_(counts), start_(std::chrono::steady_clock::now())
        {
        }
        ~wait_timer()
        {
            counts_.waited(std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
        }
        wait_timer(const wait_timer&) = delete;
        wait_timer& operator=(const wait_timer&) = delete;

    private:
        level_accounting& counts_;
        std::chrono::steady_clock::time_point start_;
    };

private:
    level_stats stats_;
};

} // namespace remat
