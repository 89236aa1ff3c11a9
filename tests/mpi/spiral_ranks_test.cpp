// The spiral trainer data-parallel over MPI ranks, as a user runs it under mpirun: after N iterations the
// parameters of 2 and 4 ranks equal one rank's up to the rounding of the sums' order (stated bound 1e-12,
// relative); on a given number of ranks, checkpointing changes nothing (revolve and store-all train to the
// same bits); bad splits are refused naming the ranks.
#define BOOST_TEST_MODULE mpi_spiral_ranks
#include "command.hpp"

#include <boost/test/unit_test.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace {

remat::test::tool_result trainer(int ranks, const std::string& args)
{
    return remat::test::run_command(std::string(REMAT_MPIEXEC) + " -np " + std::to_string(ranks) + " --oversubscribe " +
                                    REMAT_SPIRAL_MPI + " " + args);
}

nlohmann::json json_of(int ranks, const std::string& args)
{
    const remat::test::tool_result r = trainer(ranks, args + " --format json");
    BOOST_TEST_REQUIRE(r.status == 0, r.err);
    return nlohmann::json::parse(r.out);
}

const std::string problem = "--iterations 20 --steps 200 --starts 8 --hidden 16 --slots 6";

double relative_difference(double a, double b)
{
    return std::abs(a - b) / std::max(1.0, std::abs(a));
}

} // namespace

BOOST_AUTO_TEST_CASE(two_and_four_ranks_train_the_parameters_of_one)
{
    const nlohmann::json one = json_of(1, problem);
    BOOST_TEST(one["ranks"] == 1);
    BOOST_TEST(one["bit_identical_vs_store_all"] == true);
    BOOST_TEST(one["grad_check_rel_err"].get<double>() < 1e-4);
    // It trained: the loss fell by more than half over the iterations.
    BOOST_TEST(one["final_loss"].get<double>() < 0.5 * one["first_loss"].get<double>());
    const std::vector<double> reference = one["parameters"];
    BOOST_TEST_REQUIRE(reference.size() == 82u); // 2 -> 16 -> 2 with biases
    for (const int ranks : {2, 4}) {
        BOOST_TEST_CONTEXT(ranks << " ranks")
        {
            const nlohmann::json many = json_of(ranks, problem);
            BOOST_TEST(many["ranks"] == ranks);
            BOOST_TEST(many["bit_identical_vs_store_all"] == true);
            BOOST_TEST(many["grad_check_rel_err"].get<double>() < 1e-4);
            BOOST_TEST(relative_difference(one["first_loss"], many["first_loss"]) < 1e-12);
            BOOST_TEST(relative_difference(one["final_loss"], many["final_loss"]) < 1e-12);
            const std::vector<double> p = many["parameters"];
            BOOST_TEST_REQUIRE(p.size() == reference.size());
            double worst = 0;
            for (std::size_t i = 0; i < p.size(); ++i)
                worst = std::max(worst, relative_difference(reference[i], p[i]));
            BOOST_TEST(worst < 1e-12, "largest parameter difference " << worst);
        }
    }
}

BOOST_AUTO_TEST_CASE(checkpointing_changes_no_bit_of_the_training)
{
    const nlohmann::json revolve = json_of(2, problem);
    const nlohmann::json all = json_of(2, problem + " --schedule store-all");
    BOOST_TEST(revolve["rank0_forward_steps"].get<std::uint64_t>() > all["rank0_forward_steps"].get<std::uint64_t>());
    BOOST_TEST(revolve["parameters_xxh64"] == all["parameters_xxh64"]);
    BOOST_TEST(revolve["losses"] == all["losses"]);
}

BOOST_AUTO_TEST_CASE(a_batch_smaller_than_the_ranks_is_refused)
{
    const remat::test::tool_result r = trainer(4, "--starts 2 --steps 50 --iterations 1");
    BOOST_TEST(r.status != 0);
    BOOST_TEST(r.err.find("--starts 2 gives fewer trajectories than the 4 ranks") != std::string::npos, r.err);
}

BOOST_AUTO_TEST_CASE(steps_beyond_what_the_data_can_hold_are_a_usage_error)
{
    // 2^40 steps passed the check and ended in "std::bad_alloc" (the data are 16 bytes a step); the bound is
    // neural_ode_spiral's.
    const remat::test::tool_result r = trainer(1, "--steps 1099511627776 --iterations 1");
    BOOST_TEST(r.status == 2, r.err);
    BOOST_TEST(r.err.find("neural_ode_spiral_mpi: --steps: expected an integer from 2 to 100000000, got") !=
                   std::string::npos,
               r.err);
}
