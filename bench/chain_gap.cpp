// How far remat::chain's persistent plans are from the optimum over every schedule (docs/heterogeneous.md,
// "What is exact, and what is not"). On random small chains, each at one budget, it prices the plan under
// the tests' independent replay and compares it with two exhaustive searches of the same model
// (tests/support/chain_reference.cpp): over the schedules that keep each snapshot x_j until step j is
// reversed (the plan must equal it) and over every schedule (snapshots may be freed and made again).
//
// It also plans each chain with remat::chain::options::non_persistent (a checkpoint may be freed at its
// last restore, its step reversed from the enclosing checkpoint), prices that plan under the replay, and
// says how much of the gap it closes; its cost must equal the memoised recurrence of
// tests/support/chain_refetch_reference.cpp (written apart from the planner's tables).
//
//   build/bench/chain_gap                          # 1000 chains of 2-10 steps, seed 2026
//   build/bench/chain_gap --chains 300 --max-steps 12 --max-adjoint-bytes 0 --format json
#include "chain_reference.hpp"
#include "chain_refetch_reference.hpp"

#include "remat/error.hpp"
#include "remat/schedule/chain.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace {

struct family {
    int chains = 1000;
    int max_steps = 10;
    int max_quarters = 12;     // f_k and b_k ~ U{0..max_quarters} / 4
    int max_bytes = 5;         // m_k ~ U{1..max_bytes}
    int max_adjoint_bytes = 3; // a_k ~ U{0..max_adjoint_bytes}
    std::uint64_t seed = 2026;
    double budget_fraction = -1; // < 0: budget ~ U{least .. store-all}; else least + fraction x (store-all - least)
    bool json = false;
};

void usage(std::FILE* to)
{
    std::fputs(
        "usage: chain_gap [--chains N] [--max-steps T] [--max-quarters Q] [--max-bytes S] [--max-adjoint-bytes A]\n"
        "                 [--budget-fraction F] [--seed N] [--format text|json]\n"
        "  Draws N chains (default 1000): T ~ U{2..T} steps (default 10, at most 12); f_k, b_k ~ U{0..Q}/4\n"
        "  (default 12); m_k ~ U{1..S} bytes (default 5, x_T's too); a_k ~ U{0..A} bytes (default 3); a budget\n"
        "  ~ U{least feasible .. store-all} bytes (--budget-fraction F: least + F (store-all - least), rounded\n"
        "  down). Plans each with remat::chain at one byte per unit and prints\n"
        "  the distribution of its cost over the optimum over every schedule (exhaustive search): the share\n"
        "  with a gap, the median, p90 and max gap, and the same against the persistent optimum (always 0),\n"
        "  and what remat::chain::options::non_persistent leaves of the gap.\n",
        to);
}

int parse_int(const char* option, const char* text, long long low, long long high)
{
    char* end = nullptr;
    const long long v = std::strtoll(text, &end, 10);
    if (*text == '\0' || *end != '\0' || v < low || v > high) {
        std::fprintf(stderr, "chain_gap: %s %s (expected an integer from %lld to %lld)\n", option, text, low, high);
        std::exit(2);
    }
    return static_cast<int>(v);
}

family parse(int argc, char** argv)
{
    family f;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--help" || arg == "-h") {
            usage(stdout);
            std::exit(0);
        }
        if (i + 1 >= argc) {
            std::fprintf(stderr, "chain_gap: %s needs a value (see --help)\n", arg.c_str());
            std::exit(2);
        }
        const char* value = argv[++i];
        if (arg == "--chains")
            f.chains = parse_int("--chains", value, 1, 1000000);
        else if (arg == "--max-steps")
            f.max_steps = parse_int("--max-steps", value, 2, 12);
        else if (arg == "--max-quarters")
            f.max_quarters = parse_int("--max-quarters", value, 0, 1000);
        else if (arg == "--max-bytes")
            f.max_bytes = parse_int("--max-bytes", value, 1, 1000);
        else if (arg == "--max-adjoint-bytes")
            f.max_adjoint_bytes = parse_int("--max-adjoint-bytes", value, 0, 1000);
        else if (arg == "--budget-fraction") {
            char* end = nullptr;
            f.budget_fraction = std::strtod(value, &end);
            if (*value == '\0' || *end != '\0' || !(f.budget_fraction >= 0 && f.budget_fraction <= 1)) {
                std::fprintf(stderr, "chain_gap: --budget-fraction %s (expected a number from 0 to 1)\n", value);
                std::exit(2);
            }
        } else if (arg == "--seed")
            f.seed = static_cast<std::uint64_t>(parse_int("--seed", value, 0, 2147483647));
        else if (arg == "--format") {
            if (std::string(value) != "text" && std::string(value) != "json") {
                std::fprintf(stderr, "chain_gap: --format %s (expected text or json)\n", value);
                std::exit(2);
            }
            f.json = std::string(value) == "json";
        } else {
            std::fprintf(stderr, "chain_gap: unknown option %s (see --help)\n", arg.c_str());
            std::exit(2);
        }
    }
    return f;
}

