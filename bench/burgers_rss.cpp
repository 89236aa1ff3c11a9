// Peak memory of example (b), the Burgers gradient within 1% of store-all: the peak resident set of
// the example process against its predicted snapshot bytes (goal: RSS <= predicted * 1.05 + 16 MiB).
// Baseline in the same run: the same program on a 2-step loop (one 80 KB snapshot) gives the process's
// fixed footprint: code, libraries, the field, its adjoint and scratch.
//
//     ./build/bench/burgers_rss [path/to/burgers_budget]
#include "program_help.hpp"

#include "burgers.hpp"

#include "remat/schedule/budget.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

// Runs the example with `args` and returns its peak RSS in bytes (ru_maxrss of the child), or -1.
long long peak_rss_of(const std::string& program, const std::string& steps, const std::string& points,
                      const std::string& percent)
{
    const pid_t child = fork();
    if (child == 0) {
        // The child's output is not needed here; the example prints its own report.
        if (std::freopen("/dev/null", "w", stdout) == nullptr)
            _exit(127);
        execl(program.c_str(), program.c_str(), steps.c_str(), points.c_str(), percent.c_str(), nullptr);
        _exit(127);
    }
    int status = 0;
    rusage usage{};
    if (wait4(child, &status, 0, &usage) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return -1;
    return static_cast<long long>(usage.ru_maxrss) * 1024; // kilobytes on Linux
}

} // namespace

int main(int argc, char** argv)
{
    if (remat::examples::answered_help(
            argc, argv,
            "usage: burgers_rss [path/to/burgers_budget]\n"
            "Peak memory of example (b), the Burgers gradient within 1% of store-all: the peak resident set of\n"
            "the example process against its predicted snapshot bytes (goal: RSS <= predicted * 1.05 + 16 MiB).\n"))
        return 0;
    const std::string program = argc > 1 ? argv[1] : REMAT_BURGERS_EXAMPLE;
    const remat::step_t steps = 10'000;
    const std::uint64_t points = 10'000;
    const std::uint64_t state_bytes = points * sizeof(double);
    const auto budget = static_cast<std::uint64_t>(static_cast<double>((steps - 1) * state_bytes) * 0.01);
    const remat::memory_plan plan = remat::plan_for_budget(steps, budget, state_bytes);
    const double predicted = static_cast<double>(plan.peak_snapshot_bytes);

    const long long baseline = peak_rss_of(program, "2", "10000", "100");
    const long long measured = peak_rss_of(program, "10000", "10000", "1");
    if (baseline < 0 || measured < 0) {
        std::fprintf(stderr, "burgers_rss: could not run %s\n", program.c_str());
        return 1;
    }
    const double goal = predicted * 1.05 + 16.0 * 1024 * 1024;
    const double mib = 1024.0 * 1024.0;
    std::printf("example (b): Burgers, 10^4 points, 10^4 steps, budget 1%% of store-all\n");
    std::printf("predicted snapshot bytes  %10.2f MiB (%lld slots)\n", predicted / mib,
                static_cast<long long>(plan.slots));
    std::printf("peak RSS                  %10.2f MiB\n", static_cast<double>(measured) / mib);
    std::printf("fixed footprint (T=2)     %10.2f MiB\n", static_cast<double>(baseline) / mib);
    std::printf("RSS above the footprint   %10.2f MiB (%.3f x predicted)\n",
                static_cast<double>(measured - baseline) / mib, static_cast<double>(measured - baseline) / predicted);
    std::printf("goal: RSS <= predicted * 1.05 + 16 MiB = %.2f MiB: %s\n", goal / mib,
                static_cast<double>(measured) <= goal ? "met" : "NOT met");
    return 0;
}
