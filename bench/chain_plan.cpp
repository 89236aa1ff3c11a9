// Planning heterogeneous chains (remat::chain) against what people use instead, on the same chains and
// budgets, all priced by remat::evaluate under the model of remat/schedule/chain_model.hpp:
//   (a) every k-th state checkpointed (remat::uniform, PyTorch's checkpoint_sequential), at the best k
//       that fits the budget;
//   (b) a greedy memory/compute ranking (remat::greedy_ranking): every state a checkpoint, then the states with
//       the most bytes per forward cost of the step that produced them dropped first, at the count that fits the
//       budget most cheaply; the segments between checkpoints are re-run storing every state (remat::chain falls
//       back to it where its own near-optimal plan costs more: `method` says which);
//   (c) revolve treating the chain as uniform: the most slots of the largest state that fit.
// Chains: T = 100, 1000, 10000 steps drawn from the distribution below (seed 2026), and one measured
// chain (examples/layer_net.hpp's transformer-like blocks profiled on this machine). Budgets: 10, 20, 30,
// 50% of store-all. Planning time is the median of up to 7 plans (fewer past 2 s: 1 for the largest). Where the plan is
// the greedy ranking's (method), tables_cost is what the dynamic program's own plan costs. Side by side, on chains of
// at most --rotor-steps steps (default 100; its table grows with T^2 * units): rockmate's rotor solver
// (bench/rotor_plan.py, from the build's Python environment) at the same granularity as remat's plan: its planning
// time, and its plan priced under remat's model.
//
//     ./build/bench/chain_plan [--quick] [--format text|json] [--svg FILE] [--rotor-steps N] [--write-chains DIR]
//
// --write-chains DIR writes each chain as DIR/<chain>_<T>.json (remat::to_json, for `remat plan --chain`) and exits.
//
// Distribution: f_k uniform in [0.5, 2]; b_k = f_k * uniform [1.5, 3]; m_k = 4 KiB * uniform integer
// [16, 1024]; a_k = m_k for one step in four, else 0.
#include "program_help.hpp"

#include "bench_util.hpp"
#include "layer_net.hpp"
#include "rotor_sequence.hpp"

#include "remat/report/json.hpp"
#include "remat/report/line_chart.hpp"
#include "remat/report/output_file.hpp"

#include <remat/remat.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace remat;

chain_model drawn_chain(step_t steps, std::uint64_t seed)
{
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> f(0.5, 2.0);
    std::uniform_real_distribution<double> ratio(1.5, 3.0);
    std::uniform_int_distribution<std::uint64_t> pages(16, 1024);
    chain_model m;
    for (step_t k = 0; k < steps; ++k) {
        const double forward = f(rng);
        const std::uint64_t bytes = 4096 * pages(rng);
        m.steps.push_back({forward, forward * ratio(rng), bytes, k % 4 == 3 ? bytes : 0});
    }
    m.final_state_bytes = 4096 * pages(rng);
    return m;
}

chain_model measured_chain(int blocks)
{
    const std::size_t d = 128;
    std::vector<std::size_t> widths{d};
    for (int b = 0; b < blocks; ++b)
        widths.insert(widths.end(), {4 * d, d, d});
    const examples::layer_net net(widths, 42);
    examples::layer_forward forward{&net};
    examples::layer_adjoint adjoint(net);
    return profile(net.layers(), std::vector<double>(d, 0.5), remat::forward_step(forward),
                   remat::adjoint_step(adjoint), {.repeats = 5});
}

struct priced {
    double cost = std::numeric_limits<double>::infinity();
    std::string what = "nothing fits";
};

priced best_every_k(const chain_model& m, std::uint64_t budget)
{
    priced best;
    for (step_t k = 1; k <= m.size(); ++k) {
        const chain_evaluation e = evaluate(m, uniform(m.size(), k));
        if (e.peak_bytes <= budget && e.cost < best.cost)
            best = {e.cost, "k=" + std::to_string(k)};
    }
    return best;
}

