// Driver overhead: wall time of remat::run over the time of the same number of raw step calls (the
// forward steps the run made, then T adjoint calls, on the same state, with no snapshots), for a
// trivial step and for a ~1 us step. Medians of repeated runs; the baseline runs in the same process,
// interleaved with the measured runs. Goal: <= 1.05 for the 1 us step.
//
//     ./build/bench/driver_overhead [repeats] [case]
//
// `case` runs one row alone: trivial:8, trivial:64, 1us:8 or 1us:64. The trivial rows calibrate nothing,
// so their instruction counts are the same from run to run (valgrind --tool=callgrind), a measure that the
// load of a shared machine does not move (docs/driver.md, "Time and memory").
#include "program_help.hpp"

#include "bench_util.hpp"

#include "remat/driver/run.hpp"
#include "remat/schedule/revolve.hpp"
#include "remat/store/host_store.hpp"

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

using state = std::array<double, 16>;

// `work` multiply-adds per call: 0 for the trivial step, calibrated to ~1 us otherwise.
struct busy_step {
    long work = 0;
    void operator()(remat::step_t k, state& x) const
    {
        x[static_cast<std::size_t>(k) % 16] += 1e-9;
        double acc = x[0];
        for (long i = 0; i < work; ++i)
            acc = acc * 0.999999 + 1e-9;
        x[1] = acc;
    }
};

long calibrate_one_microsecond()
{
    busy_step probe{1000};
    state x{};
    const int calls = 20000;
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i)
        probe(i, x);
    const double per_call = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / calls;
    remat::bench::keep(x);
    return static_cast<long>(1000.0 * 1e-6 / per_call);
}

struct measurement {
    double ratio;
    double driver_ns_per_step;
    double raw_ns_per_step;
    std::uint64_t forward_steps;
};

measurement measure(long work, remat::step_t steps, remat::slot_t slots, int repeats)
{
    const busy_step forward{work};
    const busy_step adjoint{work};
    const remat::revolve plan(steps, slots);
    remat::host_store store(slots);
    std::uint64_t forward_steps = 0;
    std::vector<double> driver, raw;
    for (int r = 0; r < repeats; ++r) {
        driver.push_back(remat::bench::time_runs(1, [&] {
            state x{};
            const remat::run_report report =
                remat::run(plan, store, x, remat::forward_step(forward), remat::adjoint_step(adjoint));
            forward_steps = report.forward_steps;
            remat::bench::keep(x);
        })[0]);
        raw.push_back(remat::bench::time_runs(1, [&] {
            state x{};
            for (std::uint64_t i = 0; i < forward_steps; ++i)
                forward(static_cast<remat::step_t>(i % static_cast<std::uint64_t>(steps)), x);
            for (remat::step_t k = steps - 1; k >= 0; --k)
                adjoint(k, x);
            remat::bench::keep(x);
        })[0]);
    }
    const double calls = static_cast<double>(forward_steps) + static_cast<double>(steps);
    const double d = remat::bench::median(driver), b = remat::bench::median(raw);
    return {d / b, d / calls * 1e9, b / calls * 1e9, forward_steps};
}

} // namespace

int main(int argc, char** argv)
{
    if (remat::examples::answered_help(
            argc, argv,
            "usage: driver_overhead [repeats] [case]\n"
            "Driver overhead: wall time of remat::run over the time of the same number of raw step calls (the\n"
            "forward steps the run made, then T adjoint calls, on the same state, with no snapshots), for a\n"
            "trivial step and for a ~1 us step.\n"))
        return 0;
    const int repeats = argc > 1 ? std::atoi(argv[1]) : 7;
    const std::string only = argc > 2 ? argv[2] : "";
    if (repeats < 1 ||
        (!only.empty() && only != "trivial:8" && only != "trivial:64" && only != "1us:8" && only != "1us:64")) {
        std::fprintf(stderr, "usage: driver_overhead [repeats >= 1] [trivial:8|trivial:64|1us:8|1us:64]\n");
        return 2;
    }
    const bool calibrate = only.empty() || only.starts_with("1us");
    const long microsecond = calibrate ? calibrate_one_microsecond() : 0;
    std::printf("driver overhead: revolve, median of %d runs against raw calls in the same process\n", repeats);
    std::printf("%-22s %8s %6s %14s %14s %14s %8s\n", "step", "T", "slots", "forward steps", "driver ns/call",
                "raw ns/call", "ratio");
    const struct {
        const char* name;
        const char* key;
        long work;
        remat::step_t steps;
    } cases[] = {{"trivial", "trivial", 0, 1'000'000}, {"~1 us", "1us", microsecond, 20'000}};
    for (const auto& c : cases) {
        for (const remat::slot_t slots : {8, 64}) {
            if (!only.empty() && only != std::string(c.key) + ":" + std::to_string(slots))
                continue;
            const measurement m = measure(c.work, c.steps, slots, repeats);
            std::printf("%-22s %8lld %6lld %14llu %14.1f %14.1f %8.3f\n", c.name, static_cast<long long>(c.steps),
                        static_cast<long long>(slots), static_cast<unsigned long long>(m.forward_steps),
                        m.driver_ns_per_step, m.raw_ns_per_step, m.ratio);
        }
    }
    return 0;
}
