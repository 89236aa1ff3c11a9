// Multi-level schedules: time to build the exact table (median of repeated builds), the predicted cost
// against a baseline priced in the same run (revolve on the fastest level alone, which never touches
// the slow level), and the gap of the near-optimal method (the structure it chooses, and each of grid,
// spine or nested, and layered) to the exact optimum over a grid of level sizes and costs.
//
//     ./build/bench/multilevel_dp [repeats [all|tables|gaps|over-t]]     (default 3 all)
//
// over-t: what `--method auto` plans for T = 10^3 ... 10^15 (and the T of the table): method,
// structure, predicted cost, the lower bound and the gap to it, and the planning time (median of `repeats`
// plans, wall and CPU, each in a child process), the child's peak resident memory and the work counted
// (multilevel::work, at most the limit of 4*10^9). Goal: every plan within 1 s and 256 MB on a 2-core machine,
// within 2% of the bound for host:16 + disk:4:2:2 and host:64 + disk:16:2:2.
//
// Goals (docs/multilevel.md): two levels, T = 10^4, s = 1..16 memory slots: < 10 s each; three levels,
// T = 1000: < 10 s; near-optimal within 1% of the exact optimum where both run.
#include "program_help.hpp"

#include "bench_util.hpp"
#include "run_in_child.hpp"

#include "remat/schedule/multilevel.hpp"
#include "remat/schedule/revolve.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <vector>