priced greedy_baseline(const chain_model& m, std::uint64_t budget)
{
    const listed_plan g = greedy_ranking(m, budget); // the library's, which remat::chain may fall back to
    if (g.empty())
        return {};
    return {g.cost().predicted_cost, std::to_string(g.cost().stores) + " stores"};
}

priced revolve_as_uniform(const chain_model& m, std::uint64_t budget)
{
    std::uint64_t largest = m.final_state_bytes;
    for (const chain_step& s : m.steps)
        largest = std::max(largest, s.state_bytes);
    for (auto slots = static_cast<slot_t>(budget / largest); slots >= 1; --slots) {
        const chain_evaluation e = evaluate(m, revolve(m.size(), slots));
        if (e.peak_bytes <= budget)
            return {e.cost, "s=" + std::to_string(slots)};
    }
    return {};
}

// Planning times (ours and rotor's) are the median of up to max_repeats plans, fewer once repeat_seconds are spent
// (on a shared machine a single sub-millisecond plan is often a preempted one).
constexpr int max_repeats = 7;
constexpr double repeat_seconds = 2.0;

// rockmate's rotor solver on the same chain, budget and granularity (bench/rotor_plan.py in a child process).
struct rotor_result {
    bool ran = false;
    double seconds = 0;                                    // its planning time (table and sequence), median
    int solves = 0;                                        // ... of this many solves
    double cost = std::numeric_limits<double>::infinity(); // its plan under remat's model
    std::uint64_t peak_bytes = 0;                          // ... and that plan's peak
    std::string note;                                      // why it did not run, or "over budget"
};

std::string rotor_python()
{
    const std::string python = REMAT_PYTHON_VENV "/bin/python";
    return std::filesystem::exists(python) ? python : std::string();
}

// rotor counts more than remat's model (the adjoint's own vectors, a step's input next to its output), so it
// also gets 1.25, 1.5 and 2 times the budget: its plan is the cheapest of the four that fits the budget under
// remat's model; its planning time is that of the solve at the budget itself.
rotor_result run_rotor(const chain_model& m, std::uint64_t budget, std::uint64_t granularity)
{
    rotor_result r;
    const std::string python = rotor_python();
    if (python.empty()) {
        r.note = "no Python environment (scripts/install-python.sh build)";
        return r;
    }
    const std::filesystem::path file =
        std::filesystem::temp_directory_path() / ("remat_chain_plan_" + std::to_string(::getpid()) + ".json");
    nlohmann::json cases = nlohmann::json::array();
    for (const double scale : {1.0, 1.25, 1.5, 2.0})
        cases.push_back({{"chain", nlohmann::json::parse(to_json(m))},
                         {"budget", static_cast<std::uint64_t>(static_cast<double>(budget) * scale)},
                         {"unit_bytes", granularity},
                         {"repeats", scale == 1.0 ? max_repeats : 1}}); // the timed solve: a median, as ours
    std::ofstream(file) << cases.dump();
    const std::string command = python + " " + REMAT_ROTOR_PLAN + " --cases " + file.string();
    std::string text;
    if (FILE* pipe = ::popen(command.c_str(), "r")) {
        char buffer[65536];
        for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;)
            text.append(buffer, n);
        if (::pclose(pipe) != 0)
            text.clear();
    }
    std::filesystem::remove(file);
    const auto plans = nlohmann::json::parse(text, nullptr, false);
    if (plans.is_discarded() || !plans.is_array() || plans.empty()) {
        r.note = "rotor_plan.py failed (is rockmate installed? scripts/install-python.sh build)";
        return r;
    }
    r.ran = true;
    // null where rotor planned nothing (a budget below x_0 + x_T in its units): no time to report.
    const auto seconds = plans[0].find("seconds");
    r.seconds = seconds != plans[0].end() && seconds->is_number() ? seconds->get<double>() : 0.0;
    r.solves = plans[0].value("solves", 0);
    r.note = "no plan fits";
    for (const auto& plan : plans) {
        const auto sequence = plan.at("sequence").get<std::vector<std::string>>();
        if (sequence.empty())
            continue;
        const auto actions = std::make_shared<const std::vector<action>>(bench::rotor_actions(m.size(), sequence));
        const chain_evaluation e = evaluate(m, listed_plan(m.size(), actions, {}));
        if (e.peak_bytes <= budget && e.cost < r.cost) {
            r.cost = e.cost;
            r.peak_bytes = e.peak_bytes;
            r.note = "given " + plan.at("units").dump() + " units";
        }
    }
    return r;
}