remat::chain_model draw_chain(std::mt19937_64& rng, const family& f)
{
    std::uniform_int_distribution<int> steps(2, f.max_steps);
    std::uniform_int_distribution<int> quarters(0, f.max_quarters);
    std::uniform_int_distribution<std::uint64_t> bytes(1, static_cast<std::uint64_t>(f.max_bytes));
    std::uniform_int_distribution<std::uint64_t> extra(0, static_cast<std::uint64_t>(f.max_adjoint_bytes));
    remat::chain_model m;
    const int t = steps(rng);
    for (int k = 0; k < t; ++k) {
        const double forward = quarters(rng) / 4.0;
        const double adjoint = quarters(rng) / 4.0;
        const std::uint64_t state = bytes(rng);
        m.steps.push_back({forward, adjoint, state, extra(rng)});
    }
    m.final_state_bytes = bytes(rng);
    return m;
}

// The q-quantile (nearest rank) of sorted values.
double quantile(const std::vector<double>& sorted, double q)
{
    if (sorted.empty())
        return 0;
    const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
    return sorted[std::min(sorted.size(), std::max<std::size_t>(rank, 1)) - 1];
}

struct summary {
    int with_gap = 0;
    double median = 0, p90 = 0, max = 0;          // over every chain (0 where there is no gap)
    double median_positive = 0, p90_positive = 0; // over the chains with a gap
};

summary summarise(std::vector<double> gaps)
{
    std::sort(gaps.begin(), gaps.end());
    summary s;
    std::vector<double> positive;
    for (const double g : gaps)
        if (g > 0)
            positive.push_back(g);
    s.with_gap = static_cast<int>(positive.size());
    s.median = quantile(gaps, 0.5);
    s.p90 = quantile(gaps, 0.9);
    s.max = gaps.empty() ? 0 : gaps.back();
    s.median_positive = quantile(positive, 0.5);
    s.p90_positive = quantile(positive, 0.9);
    return s;
}

} // namespace

