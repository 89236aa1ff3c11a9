// A storage level that times and counts its own writes and reads: throughput per level for the stress report.
#pragma once

#include "remat/store/storage_level.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <utility>

namespace remat::stress {

/// Seconds spent moving bytes into and out of one level, and the bytes moved in them.
struct transfer_time {
    double write_seconds = 0;
    double read_seconds = 0;
    std::uint64_t bytes_written = 0;
    std::uint64_t bytes_read = 0;
};

/// Forwards every call to `Level`, timing write and read and counting their bytes. When the level sits behind
/// an asynchronous engine the times and bytes are the worker's, which differ from what the caller handed
/// to the engine: restores served from its staging buffers move nothing here, read-aheads that nobody
/// consumes do. Read them after the engine is flushed.
template <storage_level Level>
class timed_level {
public:
    static constexpr bool prefetches = store_prefetches<Level>;

    explicit timed_level(Level level) : level_(std::move(level)) {}

    [[nodiscard]] level_capacity capacity() const { return level_.capacity(); }
    void write(slot_t slot, step_t step, const_bytes src)
    {
        const auto start = std::chrono::steady_clock::now();
        level_.write(slot, step, src);
        time_.write_seconds += seconds_since(start);
        time_.bytes_written += src.size;
    }
    void read(slot_t slot, step_t step, mutable_bytes dst)
    {
        const auto start = std::chrono::steady_clock::now();
        level_.read(slot, step, dst);
        time_.read_seconds += seconds_since(start);
        time_.bytes_read += dst.size;
    }
    void release(slot_t slot) { level_.release(slot); }
    void release_all() noexcept { level_.release_all(); }
    void prefetch(slot_t slot, step_t step)
    {
        if constexpr (requires { level_.prefetch(slot, step); })
            level_.prefetch(slot, step);
    }
    [[nodiscard]] std::size_t snapshot_bytes(slot_t slot) const { return level_.snapshot_bytes(slot); }
    [[nodiscard]] level_stats stats() const { return level_.stats(); }
    void restart_peaks() noexcept
        requires requires(Level& l) { l.restart_peaks(); }
    {
        level_.restart_peaks();
    }
    void wait_for_user()
        requires requires(Level& l) { l.wait_for_user(); }
    {
        level_.wait_for_user();
    }

    /// A tiered store's copier goes on to the level (a wrapper that dropped it would be refused).
    void use_copier(byte_copier copy)
        requires requires(Level& l, byte_copier c) { l.use_copier(c); }
    {
        level_.use_copier(copy);
    }
    [[nodiscard]] byte_copier copier() const noexcept
        requires requires(const Level& l) { l.copier(); }
    {
        return level_.copier();
    }

    [[nodiscard]] Level& inner() noexcept { return level_; }
    [[nodiscard]] const transfer_time& time() const noexcept { return time_; }

private:
    static double seconds_since(std::chrono::steady_clock::time_point start)
    {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    Level level_;
    transfer_time time_;
};

} // namespace remat::stress
