// Example: training-style gradients of a deep network whose layers differ in width and cost (blocks of an
// expanding, a contracting and a cheap layer, as in a transformer's feed-forward part), within a memory
// budget. The costs are measured from the layers themselves (remat::profile); the heterogeneous plan
// (remat::chain) is compared with checkpointing every k-th layer at the best k for the budget, and with
// storing everything — predicted time from the measurements, and measured time of real runs.
//
//     ./build/examples/layer_chain [blocks] [budget-percent-of-store-all] [width] [costs.json]
//
// With a file name, the measured chain is written there too (for `remat plan --chain costs.json`).
#include "program_help.hpp"

#include "layer_net.hpp"
#include "report_errors.hpp"

#include <remat/remat.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

namespace {

using remat::examples::layer_net;

[[noreturn]] void usage(const std::string& why)
{
    std::fprintf(stderr, "layer_chain: %s\nusage: layer_chain [blocks] [budget-percent] [width] [costs.json]\n",
                 why.c_str());
    std::exit(2);
}

long long at_least(const char* name, const char* text, long long least)
{
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(text, &end, 10);
    if (end == text || *end != '\0' || errno == ERANGE || v < least)
        usage(std::string(name) + " wants a whole number >= " + std::to_string(least) + ", got '" + text + "'");
    return v;
}

double positive(const char* name, const char* text)
{
    char* end = nullptr;
    const double v = std::strtod(text, &end);
    if (end == text || *end != '\0' || !std::isfinite(v) || v <= 0)
        usage(std::string(name) + " wants a number > 0, got '" + text + "'");
    return v;
}

struct outcome {
    double predicted = 0; // seconds, from the profile
    std::uint64_t peak_bytes = 0;
    double measured = 0; // seconds of the whole run (forward recomputation + adjoints)
    std::vector<double> gradient;
};

outcome run_plan(const remat::any_schedule& plan, const remat::chain_model& m, const layer_net& net,
                 const std::vector<double>& x0)
{
    const remat::chain_evaluation e = remat::evaluate(m, plan);
    outcome o{e.cost, e.peak_bytes, 0, {}};
    remat::host_store store(remat::capacity_for(e.counts)); // the slots the plan holds at once
    remat::examples::layer_forward forward{&net};
    remat::examples::layer_adjoint adjoint(net);
    std::vector<double> times;
    for (int run = 0; run < 7; ++run) { // the median of 7 runs (the first warms the store's buffers)
        std::vector<double> x = x0;
        adjoint.seed();
        const auto start = std::chrono::steady_clock::now();
        remat::run(plan, store, x, remat::forward_step(forward), remat::adjoint_step(adjoint));
        times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(times.begin(), times.end());
    o.measured = times[times.size() / 2];
    o.gradient = adjoint.a;
    return o;
}

} // namespace

static int example_main(int argc, char** argv)
{
    if (remat::examples::answered_help(
            argc, argv,
            "usage: layer_chain [blocks] [budget-percent-of-store-all] [width] [costs.json]\n"
            "Example: training-style gradients of a deep network whose layers differ in width and cost (blocks of\n"
            "an expanding, a contracting and a cheap layer, as in a transformer's feed-forward part), within a\n"
            "memory budget.\n"))
        return 0;
    if (argc > 5)
        usage(std::string("unexpected argument '") + argv[5] + "'");
    const long long blocks = argc > 1 ? at_least("blocks", argv[1], 1) : 32;
    const double percent = argc > 2 ? positive("budget-percent", argv[2]) : 30.0;
    const auto d = static_cast<std::size_t>(argc > 3 ? at_least("width", argv[3], 1) : 96);

    std::vector<std::size_t> widths{d};
    for (long long b = 0; b < blocks; ++b)
        widths.insert(widths.end(), {4 * d, d, d}); // expand (4d^2), contract (4d^2), mix (d^2)
    const layer_net net(widths, 42);
    const remat::step_t layers = net.layers();
    std::vector<double> x0(d, 0.5);

    // 1. Measure every layer's forward and adjoint time and its input's size.
    remat::examples::layer_forward forward{&net};
    remat::examples::layer_adjoint adjoint(net);
    const remat::chain_model m =
        remat::profile(layers, x0, remat::forward_step(forward), remat::adjoint_step(adjoint), {.repeats = 5});
    if (argc > 4) {
        std::ofstream costs(argv[4]);
        costs << remat::to_json(m);
        if (!costs.flush())
            return std::fprintf(stderr, "layer_chain: cannot write %s\n", argv[4]), 1;
    }

    // 2. The budget: a share of what storing every layer's input needs.
    const std::uint64_t store_all = m.store_all_bytes();
    const auto budget = static_cast<std::uint64_t>(static_cast<double>(store_all) * percent / 100.0);
    std::printf("%lld layers (width %zu and %zu), store-all needs %llu bytes; budget %.0f%% = %llu bytes\n",
                static_cast<long long>(layers), d, 4 * d, static_cast<unsigned long long>(store_all), percent,
                static_cast<unsigned long long>(budget));

    // 3. The plans: heterogeneous optimum, every k-th layer at the best k that fits, store-all.
    std::optional<remat::chain> fitted;
    try {
        fitted.emplace(m, budget);
    } catch (const remat::error& e) { // a budget below what one layer needs, or below any plan's least
        return std::fprintf(stderr, "layer_chain: %s\n", e.what()), 2;
    }
    const remat::chain& plan = *fitted;
    std::optional<remat::uniform> every_k;
    double every_k_cost = 0;
    for (remat::step_t k = 1; k <= layers; ++k) {
        const remat::uniform u(layers, k);
        const remat::chain_evaluation e = remat::evaluate(m, u);
        if (e.peak_bytes <= budget && (!every_k || e.cost < every_k_cost)) {
            every_k = u;
            every_k_cost = e.cost;
        }
    }

    std::printf("%-22s %14s %14s %14s\n", "schedule", "peak bytes", "predicted ms", "measured ms");
    const outcome best = run_plan(plan, m, net, x0);
    std::printf("%-22s %14llu %14.3f %14.3f\n", "heterogeneous (chain)",
                static_cast<unsigned long long>(best.peak_bytes), best.predicted * 1e3, best.measured * 1e3);
    if (every_k) {
        const outcome o = run_plan(*every_k, m, net, x0);
        const std::string name = "every k-th layer, k=" + std::to_string(every_k->every());
        std::printf("%-22s %14llu %14.3f %14.3f\n", name.c_str(), static_cast<unsigned long long>(o.peak_bytes),
                    o.predicted * 1e3, o.measured * 1e3);
        if (o.gradient != best.gradient)
            return std::puts("gradients differ"), 1;
    } else {
        std::printf("%-22s  no spacing fits the budget\n", "every k-th layer");
    }
    const outcome all = run_plan(remat::store_all(layers, layers), m, net, x0);
    std::printf("%-22s %14llu %14.3f %14.3f%s\n", "store-all", static_cast<unsigned long long>(all.peak_bytes),
                all.predicted * 1e3, all.measured * 1e3, all.peak_bytes > budget ? "  (over the budget)" : "");
    if (all.gradient != best.gradient)
        return std::puts("gradients differ"), 1;
    std::puts("gradients identical across schedules");
    return 0;
}

int main(int argc, char** argv)
{
    return remat::examples::report_errors("layer_chain", [&] { return example_main(argc, argv); });
}
