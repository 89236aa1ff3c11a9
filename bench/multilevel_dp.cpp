// Multi-level schedules: time to build the exact table (median of repeated builds), the predicted cost
// against a baseline priced in the same run (revolve on the fastest level alone, which never touches
// the slow level), and the gap of the near-optimal structures (grid, spine, nested) to the exact optimum.
//
//     ./build/bench/multilevel_dp [repeats]          (default 3)
//
// Goals (docs/multilevel.md): two levels, T = 10^4, s = 1..16 memory slots: < 10 s each; three levels,
// T = 1000: < 10 s; near-optimal within 1% of the exact optimum where both run.
#include "bench_util.hpp"

#include "remat/schedule/multilevel.hpp"
#include "remat/schedule/revolve.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using remat::cost_model;
using remat::level_spec;
using remat::multilevel;
using remat::step_t;

constexpr std::uint64_t inf = level_spec::unlimited;

multilevel build(step_t steps, const cost_model& m, multilevel::method how,
                 multilevel::structure only = multilevel::structure::binomial, step_t size = 0,
                 std::uint64_t work_limit = multilevel::options{}.near_optimal_work_limit)
{
    multilevel::options o;
    o.how = how;
    o.only = only;
    (only == multilevel::structure::grid ? o.grid : o.horizon) = size;
    o.near_optimal_work_limit = work_limit;
    return multilevel(steps, m, o);
}

struct timed {
    double seconds;
    double cost;
};

timed exact(step_t steps, const cost_model& m, int repeats)
{
    double cost = 0;
    const auto runs = remat::bench::time_runs(repeats, [&] {
        const multilevel plan = build(steps, m, multilevel::method::exact);
        cost = plan.cost().predicted_cost;
    });
    return {remat::bench::median(runs), cost};
}

// The baseline: the binomial schedule on level 0 alone, priced by the same model.
double revolve_on_level_0(step_t steps, const cost_model& m)
{
    const auto slots = static_cast<remat::slot_t>(std::min<std::uint64_t>(m.levels[0].slots, 1u << 30));
    return remat::predicted_cost(remat::revolve(steps, slots).cost(), m);
}

std::string describe(const cost_model& m)
{
    std::string s;
    for (const level_spec& l : m.levels) {
        char buffer[96];
        std::snprintf(buffer, sizeof buffer, "%s%s:%s:%g:%g", s.empty() ? "" : " ", l.name.c_str(),
                      l.slots == inf ? "inf" : std::to_string(l.slots).c_str(), l.write_cost, l.read_cost);
        s += buffer;
    }
    return s;
}

const char* name_of(multilevel::structure s)
{
    static constexpr const char* names[] = {"binomial", "exact", "grid", "spine", "nested"};
    return names[static_cast<int>(s)];
}

// One near-optimal plan against the exact cost: its structure, period (k or g), build time and gap.
void gap_row(step_t steps, const cost_model& m, multilevel::structure only, step_t size, double exact_cost,
             std::uint64_t work_limit = multilevel::options{}.near_optimal_work_limit)
{
    double seconds = 0;
    double cost = 0;
    const multilevel* shown = nullptr;
    std::vector<multilevel> keep;
    const auto runs = remat::bench::time_runs(1, [&] {
        keep.push_back(build(steps, m, multilevel::method::near_optimal, only, size, work_limit));
        shown = &keep.back();
    });
    seconds = runs.front();
    cost = shown->cost().predicted_cost;
    std::printf("  %-44s %-7s size %-5lld k/g=%-5lld %7.3f s  near %11.1f exact %11.1f gap %7.3f%%\n",
                describe(m).c_str(), name_of(shown->structure_used()), static_cast<long long>(size),
                static_cast<long long>(shown->period()), seconds, cost, exact_cost, 100.0 * (cost / exact_cost - 1.0));
}

} // namespace

int main(int argc, char** argv)
{
    const int repeats = argc > 1 ? std::atoi(argv[1]) : 3;

    std::printf("two levels, T = 10000: host s slots (free), disk unlimited (write 5, read 5); median of %d builds\n",
                repeats);
    std::printf("  %3s %10s %14s %14s %8s\n", "s", "table s", "predicted", "revolve(s)", "ratio");
    for (std::uint64_t s = 1; s <= 16; ++s) {
        const cost_model m{{{"host", s, 0, 0}, {"disk", inf, 5, 5}}};
        const timed t = exact(10000, m, s <= 8 ? repeats : 1);
        const double baseline = revolve_on_level_0(10000, m);
        std::printf("  %3llu %10.3f %14.1f %14.1f %8.4f\n", static_cast<unsigned long long>(s), t.seconds, t.cost,
                    baseline, t.cost / baseline);
    }

    std::printf("two levels, T = 10000, finite disk (write 2, read 2); one build each\n");
    for (const auto& [s, d] :
         std::vector<std::pair<std::uint64_t, std::uint64_t>>{{4, 4}, {16, 4}, {4, 16}, {8, 5000}}) {
        const cost_model m{{{"host", s, 0, 0}, {"disk", d, 2, 2}}};
        const timed t = exact(10000, m, 1);
        std::printf("  %-44s table %8.3f s  predicted %12.1f  revolve(s) ratio %.4f\n", describe(m).c_str(), t.seconds,
                    t.cost, t.cost / revolve_on_level_0(10000, m));
    }

    std::printf("three levels, T = 1000: device, host, disk; median of %d builds\n", repeats);
    for (const cost_model& m : {cost_model{{{"device", 4, 0, 0}, {"host", 16, 1, 1}, {"disk", inf, 10, 10}}},
                                cost_model{{{"device", 16, 0, 0}, {"host", 64, 0.5, 0.5}, {"disk", inf, 8, 8}}},
                                cost_model{{{"device", 4, 0, 0}, {"host", 8, 1, 1}, {"disk", 16, 4, 4}}}}) {
        const timed t = exact(1000, m, repeats);
        std::printf("  %-44s table %8.3f s  predicted %12.1f  revolve(device) ratio %.4f\n", describe(m).c_str(),
                    t.seconds, t.cost, t.cost / revolve_on_level_0(1000, m));
    }

    std::printf("near-optimal against exact, T = 10000 (size: K for spine and nested, g for grid; 0 = automatic). "
                "First row of each: what near_optimal picks with its tables limited to 10^8 iterations (as for a "
                "loop beyond the exact table's reach); then each structure with the default limit\n");
    for (const cost_model& m :
         {cost_model{{{"host", 4, 0, 0}, {"disk", inf, 5, 5}}}, cost_model{{{"host", 16, 0, 0}, {"disk", inf, 20, 20}}},
          cost_model{{{"host", 2, 0.5, 0.5}, {"disk", inf, 3, 8}}},
          cost_model{{{"device", 2, 0, 0}, {"host", 4, 1, 1}, {"disk", inf, 10, 10}}},
          cost_model{{{"host", 4, 0, 0}, {"disk", 16, 2, 2}}}, cost_model{{{"host", 16, 0, 0}, {"disk", 4, 2, 2}}}}) {
        using structure = multilevel::structure;
        const double best = build(10000, m, multilevel::method::exact).cost().predicted_cost;
        const bool finite = m.levels.back().slots != inf;
        gap_row(10000, m, structure::binomial, 0, best, 100'000'000);
        gap_row(10000, m, structure::grid, 0, best);
        for (const step_t horizon : {step_t{500}, step_t{2000}})
            gap_row(10000, m, finite ? structure::nested : structure::spine, horizon, best);
    }
    return 0;
}
