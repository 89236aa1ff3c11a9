// heat2d_mpi: the gradient of J = h^2/2 sum u_T^2 with respect to the initial field u_0 of a 2-D heat
// equation with a cubic sink (heat2d.hpp), its rows split over the MPI ranks, through remat::mpi::run with a
// hand-written adjoint step. The gradient is bit-identical for any number of ranks.
//
//     mpirun -np 4 build/examples/heat2d_mpi [--nx 64] [--ny 64] [--steps 400] [--slots 10 | --budget BYTES
//         [--budget-scope rank|job]] [--schedule revolve|uniform|store-all] [--format text|json]
//         [--store host|parallel-hdf5] [--file PATH]
//     fault injection (docs/mpi.md): [--fail-on RANK:STEP] [--slots-on RANK:SLOTS] [--file-limit RANK:BYTES]
#include "program_help.hpp"

#include "heat2d.hpp"

#include "remat/cli/parse.hpp" // remat::cli::parse_count, parse_bytes, format_bytes

#include <remat/detail/xxh64.hpp>
#include <remat/mpi/mpi.hpp>
#include <remat/remat.hpp>
#include <remat/report/json.hpp>

#if REMAT_WITH_PARALLEL_HDF5
#include <remat/mpi/parallel_hdf5_store.hpp>
#endif

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

using namespace remat::examples;

struct options {
    heat2d::problem problem;
    remat::step_t steps = 400;
    remat::slot_t slots = 10;
    std::optional<std::uint64_t> budget_bytes;
    remat::mpi::budget_scope scope = remat::mpi::budget_scope::per_rank;
    std::string schedule = "revolve";
    bool json = false;
    int fail_rank = -1;
    remat::step_t fail_step = -1;
    int other_slots_rank = -1;
    remat::slot_t other_slots = 0;
    std::string store = "host";
    std::string file = "heat2d_mpi.h5";
    int limited_rank = -1;
    std::uint64_t file_limit = 0;
};

const char* const usage_text =
    "usage: heat2d_mpi [--nx N] [--ny N] [--steps T] [--slots S | --budget BYTES [--budget-scope rank|job]]\n"
    "                  [--schedule revolve|uniform|store-all] [--format text|json]\n"
    "                  [--store host|parallel-hdf5] [--file PATH]\n"
    "                  [--fail-on RANK:STEP] [--slots-on RANK:SLOTS] [--file-limit RANK:BYTES]\n";

std::pair<std::int64_t, std::int64_t> rank_and_value(std::string_view option, std::string_view text)
{
    const auto colon = text.find(':');
    if (colon == std::string_view::npos)
        throw remat::cli::usage_error(std::string(option) + " wants RANK:VALUE, got '" + std::string(text) + "'");
    // The rank as an int (a larger one was cut to its low 32 bits: 4294967296 became rank 0).
    return {remat::cli::parse_count(option, text.substr(0, colon), 0, std::numeric_limits<int>::max()),
            remat::cli::parse_count(option, text.substr(colon + 1), 0)};
}

