// The threaded level engine (remat::async_level, src/store/async_level.cpp) on its own, in front of a level
// that records what reaches it and can hold its worker at a gate: writes return before the level sees
// them, a restore of a snapshot still in staging never reads the level, a snapshot freed before the
// worker reached it is never written, a prefetched snapshot is restored without a demand read, a failure
// on the worker is raised once on the caller and again by each read of the snapshot it lost, and random
// sequences of writes, reads, prefetches and frees read back what a plain map holds.
#define BOOST_TEST_MODULE async_level
#include <boost/test/unit_test.hpp>

#include "remat/error.hpp"
#include "remat/store/async_level.hpp"
#include "remat/store/detail/level_interface.hpp"

#include <condition_variable>
#include <cstddef>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <span>
#include <string>
#include <vector>

namespace {

using bytes = std::vector<std::byte>;

bytes pattern(remat::step_t step, std::size_t size)
{
    bytes b(size);
    for (std::size_t i = 0; i < size; ++i)
        b[i] = static_cast<std::byte>((static_cast<std::size_t>(step) * 131 + i * 7) & 0xff);
    return b;
}

/// What the worker does to the level, shared with the test (the level itself belongs to the engine).
struct level_log {
    std::mutex mutex;
    std::condition_variable changed;
    bool gate_open = true;
    int writes_entered = 0;
    std::multiset<remat::step_t> written;  // steps whose write reached the level
    std::multiset<remat::step_t> read;     // steps read from the level
    std::set<remat::step_t> failing_steps; // writes of these throw io_error
};

/// A level in a std::map that logs every transfer and blocks each write while the gate is closed.
class recording_level final : public remat::detail::level_interface {
public:
    explicit recording_level(level_log& log) : log_(log) {}

    void write(remat::slot_t slot, remat::step_t step, remat::const_bytes src) override
    {
        std::unique_lock lock(log_.mutex);
        ++log_.writes_entered;
        log_.changed.notify_all();
        log_.changed.wait(lock, [&] { return log_.gate_open; });
        if (log_.failing_steps.contains(step))
            throw remat::io_error("recording level: write of x_" + std::to_string(step) + " failed");
        slots_[slot] = {step, bytes(src.data, src.data + src.size)};
        log_.written.insert(step);
    }
    void read(remat::slot_t slot, remat::step_t step, remat::mutable_bytes dst) override
    {
        // On the worker (Boost.Test's checks are the main thread's): a read that does not match throws.
        std::lock_guard lock(log_.mutex);
        const auto it = slots_.find(slot);
        if (it == slots_.end() || it->second.first != step || it->second.second.size() != dst.size)
            throw remat::integrity_error("recording level: slot " + std::to_string(slot) + " does not hold x_" +
                                         std::to_string(step) + " of that size");
        std::memcpy(dst.data, it->second.second.data(), dst.size);
        log_.read.insert(step);
    }
    void write(remat::slot_t slot, remat::step_t step, remat::const_parts src) override
    {
        if (src.size() != 1)
            throw remat::argument_error("recording level: one part only");
        write(slot, step, src[0]);
    }
    void read(remat::slot_t slot, remat::step_t step, remat::mutable_parts dst) override
    {
        if (dst.size() != 1)
            throw remat::argument_error("recording level: one part only");
        read(slot, step, dst[0]);
    }
    [[nodiscard]] std::span<const std::size_t> part_sizes(remat::slot_t) const override { return {}; }
    void release(remat::slot_t slot) override
    {
        std::lock_guard lock(log_.mutex);
        slots_.erase(slot);
    }
    void release_all() noexcept override
    {
        std::lock_guard lock(log_.mutex);
        slots_.clear();
    }
    [[nodiscard]] std::size_t snapshot_bytes(remat::slot_t slot) const override
    {
        std::lock_guard lock(log_.mutex);
        const auto it = slots_.find(slot);
        return it == slots_.end() ? 0 : it->second.second.size();
    }
    [[nodiscard]] remat::level_capacity capacity() const override { return {.slots = 64}; }
    [[nodiscard]] remat::level_stats stats() const override { return {.name = "recording"}; }

private:
    level_log& log_;
    std::map<remat::slot_t, std::pair<remat::step_t, bytes>> slots_;
};

struct engine {
    level_log log;
    remat::async_level level;

