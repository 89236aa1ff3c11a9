// What schedules that may hold tapes are predicted to cost, against plain back-propagation (every tape
// kept: T (F + B)), remat::revolve with the same memory in states (T (F + B) + F x its advances) and
// PyTorch's checkpoint_sequential with L-step segments (it re-runs every segment but the last, which it runs
// keeping its tapes: (2T - L) F + T B, with L x u + T/L states of memory), for T equal steps.
// Predictions of the cost model (remat/schedule/taped_revolve.hpp), not runs; the planning time is
// measured (one run each: a loaded machine's figure).
//
//     ./build/bench/taped_tradeoff T u F B MEMORY...
//
// u: a tape's size in states (rounded up to whole states for the plan; memory shares use u as given);
// MEMORY: a budget in states ("154"), a share of plain BPTT's T x u ("5%"), or checkpoint_sequential's
// memory with L-step segments ("L13": L x u + T/L states, rounded down). The "seq" column is that
// checkpoint_sequential's cost, or for other budgets the best one that fits (the longest segments).
//
//     ./build/bench/taped_tradeoff 1000 5.9 0.69 1.19 5% L13 L32   (docs/tapes.md)
#include "program_help.hpp"

#include "remat/error.hpp"
#include "remat/schedule/revolve.hpp"
#include "remat/schedule/taped_revolve.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

double number(const char* text, const char* name)
{
    char* end = nullptr;
    const double v = std::strtod(text, &end);
    if (end == text || *end != '\0' || !std::isfinite(v) || v <= 0) {
        std::fprintf(stderr, "taped_tradeoff: %s = \"%s\" is not a positive number\n", name, text);
        std::exit(2);
    }
    return v;
}

} // namespace

int main(int argc, char** argv)
{
    if (remat::examples::answered_help(
            argc, argv,
            "usage: taped_tradeoff T u F B MEMORY...\n"
            "example: taped_tradeoff 1000 5.9 0.69 1.19 5% L13 L32   (docs/tapes.md)\n"
            "What schedules that may hold tapes are predicted to cost, against plain back-propagation (every tape\n"
            "kept: T (F + B)), remat::revolve with the same memory in states (T (F + B) + F x its advances) and\n"
            "PyTorch's checkpoint_sequential with L-step segments (it re-runs every segment but the last, which\n"
            "it runs keeping its tapes: (2T - L) F + T B, with L x u + T/L states of memory), for T equal steps.\n"))
        return 0;
    if (argc < 6) {
        std::fprintf(stderr,
                     "usage: taped_tradeoff T u F B MEMORY... (MEMORY: states, N%% of BPTT's, or L<segment>)\n");
        return 2;
    }
    const auto steps = static_cast<remat::step_t>(number(argv[1], "T"));
    const double u = number(argv[2], "u");
    const double f = number(argv[3], "F");
    const double b = number(argv[4], "B");
    const auto tape_units = static_cast<remat::slot_t>(std::ceil(u));
    const double plain = static_cast<double>(steps) * (f + b);
    const double plain_memory = static_cast<double>(steps) * u;
    std::printf("T = %lld, tape %.3g states (planned as %lld), F = %g, B = %g; plain BPTT: %.0f states, cost %.6g\n",
                static_cast<long long>(steps), u, static_cast<long long>(tape_units), f, b, plain_memory, plain);
    std::printf("checkpoint_sequential with L-step segments: ((2T - L) F + T B) / plain, memory L x u + T/L\n\n");
    std::printf("%-8s %7s %8s %11s %6s %7s %9s %9s %8s %9s\n", "memory", "states", "vs BPTT", "evaluations", "taped",
                "peak", "vs BPTT", "revolve", "seq", "plan s");
    for (int i = 5; i < argc; ++i) {
        const std::string spec = argv[i];
        double states = 0;
        double sequential = 0; // checkpoint_sequential's cost over plain BPTT's, for an L row
        if (!spec.empty() && spec.back() == '%')
            states = plain_memory * number(spec.substr(0, spec.size() - 1).c_str(), "MEMORY") / 100;
        else if (!spec.empty() && spec.front() == 'L') {
            const double l = number(spec.c_str() + 1, "MEMORY");
            states = l * u + static_cast<double>(steps) / l;
            sequential = ((2 * static_cast<double>(steps) - l) * f + static_cast<double>(steps) * b) / plain;
        } else
            states = number(spec.c_str(), "MEMORY");
        const auto units = static_cast<remat::slot_t>(std::floor(states));
        try {
            const auto start = std::chrono::steady_clock::now();
            // No work limit: this benchmark reports how long exact planning takes, however long.
            const remat::taped_revolve plan(steps, units, tape_units, f, b, UINT64_MAX);
            const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            const double states_only =
                plain + f * static_cast<double>(remat::revolve(steps, units).cost().forward_steps);
            const double cost = plan.cost().predicted_cost;
            if (sequential == 0) // the best checkpoint_sequential that fits: the longest segments that do
                for (double l = static_cast<double>(steps); l >= 1; --l)
                    if (l * u + static_cast<double>(steps) / l <= states) {
                        sequential =
                            ((2 * static_cast<double>(steps) - l) * f + static_cast<double>(steps) * b) / plain;
                        break;
                    }
            const std::string seq = sequential > 0 ? std::to_string(sequential).substr(0, 5) + "x" : "none fits";
            std::printf("%-8s %7lld %8.3f %11llu %6llu %7lld %8.3fx %8.3fx %8s %9.2f\n", spec.c_str(),
                        static_cast<long long>(units), static_cast<double>(units) / plain_memory,
                        static_cast<unsigned long long>(plan.evaluations()),
                        static_cast<unsigned long long>(plan.cost().taped_steps),
                        static_cast<long long>(plan.peak_units()), cost / plain, states_only / plain, seq.c_str(),
                        seconds);
        } catch (const remat::error& e) {
            std::printf("%-8s %s\n", spec.c_str(), e.what());
        }
    }
    return 0;
}
