// neural_ode_spiral_mpi: the spiral trainer, data-parallel over MPI ranks. The batch's trajectories are split
// over the ranks (rank r integrates members [r M / R, (r+1) M / R) of M); each rank runs its share's
// gradient through remat::run with its own snapshots, the gradients and losses are summed with
// MPI_Allreduce, and every rank makes the same Adam update. The parameters after N iterations equal one
// rank's up to the rounding of the sums' order (tests/mpi/spiral_ranks_test checks 1, 2 and 4 ranks).
//
//     mpirun -np 4 build/examples/neural_ode_spiral_mpi [--iterations 50] [--steps 400] [--starts 8]
//         [--hidden 16] [--slots 10] [--schedule revolve|uniform|store-all] [--seed 1] [--format text|json]
//
// Exit status: 0; 2 for bad options (rank 0 says why); a failure on one rank ends the job through
// remat::mpi::abort_on_failure, naming the rank.
#include "program_help.hpp"
#include "spiral_data.hpp"
#include "spiral_training.hpp"

#include "remat/cli/parse.hpp" // remat::cli::parse_count, usage_error

#include <remat/detail/xxh64.hpp>
#include <remat/mpi/mpi.hpp>
#include <remat/report/json.hpp>
#include <remat/train/training_log.hpp>

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <iostream>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace {

using namespace remat;
using namespace remat::examples;

struct options {
    spiral_config config;
    std::string schedule = "revolve";
    bool json = false;
};

const char* const usage_text =
    "usage: neural_ode_spiral_mpi [--iterations N] [--steps T] [--starts M] [--hidden W] [--slots S]\n"
    "                             [--schedule revolve|uniform|store-all] [--seed N] [--format text|json]\n";

options parse(int argc, char** argv)
{
    options o;
    o.config.iterations = 50;
    o.config.steps = 400;
    o.config.starts = 8;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (i + 1 >= argc)
            throw cli::usage_error("option " + std::string(a) + " needs a value");
        const std::string_view v = argv[++i];
        if (a == "--iterations")
            o.config.iterations = cli::parse_count(a, v, 1);
        else if (a == "--steps")
            // neural_ode_spiral's bound: the data alone are 16 bytes a step (2^40 steps ended in std::bad_alloc).
            o.config.steps = cli::parse_count(a, v, 2, 100'000'000);
        else if (a == "--starts")
            o.config.starts = cli::parse_count(a, v, 1);
        else if (a == "--hidden")
            o.config.hidden = {cli::parse_count(a, v, 1, 1 << 16)};
        else if (a == "--slots")
            o.config.slots = cli::parse_count(a, v, 1);
        else if (a == "--seed")
            o.config.seed = static_cast<std::uint64_t>(cli::parse_count(a, v, 0));
        else if (a == "--schedule") {
            if (v == "revolve")
                o.config.schedule = spiral_schedule::revolve;
            else if (v == "uniform")
                o.config.schedule = spiral_schedule::uniform;
            else if (v == "store-all")
                o.config.schedule = spiral_schedule::store_all;
            else
                throw cli::usage_error("--schedule wants revolve, uniform or store-all, got '" + std::string(v) + "'");
            o.schedule = v;
        } else if (a == "--format") {
            if (v != "text" && v != "json")
                throw cli::usage_error("--format wants text or json, got '" + std::string(v) + "'");
            o.json = v == "json";
        } else
            throw cli::usage_error("unknown option '" + std::string(a) + "'");
    }
    choose_default_slots(o.config, 10);
    if (const auto problem = slots_problem(o.config))
        throw cli::usage_error(*problem);
    if (o.config.starts > o.config.steps)
        throw cli::usage_error("--starts " + std::to_string(o.config.starts) + " exceeds --steps " +
                               std::to_string(o.config.steps));
    return o;
}

