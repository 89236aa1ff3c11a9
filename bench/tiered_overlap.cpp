// How much slow-level transfer time the tiered store hides: a RAM level plus a level whose every write
// and read takes a fixed time (a stand-in for a disk), run synchronously (the baseline) and
// asynchronously with read-ahead, in the same process. Prints medians of the total time, the time the
// loop waited for transfers, and the share of transfer time overlapped with compute.
//
//     ./build/bench/tiered_overlap [transfer-us] [step-us] [repeats] [staging-buffers]
#include "program_help.hpp"

#include "bench_util.hpp"
#include "vector_schedule.hpp" // tests/support: a schedule held as a list, spread over two levels

#include "remat/driver/run.hpp"
#include "remat/schedule/revolve.hpp"
#include "remat/store/host_store.hpp"
#include "remat/store/tiered_store.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

// A host_store whose transfers take `delay` each, like a device with fixed latency.
class delayed_level {
public:
    delayed_level(remat::slot_t slots, std::chrono::microseconds delay)
        : store_(remat::level_capacity{.slots = slots}, remat::host_store::options{.name = "slow"}), delay_(delay)
    {
    }
    [[nodiscard]] remat::level_capacity capacity() const { return store_.capacity(); }
    void write(remat::slot_t s, remat::step_t k, remat::const_bytes b)
    {
        std::this_thread::sleep_for(delay_);
        store_.write(s, k, b);
    }
    void read(remat::slot_t s, remat::step_t k, remat::mutable_bytes b)
    {
        std::this_thread::sleep_for(delay_);
        store_.read(s, k, b);
    }
    void release(remat::slot_t s) { store_.release(s); }
    void release_all() noexcept { store_.release_all(); }
    [[nodiscard]] std::size_t snapshot_bytes(remat::slot_t s) const { return store_.snapshot_bytes(s); }
    [[nodiscard]] remat::level_stats stats() const { return store_.stats(); }
    void restart_peaks() noexcept { store_.restart_peaks(); }

private:
    remat::host_store store_;
    std::chrono::microseconds delay_;
};

} // namespace

int main(int argc, char** argv)
{
    if (remat::examples::answered_help(
            argc, argv,
            "usage: tiered_overlap [transfer-us] [step-us] [repeats] [staging-buffers]\n"
            "How much slow-level transfer time the tiered store hides: a RAM level plus a level whose every write\n"
            "and read takes a fixed time (a stand-in for a disk), run synchronously (the baseline) and\n"
            "asynchronously with read-ahead, in the same process.\n"))
        return 0;
    const auto transfer = std::chrono::microseconds(argc > 1 ? std::atol(argv[1]) : 500);
    const long step_us = argc > 2 ? std::atol(argv[2]) : 200;
    const int repeats = argc > 3 ? std::atoi(argv[3]) : 5;
    const std::size_t buffers = argc > 4 ? static_cast<std::size_t>(std::atol(argv[4])) : 8;
    const remat::step_t steps = 400;
    const remat::test::vector_schedule plan = remat::test::split_levels(remat::revolve(steps, 12), 3);
    using state = std::vector<double>;
    auto step = [&](remat::step_t k, state& x) { // a fixed amount of work per step
        const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(step_us);
        while (std::chrono::steady_clock::now() < until)
            x[static_cast<std::size_t>(k) % x.size()] += 1e-9;
    };

    std::printf("tiered store: RAM (3 slots) + a level with %lld us transfers (9 slots), revolve T=%lld, "
                "%ld us steps, %zu staging buffers, median of %d\n",
                static_cast<long long>(transfer.count()), static_cast<long long>(steps), step_us, buffers, repeats);
    std::printf("%-28s %10s %10s %10s %12s\n", "mode", "total s", "waited s", "busy s", "hidden share");
    for (const bool asynchronous : {false, true}) {
        std::vector<double> total, waited, busy;
        for (int r = 0; r < repeats; ++r) {
            remat::tiered_store<remat::host_store, delayed_level> store(
                {remat::tier_options{},
                 remat::tier_options{.asynchronous = asynchronous, .async = {.staging_buffers = buffers}}},
                remat::host_store(3), delayed_level(9, transfer));
            state x(1024, 1.0);
            const remat::run_report report = remat::run(plan, store, x, remat::forward_step(step),
                                                        remat::adjoint_step(step), remat::run_options{.lookahead = 16});
            total.push_back(report.seconds);
            const remat::async_counters c = store.counters(1);
            waited.push_back(asynchronous ? c.wait_seconds : 0.0);
            if (asynchronous && r == 0)
                std::printf("  level 1: %llu restores: %llu from cache, %llu from staging, %llu demand reads; "
                            "%llu writes, %llu skipped\n",
                            static_cast<unsigned long long>(report.levels[1].restores),
                            static_cast<unsigned long long>(c.cache_hits),
                            static_cast<unsigned long long>(c.staging_hits),
                            static_cast<unsigned long long>(c.demand_reads),
                            static_cast<unsigned long long>(report.levels[1].stores),
                            static_cast<unsigned long long>(c.skipped_writes));
            busy.push_back(asynchronous ? c.busy_seconds : 0.0);
        }
        const double b = remat::bench::median(busy), w = remat::bench::median(waited);
        std::printf("%-28s %10.3f %10.3f %10.3f %12s\n",
                    asynchronous ? "asynchronous, read-ahead" : "synchronous (baseline)", remat::bench::median(total),
                    w, b,
                    asynchronous ? std::to_string(b > 0 ? std::max(0.0, b - w) / b : 0.0).substr(0, 5).c_str() : "-");
    }
    return 0;
}