namespace {

using remat::cost_model;
using remat::level_spec;
using remat::multilevel;
using remat::step_t;

constexpr remat::slot_t inf = level_spec::unlimited;

multilevel build(step_t steps, const cost_model& m, multilevel::method how,
                 multilevel::structure only = multilevel::structure::binomial, step_t size = 0)
{
    multilevel::options o;
    o.how = how;
    o.only = only;
    (only == multilevel::structure::grid ? o.grid : o.horizon) = size;
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
    const remat::slot_t slots = std::min<remat::slot_t>(m.levels[0].slots, remat::slot_t{1} << 30);
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
    static constexpr const char* names[] = {"binomial", "exact", "grid", "spine", "nested", "layered", "stacked"};
    return names[static_cast<int>(s)];
}

// The gap of one near-optimal structure (or of what near_optimal chooses: `only` binomial) to the exact
// cost, in percent; NaN when that structure does not apply to the model.
struct gap {
    double percent = std::nan("");
    multilevel::structure used = multilevel::structure::binomial;
};

gap gap_of(step_t steps, const cost_model& m, multilevel::structure only, double exact_cost)
{
    using structure = multilevel::structure;
    multilevel plan = build(steps, m, multilevel::method::near_optimal, only);
    // Spine and nested hand a loop that fits their table whole to the exact method; then the structure
    // itself is measured with the longest segments short of the whole loop.
    if (plan.structure_used() == structure::exact && (only == structure::spine || only == structure::nested))
        plan = build(steps, m, multilevel::method::near_optimal, only, steps - 1);
    if (plan.structure_used() != only)
        return {};
    return {100.0 * (plan.cost().predicted_cost / exact_cost - 1.0), plan.structure_used()};
}

// What near_optimal chooses with its tables limited to `work_limit` iterations and the exact method
// allowed no more than that (as for a loop beyond the exact table's reach).
gap chosen_gap(step_t steps, const cost_model& m, std::uint64_t work_limit, double exact_cost,
               multilevel::structure only = multilevel::structure::binomial)
{
    multilevel::options o;
    o.how = multilevel::method::near_optimal;
    o.only = only;
    o.near_optimal_work_limit = work_limit;
    o.exact_work_limit = 0;
    const multilevel plan(steps, m, o);
    return {100.0 * (plan.cost().predicted_cost / exact_cost - 1.0), plan.structure_used()};
}

struct worst {
    double percent = -1;
    std::string where;
    void note(const gap& g, const std::string& at)
    {
        if (!std::isnan(g.percent) && g.percent > percent) {
            percent = g.percent;
            where = at;
        }
    }
};

std::string show(const gap& g, bool named)
{
    char buffer[48];
    if (std::isnan(g.percent))
        return "-";
    if (named)
        std::snprintf(buffer, sizeof buffer, "%s %.3f%%", name_of(g.used), g.percent);
    else
        std::snprintf(buffer, sizeof buffer, "%.3f%%", g.percent);
    return buffer;
}

// The gap grid: for each model the exact optimum (and its build time); each structure's gap with the
// default work limit (grid; spine or nested, whichever applies; layered) and the cheapest of them, which
// is what near_optimal picks when no single table covers the loop (where one does, near_optimal returns
// the exact plan); then what near_optimal picks with its tables limited to 10^8 iterations. Last, the
// worst of each column and how many choices are within 1%.
void gap_grid(step_t steps, const std::vector<cost_model>& models)
{
    using structure = multilevel::structure;
    std::printf("  %-46s %8s %11s  %-18s %9s %13s %9s %9s  %-18s %-18s  %-18s %-18s\n",
                "levels (name:slots:write:read)", "exact s", "exact cost", "chosen", "grid", "spine/nested", "layered",
                "stacked", "kept", "chosen @1e8", "kept @1e8", "LB gap");
    worst chosen, grid, outer, layered, stacked, kept, limited, kept_limited;
    int within = 0, within_limited = 0;
    for (const cost_model& m : models) {
        double exact_cost = 0;
        const double seconds = remat::bench::time_runs(1, [&] {
                                   exact_cost = build(steps, m, multilevel::method::exact).cost().predicted_cost;
                               }).front();
        const bool finite = m.levels.back().slots != inf;
        const gap g = gap_of(steps, m, structure::grid, exact_cost);
        const gap o = gap_of(steps, m, finite ? structure::nested : structure::spine, exact_cost);
        const gap l = gap_of(steps, m, structure::layered, exact_cost);
        const gap st = gap_of(steps, m, structure::stacked, exact_cost);
        const gap spine = finite ? gap{} : o;
        auto least = [](std::initializer_list<gap> gaps) {
            gap c;
            for (const gap& x : gaps)
                if (!std::isnan(x.percent) && (std::isnan(c.percent) || x.percent < c.percent))
                    c = x;
            return c;
        };
        const gap c = least({g, o, l, st});
        const gap kc = least({spine, l, st});
        const gap k = chosen_gap(steps, m, 100'000'000, exact_cost);
        auto limited_only = [&](structure s) {
            const gap x = chosen_gap(steps, m, 100'000'000, exact_cost, s);
            return x.used == s ? x : gap{};
        };
        const gap kk = least({finite ? gap{} : limited_only(structure::spine), limited_only(structure::layered),
                              limited_only(structure::stacked)});
        const double bound = remat::multilevel_lower_bound(steps, m);
        char lb[32];
        std::snprintf(lb, sizeof lb, "%.3f%%", 100.0 * (exact_cost / bound - 1.0));
        const std::string at = describe(m);
        chosen.note(c, at);
        grid.note(g, at);
        outer.note(o, at);
        layered.note(l, at);
        limited.note(k, at);
        stacked.note(st, at);
        kept.note(kc, at);
        kept_limited.note(kk, at);
        within += c.percent <= 1.0 ? 1 : 0;
        within_limited += k.percent <= 1.0 ? 1 : 0;
        std::printf("  %-46s %8.3f %11.1f  %-18s %9s %13s %9s %9s  %-18s %-18s  %-18s %-18s\n", at.c_str(), seconds,
                    exact_cost, show(c, true).c_str(), show(g, false).c_str(), show(o, false).c_str(),
                    show(l, false).c_str(), show(st, false).c_str(), show(kc, true).c_str(), show(k, true).c_str(),
                    show(kk, true).c_str(), lb);
        std::fflush(stdout);
    }
    std::printf("  worst: chosen %.3f%% (%s); grid %.3f%% (%s); spine/nested %.3f%% (%s); layered %.3f%% (%s); "
                "stacked %.3f%% (%s); kept %.3f%% (%s); chosen @1e8 %.3f%% (%s); kept @1e8 %.3f%% (%s)\n",
                chosen.percent, chosen.where.c_str(), grid.percent, grid.where.c_str(), outer.percent,
                outer.where.c_str(), layered.percent, layered.where.c_str(), stacked.percent, stacked.where.c_str(),
                kept.percent, kept.where.c_str(), limited.percent, limited.where.c_str(), kept_limited.percent,
                kept_limited.where.c_str());
    std::printf("  within 1%%: chosen %d, chosen @1e8 %d, of %zu\n", within, within_limited, models.size());
}

// One plan in a child process: its wall and CPU seconds and the child's peak resident set (which then is
// the plan's alone, plus the program's few MB).
struct planning {
    double wall = 0, cpu = 0, peak_mb = 0, cost = 0;
    std::uint64_t work = 0;
    multilevel::method method = multilevel::method::automatic;
    multilevel::structure structure = multilevel::structure::binomial;
};

// Plans in a child process so that each plan's peak memory is its own.
planning plan_in_child(step_t steps, const cost_model& m)
{
    const auto run = remat::bench::run_in_child("multilevel_dp: planning T = " + std::to_string(steps), [&] {
        planning p;
        const auto start = std::chrono::steady_clock::now();
        const multilevel plan(steps, m);
        p.cost = plan.cost().predicted_cost;
        p.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        p.method = plan.method_used();
        p.work = plan.work();
        p.structure = plan.structure_used();
        return p;
    });
    planning p = run.value;
    p.cpu = run.cpu_seconds;
    p.peak_mb = static_cast<double>(run.peak_rss_bytes) / (1024.0 * 1024.0);
    return p;
}

void over_t(int repeats)
{
    const std::vector<cost_model> models{
        cost_model{{{"host", 16, 0, 0}, {"disk", 4, 2, 2}}},
        cost_model{{{"host", 64, 0, 0}, {"disk", 16, 2, 2}}},
        cost_model{{{"host", 64, 0, 0}, {"disk", 16, 10, 10}}},
        cost_model{{{"host", 16, 0, 0}, {"disk", inf, 5, 5}}},
        cost_model{{{"device", 4, 0, 0}, {"host", 16, 1, 1}, {"disk", inf, 10, 10}}},
        cost_model{{{"device", 4, 0, 0}, {"host", 16, 1, 1}, {"ssd", 64, 4, 4}, {"disk", inf, 20, 20}}},
        cost_model{{{"host", 9999, 0, 0}, {"disk", inf, 5, 5}}},
    };
    std::vector<step_t> steps;
    for (step_t t = 1000; t <= 1'000'000'000'000'000; t *= 10) {
        steps.push_back(t);
        if (t == 100'000'000)
            steps.insert(steps.end(), {105'000'000, 110'000'000});
    }
    std::printf("--method auto over T; time: median of %d plans (wall, CPU), peak: the planning process's resident "
                "memory\n",
                repeats);
    std::printf("  %-52s %18s %-8s %-9s %14s %9s %8s %8s %8s %10s\n", "levels", "T", "method", "structure", "predicted",
                "gap to LB", "wall s", "cpu s", "peak MB", "work");
    for (const cost_model& m : models)
        for (const step_t t : steps) {
            std::vector<double> wall, cpu, peak;
            planning p;
            for (int r = 0; r < repeats; ++r) {
                p = plan_in_child(t, m);
                wall.push_back(p.wall);
                cpu.push_back(p.cpu);
                peak.push_back(p.peak_mb);
            }
            const double bound = remat::multilevel_lower_bound(t, m);
            static constexpr const char* methods[] = {"auto", "exact", "near", "binomial"};
            std::printf("  %-52s %18lld %-8s %-9s %14.6g %8.3f%% %8.3f %8.3f %8.1f %10.3g\n", describe(m).c_str(),
                        static_cast<long long>(t), methods[static_cast<int>(p.method)], name_of(p.structure), p.cost,
                        100.0 * (p.cost / bound - 1.0), remat::bench::median(wall), remat::bench::median(cpu),
                        remat::bench::median(peak), static_cast<double>(p.work));
            std::fflush(stdout);
        }
}

} // namespace