options parse(int argc, char** argv)
{
    options o;
    std::vector<std::string_view> given;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (i + 1 >= argc)
            throw remat::cli::usage_error("option " + std::string(a) + " needs a value");
        const std::string_view v = argv[++i];
        if (a == "--nx")
            o.problem.nx = remat::cli::parse_count(a, v, 1, 1 << 20);
        else if (a == "--ny")
            o.problem.ny = remat::cli::parse_count(a, v, 1, 1 << 20);
        else if (a == "--steps")
            o.steps = remat::cli::parse_count(a, v, 1);
        else if (a == "--slots")
            o.slots = remat::cli::parse_count(a, v, 1);
        else if (a == "--budget")
            o.budget_bytes = remat::cli::parse_bytes(a, v);
        else if (a == "--budget-scope") {
            if (v != "rank" && v != "job")
                throw remat::cli::usage_error("--budget-scope wants rank or job, got '" + std::string(v) + "'");
            o.scope = v == "job" ? remat::mpi::budget_scope::job : remat::mpi::budget_scope::per_rank;
        } else if (a == "--schedule") {
            if (v != "revolve" && v != "uniform" && v != "store-all")
                throw remat::cli::usage_error("--schedule wants revolve, uniform or store-all, got '" + std::string(v) +
                                              "'");
            o.schedule = v;
        } else if (a == "--format") {
            if (v != "text" && v != "json")
                throw remat::cli::usage_error("--format wants text or json, got '" + std::string(v) + "'");
            o.json = v == "json";
        } else if (a == "--fail-on") {
            const auto [r, k] = rank_and_value(a, v);
            o.fail_rank = static_cast<int>(r);
            o.fail_step = k;
        } else if (a == "--store") {
            if (v != "host" && v != "parallel-hdf5")
                throw remat::cli::usage_error("--store wants host or parallel-hdf5, got '" + std::string(v) + "'");
#if !REMAT_WITH_PARALLEL_HDF5
            if (v == "parallel-hdf5")
                throw remat::cli::usage_error("--store parallel-hdf5: this build has no parallel HDF5 "
                                              "(libhdf5-openmpi-dev)");
#endif
            o.store = v;
        } else if (a == "--file")
            o.file = v;
        else if (a == "--file-limit") {
            const auto [r, bytes] = rank_and_value(a, v);
            o.limited_rank = static_cast<int>(r);
            o.file_limit = static_cast<std::uint64_t>(bytes);
        } else if (a == "--slots-on") {
            const auto [r, s] = rank_and_value(a, v);
            o.other_slots_rank = static_cast<int>(r);
            o.other_slots = std::max<remat::slot_t>(s, 1);
        } else
            throw remat::cli::usage_error("unknown option '" + std::string(a) + "'");
        given.emplace_back(a);
    }
    // Both given, the budget won in silence; a scope without a budget was ignored.
    const auto has = [&](std::string_view name) { return std::ranges::find(given, name) != given.end(); };
    if (has("--slots") && has("--budget"))
        throw remat::cli::usage_error("--slots and --budget exclude each other (a budget chooses the slots)");
    if (has("--budget-scope") && !has("--budget"))
        throw remat::cli::usage_error("--budget-scope needs --budget");
    return o;
}