    explicit engine(std::size_t staging_buffers)
        : level(std::make_unique<recording_level>(log), remat::async_options{.staging_buffers = staging_buffers})
    {
    }
    ~engine() { open_gate(); }
    void close_gate()
    {
        std::lock_guard lock(log.mutex);
        log.gate_open = false;
    }
    void open_gate()
    {
        std::lock_guard lock(log.mutex);
        log.gate_open = true;
        log.changed.notify_all();
    }
    /// Waits until the worker is inside the level's write number `n` (held there while the gate is closed).
    void await_writes_entered(int n)
    {
        std::unique_lock lock(log.mutex);
        log.changed.wait(lock, [&] { return log.writes_entered >= n; });
    }
    std::size_t written(remat::step_t step)
    {
        std::lock_guard lock(log.mutex);
        return log.written.count(step);
    }
    std::size_t read_from_level(remat::step_t step)
    {
        std::lock_guard lock(log.mutex);
        return log.read.count(step);
    }
    void write(remat::slot_t slot, remat::step_t step, const bytes& data)
    {
        level.write(slot, step, remat::const_bytes{data.data(), data.size()});
    }
    bytes read(remat::slot_t slot, remat::step_t step, std::size_t size)
    {
        bytes out(size);
        level.read(slot, step, remat::mutable_bytes{out.data(), out.size()});
        return out;
    }
};

constexpr std::size_t snapshot = 4096;

} // namespace

BOOST_AUTO_TEST_CASE(a_write_returns_before_the_level_sees_it)
{
    engine e(4);
    e.close_gate();
    e.write(0, 10, pattern(10, snapshot));
    e.write(1, 20, pattern(20, snapshot));
    e.await_writes_entered(1);
    BOOST_TEST(e.written(10) == 0u); // held at the gate: the caller went on
    e.open_gate();
    e.level.flush();
    BOOST_TEST(e.written(10) == 1u);
    BOOST_TEST(e.written(20) == 1u);
}

BOOST_AUTO_TEST_CASE(a_snapshot_still_in_staging_is_restored_without_reading_the_level)
{
    engine e(4);
    e.close_gate();
    e.write(0, 10, pattern(10, snapshot));
    e.write(1, 20, pattern(20, snapshot));
    BOOST_TEST(e.read(1, 20, snapshot) == pattern(20, snapshot)); // its write waits behind x_10's
    BOOST_TEST(e.level.counters().staging_hits == 1u);
    e.open_gate();
    e.level.flush();
    BOOST_TEST(e.read_from_level(20) == 0u);
}

BOOST_AUTO_TEST_CASE(a_snapshot_freed_before_the_worker_reached_it_is_never_written)
{
    engine e(4);
    e.close_gate();
    e.write(0, 10, pattern(10, snapshot));
    e.await_writes_entered(1); // the worker holds x_10's write; x_20's waits in the queue
    e.write(1, 20, pattern(20, snapshot));
    e.level.release(1);
    e.open_gate();
    e.level.flush();
    BOOST_TEST(e.written(10) == 1u);
    BOOST_TEST(e.written(20) == 0u);
    BOOST_TEST(e.level.counters().skipped_writes == 1u);
}

BOOST_AUTO_TEST_CASE(a_prefetched_snapshot_is_restored_without_a_demand_read)
{
    engine e(1); // one staging buffer: each write evicts the one before
    e.write(0, 10, pattern(10, snapshot));
    e.write(1, 20, pattern(20, snapshot));
    e.level.flush();
    e.level.prefetch(0, 10);
    e.level.flush();
    const auto before = e.level.counters();
    BOOST_TEST(e.read(0, 10, snapshot) == pattern(10, snapshot));
    const auto after = e.level.counters();
    BOOST_TEST(after.demand_reads == before.demand_reads);
    BOOST_TEST(after.cache_hits == before.cache_hits + 1);
    BOOST_TEST(e.read_from_level(10) == 1u); // the prefetch's read, once
    BOOST_TEST(after.prefetches >= 1u);
}