int main(int argc, char** argv)
{
    if (remat::examples::answered_help(
            argc, argv,
            "usage: multilevel_dp [repeats [all|tables|gaps|over-t]]     (default 3 all)\n"
            "Multi-level schedules: time to build the exact table (median of repeated builds), the predicted cost\n"
            "against a baseline priced in the same run (revolve on the fastest level alone, which never touches\n"
            "the slow level), and the gap of the near-optimal method (the structure it chooses, and each of grid,\n"
            "spine or nested, and layered) to the exact optimum over a grid of level sizes and costs.\n"))
        return 0;
    const int repeats = argc > 1 ? std::atoi(argv[1]) : 3;
    const std::string sections = argc > 2 ? argv[2] : "all"; // all, tables or gaps
    if (sections != "all" && sections != "tables" && sections != "gaps" && sections != "over-t") {
        std::fprintf(stderr, "multilevel_dp: expected sections all, tables, gaps or over-t, got \"%s\"\n",
                     sections.c_str());
        return 2;
    }
    if (sections == "all" || sections == "over-t")
        over_t(repeats);

    if (sections == "all" || sections == "tables") {
        std::printf(
            "two levels, T = 10000: host s slots (free), disk unlimited (write 5, read 5); median of %d builds\n",
            repeats);
        std::printf("  %3s %10s %14s %14s %8s\n", "s", "table s", "predicted", "revolve(s)", "ratio");
        for (remat::slot_t s = 1; s <= 16; ++s) {
            const cost_model m{{{"host", s, 0, 0}, {"disk", inf, 5, 5}}};
            const timed t = exact(10000, m, s <= 8 ? repeats : 1);
            const double baseline = revolve_on_level_0(10000, m);
            std::printf("  %3lld %10.3f %14.1f %14.1f %8.4f\n", static_cast<long long>(s), t.seconds, t.cost, baseline,
                        t.cost / baseline);
        }

        std::printf("two levels, T = 10000, finite disk (write 2, read 2); one build each\n");
        for (const auto& [s, d] :
             std::vector<std::pair<remat::slot_t, remat::slot_t>>{{4, 4}, {16, 4}, {4, 16}, {8, 5000}}) {
            const cost_model m{{{"host", s, 0, 0}, {"disk", d, 2, 2}}};
            const timed t = exact(10000, m, 1);
            std::printf("  %-44s table %8.3f s  predicted %12.1f  revolve(s) ratio %.4f\n", describe(m).c_str(),
                        t.seconds, t.cost, t.cost / revolve_on_level_0(10000, m));
        }

        std::printf("three levels, T = 1000: device, host, disk; median of %d builds\n", repeats);
        for (const cost_model& m : {cost_model{{{"device", 4, 0, 0}, {"host", 16, 1, 1}, {"disk", inf, 10, 10}}},
                                    cost_model{{{"device", 16, 0, 0}, {"host", 64, 0.5, 0.5}, {"disk", inf, 8, 8}}},
                                    cost_model{{{"device", 4, 0, 0}, {"host", 8, 1, 1}, {"disk", 16, 4, 4}}}}) {
            const timed t = exact(1000, m, repeats);
            std::printf("  %-44s table %8.3f s  predicted %12.1f  revolve(device) ratio %.4f\n", describe(m).c_str(),
                        t.seconds, t.cost, t.cost / revolve_on_level_0(1000, m));
        }
    }

    if (sections == "all" || sections == "gaps") {
        // Two levels: host free, a slow level of 1..16 slots or unlimited, its write and read costs from 0.5 to
        // 50 forward steps and never equal (both cheap, writes dearer, reads dearer, both dear); the host
        // with costs of its own in the last rows.
        const std::vector<std::pair<double, double>> prices{{0.5, 2}, {2, 0.5}, {5, 50}, {50, 5}};
        std::vector<cost_model> two;
        for (const remat::slot_t h : {1, 2, 4, 8, 16})
            for (const remat::slot_t d : std::initializer_list<remat::slot_t>{1, 2, 4, 8, 16, inf})
                for (const auto& [w, r] : prices)
                    two.push_back(cost_model{{{"host", h, 0, 0}, {"disk", d, w, r}}});
        for (const remat::slot_t d : {1, 4, 16})
            for (const auto& [w, r] : prices)
                two.push_back(cost_model{{{"host", 4, 1, 0.5}, {"disk", d, w, r}}});
        std::printf("gaps to the exact optimum, two levels, T = 10000 (gap = near / exact - 1)\n");
        gap_grid(10000, two);
        std::printf("gaps to the exact optimum, T = 10000: the cases measured before the layered structure\n");
        gap_grid(10000, {cost_model{{{"host", 4, 0, 0}, {"disk", inf, 5, 5}}},
                         cost_model{{{"host", 16, 0, 0}, {"disk", inf, 20, 20}}},
                         cost_model{{{"host", 2, 0.5, 0.5}, {"disk", inf, 3, 8}}},
                         cost_model{{{"device", 2, 0, 0}, {"host", 4, 1, 1}, {"disk", inf, 10, 10}}},
                         cost_model{{{"host", 4, 0, 0}, {"disk", 16, 2, 2}}},
                         cost_model{{{"host", 16, 0, 0}, {"disk", 4, 2, 2}}}});

        std::vector<cost_model> three;
        for (const remat::slot_t device : {2, 4})
            for (const remat::slot_t host : {4, 16})
                for (const remat::slot_t d : std::initializer_list<remat::slot_t>{1, 2, 4, 8, 16, inf})
                    for (const auto& [w, r] : prices)
                        three.push_back(
                            cost_model{{{"device", device, 0, 0}, {"host", host, 1, 0.5}, {"disk", d, w, r}}});
        std::printf("gaps to the exact optimum, three levels, T = 1000\n");
        gap_grid(1000, three);
    }
    return 0;
}