int main(int argc, char** argv)
{
    const family f = parse(argc, argv);
    std::mt19937_64 rng(f.seed);
    std::vector<double> general_gaps;    // plan / optimum over every schedule - 1
    std::vector<double> persistent_gaps; // plan / persistent optimum - 1
    std::vector<double> refetch_gaps;    // the extension's cost / optimum over every schedule - 1
    int closed = 0;                      // chains with a gap that the extension closes
    int narrowed = 0;                    // ... that it narrows only
    remat::chain::options byte_exact;
    byte_exact.granularity = 1;
    for (int i = 0; i < f.chains; ++i) {
        const remat::chain_model m = draw_chain(rng, f);
        try {
            const remat::chain widest(m, m.store_all_bytes(), byte_exact);
            const std::uint64_t least = widest.least_budget_bytes();
            std::uniform_int_distribution<std::uint64_t> budgets(least, m.store_all_bytes());
            const std::uint64_t budget =
                f.budget_fraction < 0
                    ? budgets(rng)
                    : least + static_cast<std::uint64_t>(f.budget_fraction *
                                                         static_cast<double>(m.store_all_bytes() - least));
            const remat::chain plan(m, budget, byte_exact);
            const remat::test::chain_replay r = remat::test::replay_chain_plan(m, plan);
            if (r.error || r.peak_bytes > budget) {
                std::fprintf(stderr, "chain_gap: chain %d: the plan fails the independent replay: %s\n", i,
                             r.error ? r.error->c_str() : "over budget");
                return 1;
            }
            const double persistent = remat::test::brute_force_chain_optimum(m, budget, true);
            const double general = remat::test::brute_force_chain_optimum(m, budget, false);
            remat::chain::options extended = byte_exact;
            extended.non_persistent = true;
            const remat::test::chain_replay x = remat::test::replay_chain_plan(m, remat::chain(m, budget, extended));
            const double refetch = x.cost;
            const double recurrence = remat::test::refetch_recurrence_cost(m, budget, false);
            const double extended_recurrence = remat::test::refetch_recurrence_cost(m, budget, true);
            if (x.error || x.peak_bytes > budget || recurrence != persistent || extended_recurrence != refetch ||
                refetch < general) {
                std::fprintf(stderr,
                             "chain_gap: chain %d: the non-persistent plan (%g%s) or the recurrences (persistent %g, "
                             "extended %g) disagree with the replay or the exhaustive searches (persistent %g, "
                             "every schedule %g)\n",
                             i, refetch, x.error ? ", illegal" : "", recurrence, extended_recurrence, persistent,
                             general);
                return 1;
            }
            // A cost of 0 (every f_k and b_k drawn 0) has no gap.
            general_gaps.push_back(general > 0 ? r.cost / general - 1 : 0);
            persistent_gaps.push_back(persistent > 0 ? r.cost / persistent - 1 : 0);
            refetch_gaps.push_back(general > 0 ? refetch / general - 1 : 0);
            if (r.cost > general && refetch == general)
                ++closed;
            else if (r.cost > general && refetch < r.cost)
                ++narrowed;
        } catch (const remat::error& e) {
            std::fprintf(stderr, "chain_gap: chain %d: %s\n", i, e.what());
            return 1;
        }
    }
    // Costs are sums of quarters, exact in binary: a gap is a gap, not rounding.
    const summary g = summarise(general_gaps);
    const summary p = summarise(persistent_gaps);
    const summary x = summarise(refetch_gaps);
    const double share = static_cast<double>(g.with_gap) / f.chains;
    if (f.json) {
        std::printf("{\"chains\": %d, \"max_steps\": %d, \"max_quarters\": %d, \"max_bytes\": %d, "
                    "\"max_adjoint_bytes\": %d, \"seed\": %llu, \"budget_fraction\": %s,\n"
                    " \"against_every_schedule\": {\"with_gap\": %d, \"share_with_gap\": %.4f, \"median\": %.6f, "
                    "\"p90\": %.6f, \"max\": %.6f, \"median_where_gap\": %.6f, \"p90_where_gap\": %.6f},\n"
                    " \"against_persistent\": {\"with_gap\": %d, \"max\": %.6f},\n"
                    " \"non_persistent\": {\"closes\": %d, \"narrows\": %d, \"with_gap\": %d, \"median\": %.6f, "
                    "\"p90\": %.6f, \"max\": %.6f, \"median_where_gap\": %.6f, \"p90_where_gap\": %.6f}}\n",
                    f.chains, f.max_steps, f.max_quarters, f.max_bytes, f.max_adjoint_bytes,
                    static_cast<unsigned long long>(f.seed),
                    f.budget_fraction < 0 ? "null" : std::to_string(f.budget_fraction).c_str(), g.with_gap, share,
                    g.median, g.p90, g.max, g.median_positive, g.p90_positive, p.with_gap, p.max, closed, narrowed,
                    x.with_gap, x.median, x.p90, x.max, x.median_positive, x.p90_positive);
    } else {
        std::printf("%d chains of 2-%d steps (f, b ~ U{0..%d}/4, m ~ U{1..%d} bytes, a ~ U{0..%d} bytes, seed %llu), "
                    "budget %s\n",
                    f.chains, f.max_steps, f.max_quarters, f.max_bytes, f.max_adjoint_bytes,
                    static_cast<unsigned long long>(f.seed),
                    f.budget_fraction < 0
                        ? "~ U{least .. store-all}"
                        : ("least + " + std::to_string(f.budget_fraction) + " x (store-all - least)").c_str());
        std::printf("against every schedule: %d with a gap (%.1f%%); gap median %.2f%%, p90 %.2f%%, max %.2f%%; "
                    "where there is one: median %.2f%%, p90 %.2f%%\n",
                    g.with_gap, 100 * share, 100 * g.median, 100 * g.p90, 100 * g.max, 100 * g.median_positive,
                    100 * g.p90_positive);
        std::printf("against the persistent optimum: %d with a gap, max %.2f%%\n", p.with_gap, 100 * p.max);
        std::printf("with options::non_persistent (a checkpoint freed at its last restore, its step reversed from the "
                    "enclosing one): closes "
                    "%d of the %d gaps and narrows %d; left: %d with a gap (%.1f%%), median %.2f%%, p90 %.2f%%, max "
                    "%.2f%%; where there is one: median %.2f%%, p90 %.2f%%\n",
                    closed, g.with_gap, narrowed, x.with_gap, 100.0 * x.with_gap / f.chains, 100 * x.median,
                    100 * x.p90, 100 * x.max, 100 * x.median_positive, 100 * x.p90_positive);
    }
    return p.with_gap == 0 ? 0 : 1;
}