BOOST_AUTO_TEST_CASE(a_snapshot_no_buffer_holds_is_read_on_demand)
{
    engine e(1);
    e.write(0, 10, pattern(10, snapshot));
    e.write(1, 20, pattern(20, snapshot)); // evicts x_10's buffer once x_10 is written
    e.level.flush();
    BOOST_TEST(e.read(0, 10, snapshot) == pattern(10, snapshot));
    BOOST_TEST(e.level.counters().demand_reads == 1u);
    BOOST_TEST(e.read_from_level(10) == 1u);
}

BOOST_AUTO_TEST_CASE(a_failure_on_the_worker_is_raised_once_and_by_each_read_of_what_it_lost)
{
    engine e(4);
    e.log.failing_steps = {20};
    e.write(0, 10, pattern(10, snapshot));
    e.write(1, 20, pattern(20, snapshot));
    BOOST_CHECK_THROW(e.level.flush(), remat::io_error);
    BOOST_CHECK_NO_THROW(e.level.flush()); // raised once
    BOOST_CHECK_THROW(e.read(1, 20, snapshot), remat::io_error);
    BOOST_CHECK_THROW(e.read(1, 20, snapshot), remat::io_error);
    BOOST_TEST(e.read(0, 10, snapshot) == pattern(10, snapshot)); // written before the failure
}

// A write is checked on the caller, in the words every store uses (remat/store/detail/slot_checks.hpp): x_-1
// was handed to the worker, and the slot then read as empty while a staging buffer held it.
BOOST_AUTO_TEST_CASE(a_write_is_checked_on_the_caller_as_every_store_checks_it)
{
    engine e(2);
    e.write(0, 10, pattern(10, snapshot));
    const auto says = [](const char* message) {
        return [message](const remat::schedule_error& x) { return std::string(x.what()) == message; };
    };
    BOOST_CHECK_EXCEPTION(e.write(0, 11, pattern(11, snapshot)), remat::schedule_error,
                          says("store into slot 0 of level recording, which still holds x_10 (free it first)"));
    BOOST_CHECK_EXCEPTION(e.write(1, -1, pattern(1, snapshot)), remat::schedule_error,
                          says("store of x_-1 into slot 1 of level recording: a step is at least 0"));
    e.level.flush();
    BOOST_TEST(e.written(-1) == 0u);
    BOOST_TEST(e.level.snapshot_bytes(1) == 0u);
    e.write(1, 20, pattern(20, snapshot)); // the slot is still empty
    BOOST_TEST(e.read(1, 20, snapshot) == pattern(20, snapshot));
}

BOOST_AUTO_TEST_CASE(random_transfers_read_back_what_a_map_holds)
{
    for (const std::size_t buffers : {1u, 2u, 5u}) {
        engine e(buffers);
        std::mt19937_64 random(buffers);
        std::map<remat::slot_t, std::pair<remat::step_t, bytes>> reference;
        remat::step_t next_step = 0;
        for (int op = 0; op < 600; ++op) {
            const auto slot = static_cast<remat::slot_t>(random() % 6);
            const auto held = reference.find(slot);
            switch (random() % 4) {
            case 0: // write (into a free slot, as the driver does)
                if (held == reference.end()) {
                    const std::size_t size = 1 + random() % 3000;
                    reference[slot] = {next_step, pattern(next_step, size)};
                    e.write(slot, next_step, reference[slot].second);
                    ++next_step;
                }
                break;
            case 1: // restore
                if (held != reference.end())
                    BOOST_TEST_REQUIRE(e.read(slot, held->second.first, held->second.second.size()) ==
                                       held->second.second);
                break;
            case 2: // read-ahead
                if (held != reference.end())
                    e.level.prefetch(slot, held->second.first);
                break;
            default: // free
                if (held != reference.end()) {
                    e.level.release(slot);
                    reference.erase(held);
                }
            }
            if (op % 97 == 0)
                e.level.flush();
        }
        e.level.flush();
        for (const auto& [slot, snapshot_held] : reference)
            BOOST_TEST(e.read(slot, snapshot_held.first, snapshot_held.second.size()) == snapshot_held.second);
    }
}
