// Driver overhead: wall time of remat::run over the time of the same number of raw step calls (the
// forward steps the run made, then T adjoint calls, on the same state, with no snapshots), for a
// trivial step and for a ~1 us step, as runs are made by default (the user's calls not timed) and with
// run_options::time_user_code = true ("timed"). Medians of repeated runs; the baseline runs in the same
// process, interleaved with the measured runs, and calls the steps as the driver does (a counter that
// wraps at T, no division per call). `ns/action` is the driver's time above the raw calls divided by the
// number of actions the schedule emits (every advance, store, restore, free and reverse; an advance of
// many steps is one action): the schedule's cursor, the executor's checks, the snapshot copies and the
// bookkeeping. Goals: <= 1.05 for the 1 us step, <= 8 ns per action for the trivial step.
//
//     ./build/bench/driver_overhead [repeats] [case]
//
// `case` runs one row alone: trivial:8, trivial:64, 1us:8 or 1us:64. The trivial rows calibrate nothing,
// so their instruction counts are the same from run to run (valgrind --tool=callgrind), a measure that the
// load of a shared machine does not move (docs/driver.md, "Time and memory"). The driven runs, the raw
// calls and the counting of the actions are separate functions, so that callgrind_annotate --inclusive=yes
// gives each its instructions.
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
#include <type_traits>
#include <vector>

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
    double timed_seconds;   // remat::run with run_options::time_user_code = true
    double untimed_seconds; // remat::run as by default: the user's calls not timed
    double raw_seconds;     // the same calls, no driver
    std::uint64_t forward_steps;
    std::uint64_t actions;
};

// The raw calls: the forward steps in runs of 0..T-1 (a counter, no division per call), then the adjoints.
// Aligned to a cache line: the loop then sits at the same place in every build of this file, whose raw calls are
// compared across builds (unaligned, two builds of the same source differed by 1 ns per call).
[[gnu::noinline, gnu::aligned(64)]] void raw_calls(const busy_step& forward, const busy_step& adjoint,
                                                   remat::step_t steps, std::uint64_t forward_steps)
{
    state x{};
    remat::step_t k = 0;
    for (std::uint64_t i = 0; i < forward_steps; ++i) {
        forward(k, x);
        if (++k == steps)
            k = 0;
    }
    for (k = steps - 1; k >= 0; --k)
        adjoint(k, x);
    remat::bench::keep(x);
}

// Every action the schedule emits.
[[gnu::noinline]] std::uint64_t count_actions(const remat::revolve& plan)
{
    std::uint64_t actions = 0;
    auto cursor = plan.cursor();
    for (remat::action a; cursor.next(a);)
        ++actions;
    return actions;
}

measurement measure(long work, remat::step_t steps, remat::slot_t slots, int repeats)
{
    const busy_step forward{work};
    const busy_step adjoint{work};
    const remat::revolve plan(steps, slots);
    remat::host_store store(slots);
    measurement m{};
    std::vector<double> timed, untimed, raw;
    // (a template: the timed and the untimed runs are two functions, each with its own instruction count)
    const auto driven = [&](auto time_user_code) {
        return remat::bench::time_runs(1, [&] {
            state x{};
            const remat::run_report report =
                remat::run(plan, store, x, remat::forward_step(forward), remat::adjoint_step(adjoint),
                           remat::run_options{.time_user_code = time_user_code});
            m.forward_steps = report.forward_steps;
            remat::bench::keep(x);
        })[0];
    };
    for (int r = 0; r < repeats; ++r) {
        untimed.push_back(driven(std::false_type{}));
        timed.push_back(driven(std::true_type{}));
        raw.push_back(remat::bench::time_runs(1, [&] { raw_calls(forward, adjoint, steps, m.forward_steps); })[0]);
    }
    m.actions = count_actions(plan);
    m.timed_seconds = remat::bench::median(timed);
    m.untimed_seconds = remat::bench::median(untimed);
    m.raw_seconds = remat::bench::median(raw);
    return m;
}

void print_row(const char* name, remat::step_t steps, remat::slot_t slots, const measurement& m, double driver)
{
    const double calls = static_cast<double>(m.forward_steps) + static_cast<double>(steps);
    std::printf("%-18s %8lld %6lld %14llu %10llu %12.1f %12.1f %8.3f %10.1f\n", name, static_cast<long long>(steps),
                static_cast<long long>(slots), static_cast<unsigned long long>(m.forward_steps),
                static_cast<unsigned long long>(m.actions), driver / calls * 1e9, m.raw_seconds / calls * 1e9,
                driver / m.raw_seconds, (driver - m.raw_seconds) / static_cast<double>(m.actions) * 1e9);
}

} // namespace

int main(int argc, char** argv)
{
    if (remat::examples::answered_help(
            argc, argv,
            "usage: driver_overhead [repeats] [case]\n"
            "Driver overhead: wall time of remat::run over the time of the same number of raw step calls (the\n"
            "forward steps the run made, then T adjoint calls, on the same state, with no snapshots), for a\n"
            "trivial step and for a ~1 us step, untimed (the default) and timed (time_user_code). ns/action:\n"
            "the driver's time above the raw calls per action the schedule emits.\n"))
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
    std::printf("%-18s %8s %6s %14s %10s %12s %12s %8s %10s\n", "step", "T", "slots", "forward steps", "actions",
                "driver ns/call", "raw ns/call", "ratio", "ns/action");
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
            print_row(c.name, c.steps, slots, m, m.untimed_seconds);
            print_row((std::string(c.name) + ", timed").c_str(), c.steps, slots, m, m.timed_seconds);
        }
    }
    return 0;
}
