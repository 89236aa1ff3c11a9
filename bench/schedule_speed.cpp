// Schedule generation speed: nanoseconds per action, median of repeated passes, for T = 10^7 with
// s = 10 and s = 100 (goal: <= 10 ns per action). Baseline in the same run: the store-all cursor, whose
// per-action work is trivial, so the ratio shows what the binomial arithmetic adds.
//
//     ./build/bench/schedule_speed [steps] [repeats]
#include "program_help.hpp"

#include "bench_util.hpp"

#include "remat/schedule/revolve.hpp"
#include "remat/schedule/uniform.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

struct pass_result {
    double ns_per_action;
    std::uint64_t actions;
};

template <class Schedule>
pass_result measure(const Schedule& plan, int repeats)
{
    pass_result r{};
    r.ns_per_action = remat::bench::ns_per_action(plan, repeats, r.actions);
    return r;
}

} // namespace

int main(int argc, char** argv)
{
    if (remat::examples::answered_help(
            argc, argv,
            "usage: schedule_speed [steps] [repeats]\n"
            "Schedule generation speed: nanoseconds per action, median of repeated passes, for T = 10^7 with s =\n"
            "10 and s = 100 (goal: <= 10 ns per action).\n"))
        return 0;
    const remat::step_t steps = argc > 1 ? std::stoll(argv[1]) : 10'000'000;
    const int repeats = argc > 2 ? std::atoi(argv[2]) : 7;
    std::printf("schedule generation, T = %lld, median of %d passes\n", static_cast<long long>(steps), repeats);
    const pass_result baseline = measure(remat::store_all(steps, steps), repeats);
    std::printf("%-22s %12s %10s %8s\n", "schedule", "actions", "ns/action", "ratio");
    std::printf("%-22s %12llu %10.2f %8.2f\n", "store-all (baseline)",
                static_cast<unsigned long long>(baseline.actions), baseline.ns_per_action, 1.0);
    for (const remat::slot_t slots : {10, 100}) {
        const pass_result r = measure(remat::revolve(steps, slots), repeats);
        std::printf("%-22s %12llu %10.2f %8.2f\n", ("revolve s=" + std::to_string(slots)).c_str(),
                    static_cast<unsigned long long>(r.actions), r.ns_per_action,
                    r.ns_per_action / baseline.ns_per_action);
    }
    const pass_result u = measure(remat::uniform::fit(steps, 10'000), repeats);
    std::printf("%-22s %12llu %10.2f %8.2f\n", "uniform s=10000", static_cast<unsigned long long>(u.actions),
                u.ns_per_action, u.ns_per_action / baseline.ns_per_action);
    return 0;
}
