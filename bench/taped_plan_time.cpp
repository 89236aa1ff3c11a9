// How long remat::taped_revolve takes to plan, or to refuse, over a grid of steps, memory units and tape
// units (docs/tapes.md, "Planning time"). Each cell is planned once, with the default work limit; the
// summary gives the slowest planned cell and the slowest refusal.
//
//   build/bench/taped_plan_time                                    # T = 10^3..10^6, units 8..4096, tapes 1..16
//   build/bench/taped_plan_time --steps 90000 --units 64 --tape-units 2
#include "remat/error.hpp"
#include "remat/schedule/taped_revolve.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

namespace {

void usage(std::FILE* to)
{
    std::fputs("usage: taped_plan_time [--steps LIST] [--units LIST] [--tape-units LIST]\n"
               "  Plans remat::taped_revolve once per cell and prints its time, outcome and planning work.\n"
               "  LIST: comma-separated positive integers.\n"
               "  defaults: --steps 1000,10000,100000,1000000 --units 8,16,32,...,4096 --tape-units 1,2,4,8,16\n",
               to);
}

std::vector<long long> parse_list(const char* option, const char* text)
{
    std::vector<long long> values;
    std::string s(text);
    std::size_t at = 0;
    while (at <= s.size()) {
        const std::size_t comma = s.find(',', at);
        const std::string item = s.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
        char* end = nullptr;
        const long long v = std::strtoll(item.c_str(), &end, 10);
        if (item.empty() || *end != '\0' || v < 1) {
            std::fprintf(stderr, "taped_plan_time: %s %s (expected positive integers separated by commas)\n", option,
                         text);
            std::exit(2);
        }
        values.push_back(v);
        if (comma == std::string::npos)
            break;
        at = comma + 1;
    }
    return values;
}

} // namespace

int main(int argc, char** argv)
{
    std::vector<long long> steps{1000, 10000, 100000, 1000000};
    std::vector<long long> units;
    for (long long u = 8; u <= 4096; u *= 2)
        units.push_back(u);
    std::vector<long long> tapes{1, 2, 4, 8, 16};
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--help" || arg == "-h") {
            usage(stdout);
            return 0;
        }
        if (i + 1 >= argc || (arg != "--steps" && arg != "--units" && arg != "--tape-units")) {
            std::fprintf(stderr, "taped_plan_time: unknown option or missing value: %s (see --help)\n", arg.c_str());
            return 2;
        }
        auto& list = arg == "--steps" ? steps : arg == "--units" ? units : tapes;
        list = parse_list(argv[i], argv[i + 1]);
        ++i;
    }
    // Wall seconds, and the process's CPU seconds (the wall time on a shared machine includes waiting).
    std::printf("%9s %6s %5s %10s %9s %9s %14s  %s\n", "T", "units", "tape", "outcome", "seconds", "cpu s", "work",
                "evaluations");
    double slowest_plan = 0;
    double slowest_refusal = 0;
    double slowest_plan_cpu = 0;
    double slowest_refusal_cpu = 0;
    int planned = 0;
    int refused = 0;
    for (const long long t : steps)
        for (const long long m : units)
            for (const long long u : tapes) {
                const auto start = std::chrono::steady_clock::now();
                const std::clock_t cpu_start = std::clock();
                const auto cpu = [&] { return static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC; };
                try {
                    const remat::taped_revolve plan(t, m, u);
                    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
                    std::printf("%9lld %6lld %5lld %10s %9.3f %9.3f %14llu  %llu\n", t, m, u, "planned", s, cpu(),
                                static_cast<unsigned long long>(plan.planning_work()),
                                static_cast<unsigned long long>(plan.evaluations()));
                    slowest_plan = std::max(slowest_plan, s);
                    slowest_plan_cpu = std::max(slowest_plan_cpu, cpu());
                    ++planned;
                } catch (const remat::argument_error& e) {
                    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
                    const bool work = std::strstr(e.what(), "work_limit") != nullptr;
                    const bool table = std::strstr(e.what(), "entries") != nullptr;
                    const char* why = work ? "work" : table ? "table" : "steps";
                    std::printf("%9lld %6lld %5lld %10s %9.3f %9.3f %14s  -\n", t, m, u, why, s, cpu(), "-");
                    slowest_refusal = std::max(slowest_refusal, s);
                    slowest_refusal_cpu = std::max(slowest_refusal_cpu, cpu());
                    ++refused;
                }
                std::fflush(stdout);
            }
    std::printf("planned %d cells, slowest %.3f s (CPU %.3f s); refused %d (work: over the work limit; table: over "
                "%llu entries; steps: T > 90000 with a table), slowest refusal %.3f s (CPU %.3f s)\n",
                planned, slowest_plan, slowest_plan_cpu, refused,
                static_cast<unsigned long long>(remat::taped_revolve::max_table_entries), slowest_refusal,
                slowest_refusal_cpu);
    return 0;
}