double sum(double local)
{
    double total = 0;
    mpi::check(MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
    return total;
}

int train_on_ranks(options o, int rank, int ranks)
{
    if (o.config.starts < ranks)
        throw cli::usage_error("--starts " + std::to_string(o.config.starts) + " gives fewer trajectories than the " +
                               std::to_string(ranks) + " ranks");
    o.config.first_member = o.config.starts * rank / ranks;
    o.config.members = o.config.starts * (rank + 1) / ranks - o.config.first_member;
    o.config.sum_over_ranks = [](std::span<double> values) {
        mpi::check(MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_DOUBLE, MPI_SUM,
                                 MPI_COMM_WORLD),
                   "MPI_Allreduce");
    };
    const spiral_data data = make_spiral_data(o.config.steps);
    const auto start = std::chrono::steady_clock::now();
    const spiral_result r =
        mpi::abort_on_failure(MPI_COMM_WORLD, [&] { return train_spiral_on_cpu(o.config, data, [](auto, auto) {}); });
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    // The final checks are each rank's own (its share's gradient against store-all and central differences).
    const double final_loss = sum(r.final_loss);
    int identical = r.bit_identical_vs_store_all ? 1 : 0;
    mpi::check(MPI_Allreduce(MPI_IN_PLACE, &identical, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD), "MPI_Allreduce");
    double worst_check = r.grad_check_rel_err;
    mpi::check(MPI_Allreduce(MPI_IN_PLACE, &worst_check, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
    double slowest = seconds;
    mpi::check(MPI_Allreduce(MPI_IN_PLACE, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
    // The losses are the whole batch's on every rank: every rank reaches the same verdict.
    const std::optional<std::string> diverged = remat::train::divergence(r.losses, final_loss);
    if (rank != 0)
        return diverged ? 1 : 0;
    char hash[17];
    std::snprintf(hash, sizeof hash, "%016" PRIx64,
                  detail::xxh64(r.parameters.data(), r.parameters.size() * sizeof(double)));
    if (o.json) {
        nlohmann::ordered_json j;
        j["ranks"] = ranks;
        j["iterations"] = o.config.iterations;
        j["steps"] = o.config.steps;
        j["starts"] = o.config.starts;
        j["schedule"] = o.schedule;
        j["slots"] = r.slots;
        j["first_loss"] = r.losses.front();
        j["final_loss"] = final_loss;
        j["diverged"] = diverged.has_value();
        j["losses"] = r.losses;
        j["parameters"] = r.parameters;
        j["parameters_xxh64"] = hash;
        j["rank0_forward_steps"] = r.forward_steps;
        j["rank0_peak_snapshot_bytes"] = r.peak_snapshot_bytes;
        j["bit_identical_vs_store_all"] = identical == 1;
        j["grad_check_rel_err"] = worst_check;
        j["seconds"] = slowest;
        report::write_json(std::cout, j);
    } else {
        std::printf("neural_ode_spiral_mpi: %d rank%s, %lld trajectories of %lld steps, %s with %lld slots per rank\n",
                    ranks, ranks > 1 ? "s" : "", static_cast<long long>(o.config.starts),
                    static_cast<long long>(o.config.steps), o.schedule.c_str(), static_cast<long long>(r.slots));
        std::printf("  loss %.6g -> %.6g after %lld iterations; parameters xxh64 %s\n", r.losses.front(), final_loss,
                    static_cast<long long>(o.config.iterations), hash);
        std::printf("  every rank's gradient bit-identical to store-all: %s; worst directional check %.2e\n",
                    identical == 1 ? "yes" : "NO", worst_check);
        std::printf("  %.3f s (slowest rank)\n", slowest);
    }
    if (diverged) {
        std::cerr << "neural_ode_spiral_mpi: " << *diverged << '\n';
        return 1;
    }
    return identical == 1 ? 0 : 1;
}

} // namespace

int main(int argc, char** argv)
{
    if (remat::examples::answered_help(argc, argv, usage_text)) // before MPI starts
        return 0;
    MPI_Init(&argc, &argv);
    int rank = 0;
    int ranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    int status = 0;
    try {
        status = train_on_ranks(parse(argc, argv), rank, ranks);
    } catch (const cli::usage_error& e) {
        // Every rank parses the same arguments and fails alike: rank 0 speaks.
        if (rank == 0)
            std::fprintf(stderr, "neural_ode_spiral_mpi: %s\n%s", e.what(), usage_text);
        status = 2;
    } catch (const std::exception& e) {
        // A failure while training (a loss that is not finite, a store that fails) ends every rank alike:
        // rank 0 says so, in one line, instead of an uncaught exception.
        if (rank == 0)
            std::fprintf(stderr, "neural_ode_spiral_mpi: %s\n", e.what());
        status = 1;
    }
    MPI_Finalize();
    return status;
}