template <class Schedule>
int run_with(const options& o, heat2d::part& part, const Schedule& plan, remat::slot_t slots,
             const remat::mpi::budget_plan* budget)
{
    const int me = part.rows().rank;
    auto inject = [&](remat::step_t k) {
        if (me == o.fail_rank && k == o.fail_step)
            throw std::runtime_error("injected failure (--fail-on " + std::to_string(o.fail_rank) + ":" +
                                     std::to_string(o.fail_step) + ")");
    };
    const auto start = std::chrono::steady_clock::now();
    heat2d::result r;
    if (o.store == "host") {
        remat::host_store store(slots);
        r = heat2d::gradient(MPI_COMM_WORLD, part, plan, store, inject);
    } else {
#if REMAT_WITH_PARALLEL_HDF5
        remat::mpi::parallel_hdf5_store store(MPI_COMM_WORLD, o.file, slots, part.values() * sizeof(double));
        if (me == o.limited_rank) {
            // A full disk seen by this rank alone: writes beyond the limit fail with EFBIG (not SIGXFSZ).
            std::signal(SIGXFSZ, SIG_IGN);
            const rlimit limit{o.file_limit, o.file_limit};
            if (setrlimit(RLIMIT_FSIZE, &limit) != 0)
                throw std::runtime_error("--file-limit: setrlimit failed");
        }
        r = heat2d::gradient(MPI_COMM_WORLD, part, plan, store, inject);
#endif
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    double slowest = 0;
    remat::mpi::check(MPI_Reduce(&seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD), "MPI_Reduce");
    const std::vector<double> g = part.gather(r.gradient);
    if (me != 0)
        return 0;
    char hash[17];
    std::snprintf(hash, sizeof hash, "%016" PRIx64, remat::detail::xxh64(g.data(), g.size() * sizeof(double)));
    const int ranks = part.rows().ranks;
    if (o.json) {
        nlohmann::ordered_json j;
        j["ranks"] = ranks;
        j["nx"] = o.problem.nx;
        j["ny"] = o.problem.ny;
        j["steps"] = o.steps;
        j["schedule"] = o.schedule;
        j["slots"] = slots;
        j["store"] = o.store;
        j["objective"] = r.objective;
        j["gradient_xxh64"] = hash;
        j["forward_steps"] = r.report.forward_steps;
        j["rank0_peak_snapshot_bytes"] = r.report.peak_snapshot_bytes;
        if (budget != nullptr)
            j["job_peak_snapshot_bytes"] = budget->job_peak_bytes;
        j["seconds"] = slowest;
        remat::report::write_json(std::cout, j);
    } else {
        std::printf("heat2d_mpi: %d rank%s, %lld x %lld grid, %lld steps, %s with %lld slots\n", ranks,
                    ranks > 1 ? "s" : "", static_cast<long long>(o.problem.nx), static_cast<long long>(o.problem.ny),
                    static_cast<long long>(o.steps), o.schedule.c_str(), static_cast<long long>(slots));
        std::printf("  J = %.17g\n  dJ/du0: xxh64 %s (global row-major doubles)\n", r.objective, hash);
        std::printf("  forward steps %" PRIu64 " (store-all: %lld), snapshots on rank 0 at most %s\n",
                    r.report.forward_steps, static_cast<long long>(o.steps - 1),
                    remat::cli::format_bytes(r.report.peak_snapshot_bytes).c_str());
        std::printf("  %.3f s (slowest rank)\n", slowest);
    }
    return 0;
}

int run(const options& o)
{
    heat2d::part part(MPI_COMM_WORLD, o.problem);
    const int me = part.rows().rank;
    // Fault injection on a rank the job does not have did nothing, in silence (every rank refuses alike).
    for (const auto& [option, rank] : {std::pair{"--fail-on", o.fail_rank}, std::pair{"--slots-on", o.other_slots_rank},
                                       std::pair{"--file-limit", o.limited_rank}})
        if (rank >= part.rows().ranks)
            throw remat::cli::usage_error(std::string(option) + " names rank " + std::to_string(rank) +
                                          "; the job has ranks 0.." + std::to_string(part.rows().ranks - 1));
    std::optional<remat::mpi::budget_plan> budget;
    remat::slot_t slots = o.slots;
    if (o.budget_bytes) {
        budget = remat::mpi::plan_for_budget(MPI_COMM_WORLD, o.steps, {.bytes = *o.budget_bytes, .scope = o.scope},
                                             part.values() * sizeof(double));
        slots = budget->plan.slots;
    }
    if (me == o.other_slots_rank)
        slots = o.other_slots; // fault injection: this rank plans another schedule
    const remat::mpi::budget_plan* b = budget ? &*budget : nullptr;
    if (o.schedule == "uniform")
        return run_with(o, part, remat::uniform::fit(o.steps, slots), slots, b);
    if (o.schedule == "store-all") {
        const remat::store_all plan(o.steps, o.steps);
        // It keeps every state but the last whatever the budget: one that holds fewer is refused, not run over
        // (every rank has the same slots from plan_for_budget, so every rank throws).
        const auto kept = static_cast<remat::slot_t>(plan.cost().peak_slots);
        if (budget && budget->plan.slots < kept)
            throw remat::capacity_error("--schedule store-all keeps " + std::to_string(kept) +
                                        " states; the budget holds " + std::to_string(budget->plan.slots) +
                                        " (use --schedule revolve)");
        return run_with(o, part, plan, o.steps, b);
    }
    return run_with(o, part, remat::revolve(o.steps, slots), slots, b);
}

} // namespace

int main(int argc, char** argv)
{
    if (remat::examples::answered_help(
            argc, argv,
            "usage: heat2d_mpi [--nx 64] [--ny 64] [--steps 400] [--slots 10 | --budget BYTES\n"
            "           [--budget-scope rank|job]] [--schedule revolve|uniform|store-all] [--format text|json]\n"
            "           [--store host|parallel-hdf5] [--file PATH]\n"
            "           fault injection (docs/mpi.md): [--fail-on RANK:STEP] [--slots-on RANK:SLOTS] [--file-limit "
            "RANK:BYTES]\n"
            "heat2d_mpi: the gradient of J = h^2/2 sum u_T^2 with respect to the initial field u_0 of a 2-D heat\n"
            "equation with a cubic sink (heat2d.hpp), its rows split over the MPI ranks, through remat::mpi::run\n"
            "with a hand-written adjoint step.\n"))
        return 0;
    MPI_Init(&argc, &argv);
    int me = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    int status = 0;
    try {
        status = run(parse(argc, argv));
    } catch (const remat::cli::usage_error& e) {
        if (me == 0)
            std::fprintf(stderr, "heat2d_mpi: %s\n%s", e.what(), usage_text);
        status = 2;
    } catch (const std::exception& e) {
        // Errors that every rank reaches together (a plan mismatch, a budget without room): each rank
        // says so, rank 0 with the whole message.
        if (me == 0)
            std::fprintf(stderr, "heat2d_mpi: %s\n", e.what());
        status = 1;
    }
    MPI_Finalize();
    return status;
}