struct row {
    std::string chain_name;
    step_t steps = 0;
    int percent = 0;
    double plan_seconds = 0;
    int plan_repeats = 0;
    std::uint64_t table_bytes = 0;
    std::uint64_t granularity = 0;
    step_t horizon = 0;
    step_t block_steps = 1;
    std::string method;
    double cost = 0;
    double tables_cost = 0; // the dynamic program's own plan, without the greedy fallback
    priced every_k, greedy, uniform_revolve;
    std::optional<rotor_result> rotor;
};

} // namespace

int main(int argc, char** argv)
{
    if (remat::examples::answered_help(
            argc, argv,
            "usage: chain_plan [--quick] [--format text|json] [--svg FILE] [--rotor-steps N] [--write-chains DIR]\n"
            "Planning heterogeneous chains (remat::chain) against what people use instead, on the same chains and\n"
            "budgets, all priced by remat::evaluate under the model of remat/schedule/chain_model.hpp: (a) every\n"
            "k-th state checkpointed (remat::uniform, PyTorch's checkpoint_sequential), at the best k that fits\n"
            "the budget; (b) a greedy memory/compute ranking (remat::greedy_ranking): every state a checkpoint,\n"
            "then the states with the most bytes per forward cost of the step that produced them dropped first,\n"
            "at the count that fits the budget most cheaply; the segments between checkpoints are re-run storing\n"
            "every state (remat::chain falls back to it where its own near-optimal plan costs more: `method` says\n"
            "which); (c) revolve treating the chain as uniform: the most slots of the largest state that fit.\n"))
        return 0;
    bool quick = false;
    step_t rotor_steps = 100;
    std::string format = "text";
    std::string svg;
    std::string chains_dir;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--quick") == 0)
            quick = true;
        else if (std::strcmp(argv[i], "--format") == 0 && i + 1 < argc)
            format = argv[++i];
        else if (std::strcmp(argv[i], "--svg") == 0 && i + 1 < argc)
            svg = argv[++i];
        else if (std::strcmp(argv[i], "--rotor-steps") == 0 && i + 1 < argc)
            rotor_steps = std::atoll(argv[++i]);
        else if (std::strcmp(argv[i], "--write-chains") == 0 && i + 1 < argc)
            chains_dir = argv[++i];
        else
            return std::fprintf(stderr,
                                "usage: chain_plan [--quick] [--format text|json] [--svg FILE] [--rotor-steps N] "
                                "[--write-chains DIR]\n"),
                   2;
    }
    if (format != "text" && format != "json")
        return std::fprintf(stderr, "chain_plan: --format: expected text or json, got \"%s\"\n", format.c_str()), 2;

    std::vector<std::pair<std::string, chain_model>> chains;
    for (const step_t t : quick ? std::vector<step_t>{100, 1000} : std::vector<step_t>{100, 1000, 10000})
        chains.emplace_back("drawn", drawn_chain(t, 2026));
    chains.emplace_back("measured", measured_chain(quick ? 20 : 100));
    if (!chains_dir.empty()) {
        std::error_code made;
        std::filesystem::create_directories(chains_dir, made);
        if (made)
            return std::fprintf(stderr, "chain_plan: --write-chains: cannot create \"%s\": %s\n", chains_dir.c_str(),
                                made.message().c_str()),
                   2;
        for (const auto& [name, m] : chains) {
            const std::filesystem::path file =
                std::filesystem::path(chains_dir) / (name + "_" + std::to_string(m.size()) + ".json");
            report::write_file_safely(file.string(), [&](std::ostream& out) { out << to_json(m) << "\n"; });
            std::printf("%s (store-all %llu bytes)\n", file.string().c_str(),
                        static_cast<unsigned long long>(m.store_all_bytes()));
        }
        return 0;
    }

    std::vector<row> rows;
    for (const auto& [name, m] : chains) {
        for (const int percent : {10, 20, 30, 50}) {
            const auto budget = static_cast<std::uint64_t>(static_cast<double>(m.store_all_bytes()) * percent / 100.0);
            row r;
            r.chain_name = name;
            r.steps = m.size();
            r.percent = percent;
            std::vector<double> times;
            std::optional<chain> plan;
            try {
                while (times.size() < static_cast<std::size_t>(max_repeats) &&
                       std::accumulate(times.begin(), times.end(), 0.0) < repeat_seconds) {
                    const auto start = std::chrono::steady_clock::now();
                    plan.emplace(m, budget);
                    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
                }
            } catch (const capacity_error& e) {
                std::fprintf(stderr, "%s T=%lld %d%%: %s\n", name.c_str(), static_cast<long long>(m.size()), percent,
                             e.what());
                continue;
            }
            r.plan_seconds = bench::median(times);
            r.plan_repeats = static_cast<int>(times.size());
            r.table_bytes = plan->table_bytes();
            r.granularity = plan->granularity();
            r.horizon = plan->horizon();
            r.block_steps = plan->block_steps();
            r.method = plan->method();

            r.cost = plan->cost().predicted_cost;
            r.tables_cost = r.cost;
            if (r.method != "dynamic program") {
                chain::options own;
                own.greedy_fallback = false;
                r.tables_cost = chain(m, budget, own).cost().predicted_cost;
            }
            r.every_k = best_every_k(m, budget);
            r.greedy = greedy_baseline(m, budget);
            r.uniform_revolve = revolve_as_uniform(m, budget);
            if (m.size() <= rotor_steps)
                r.rotor = run_rotor(m, budget, r.granularity);
            rows.push_back(r);
            if (format == "text")
                std::fprintf(stderr, "  %s T=%lld %d%% planned in %.3f s\n", name.c_str(),
                             static_cast<long long>(m.size()), percent, r.plan_seconds);
        }
    }

    const auto ratio = [](const priced& p, double cost) { return p.cost / cost; };
    if (format == "json") {
        nlohmann::ordered_json j = nlohmann::ordered_json::array();
        for (const row& r : rows)
            j.push_back(
                {{"chain", r.chain_name},
                 {"steps", r.steps},
                 {"budget_percent", r.percent},
                 {"plan_seconds", r.plan_seconds},
                 {"plan_repeats", r.plan_repeats},
                 {"table_bytes", r.table_bytes},
                 {"granularity_bytes", r.granularity},
                 {"horizon", r.horizon},
                 {"block_steps", r.block_steps},
                 {"method", r.method},
                 {"tables_cost", r.tables_cost},
                 {"predicted_cost", r.cost},
                 {"every_k_cost", r.every_k.cost},
                 {"every_k", r.every_k.what},
                 {"greedy_cost", r.greedy.cost},
                 {"greedy", r.greedy.what},
                 {"revolve_uniform_cost", r.uniform_revolve.cost},
                 {"revolve_uniform", r.uniform_revolve.what},
                 {"rotor_seconds", r.rotor && r.rotor->ran ? nlohmann::ordered_json(r.rotor->seconds) : nullptr},
                 {"rotor_solves", r.rotor && r.rotor->ran ? nlohmann::ordered_json(r.rotor->solves) : nullptr},
                 {"rotor_cost",
                  r.rotor && std::isfinite(r.rotor->cost) ? nlohmann::ordered_json(r.rotor->cost) : nullptr},
                 {"rotor_peak_bytes", r.rotor && r.rotor->ran ? nlohmann::ordered_json(r.rotor->peak_bytes) : nullptr},
                 {"rotor_note", r.rotor ? r.rotor->note : std::string("not run (--rotor-steps)")}});
        report::write_json(std::cout, j);
    } else {
        std::printf("%-9s %6s %4s %10s %10s %8s %7s | %12s %12s %12s %12s | %10s %10s\n", "chain", "T", "bud", "plan s",
                    "table MiB", "gran KiB", "K", "every-k", "greedy", "revolve", "rotor", "rotor s", "rotor/ours");
        for (const row& r : rows) {
            std::printf("%-9s %6lld %3d%% %10.4f %10.1f %8.1f %7lld | %12.3f %12.3f %12.3f", r.chain_name.c_str(),
                        static_cast<long long>(r.steps), r.percent, r.plan_seconds,
                        static_cast<double>(r.table_bytes) / (1 << 20), static_cast<double>(r.granularity) / 1024,
                        static_cast<long long>(r.horizon), ratio(r.every_k, r.cost), ratio(r.greedy, r.cost),
                        ratio(r.uniform_revolve, r.cost));
            if (r.rotor && r.rotor->ran)
                std::printf(" %12.3f | %10.3f %9.1fx %s\n", r.rotor->cost / r.cost, r.rotor->seconds,
                            r.rotor->seconds / r.plan_seconds, r.rotor->note.c_str());
            else
                std::printf(" %12s | %s\n", "-", r.rotor ? r.rotor->note.c_str() : "(not run: T > --rotor-steps)");
        }
        std::puts("(baseline cost / chain cost; inf: no plan of that kind fits the budget; rotor: rockmate's rotor "
                  "solver at the same granularity, its plan priced under remat's model; rotor/ours: planning time)");
    }
    if (!svg.empty()) { // predicted cost against budget, T = 1000, relative to store-all's
        report::line_chart chart;
        chart.title = "Heterogeneous chain, T = 1000 (drawn): predicted time within a budget";
        chart.subtitle = "time / store-all time; lower is better";
        chart.x = {.label = "budget, % of store-all"};
        chart.y = {.label = "time relative to store-all"};
        const chain_model* m = nullptr;
        for (const auto& [name, c] : chains)
            if (name == "drawn" && c.size() == 1000)
                m = &c;
        if (m != nullptr) {
            double all = 0;
            for (std::size_t k = 0; k < m->steps.size(); ++k)
                all += (k + 1 < m->steps.size() ? m->steps[k].forward : 0.0) + m->steps[k].adjoint;
            report::data_series ours{.name = "remat::chain", .markers = true};
            report::data_series ek{.name = "every k-th", .markers = true};
            report::data_series gr{.name = "greedy ranking", .markers = true};
            report::data_series rv{.name = "revolve (uniform)", .markers = true};
            for (const row& r : rows) {
                if (r.chain_name != "drawn" || r.steps != 1000)
                    continue;
                const double x = r.percent;
                ours.points.push_back({x, r.cost / all});
                for (auto [series, p] :
                     {std::pair{&ek, &r.every_k}, std::pair{&gr, &r.greedy}, std::pair{&rv, &r.uniform_revolve}})
                    if (std::isfinite(p->cost))
                        series->points.push_back({x, p->cost / all});
            }
            chart.series = {ours, ek, gr, rv};
            std::erase_if(chart.series, [](const report::data_series& s) { return s.points.empty(); });
            report::write_file_safely(svg, [&](std::ostream& out) { report::write_svg(out, chart); });
        }
    }
    return 0;
}
