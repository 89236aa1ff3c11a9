// remat::chain against rockmate's rotor solver (label crosscheck), on small random chains at a granularity of
// one byte. rotor plans under a more cautious memory model (bench/rotor_plan.py says how the chain is given
// to it), so its plans are not remat's; but each one it makes, translated to remat's actions
// (bench/rotor_sequence.hpp), is a persistent plan for the same chain. So where it fits the budget under the
// independent replay (tests/support/chain_reference), remat's exact plan may never cost more; and its replayed
// cost may never exceed rotor's own optimum (the translation adds no work). rockmate comes from PyPI into the
// build's Python environment (scripts/install-python.sh); where it is missing the test fails, saying so.
#define BOOST_TEST_MODULE chain_rotor
#include "chain_reference.hpp"
#include "random_chain.hpp"
#include "rotor_sequence.hpp"

#include "remat/schedule/chain.hpp"

#include <boost/test/unit_test.hpp>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace remat;

struct rotor_case {
    chain_model chain;
    std::uint64_t budget = 0;
};

std::vector<nlohmann::json> run_rotor(const std::vector<rotor_case>& cases)
{
    const std::string python = REMAT_PYTHON;
    const std::filesystem::path dir = std::filesystem::temp_directory_path();
    const std::filesystem::path in = dir / ("remat_rotor_cases_" + std::to_string(::getpid()) + ".json");
    const std::filesystem::path out = dir / ("remat_rotor_plans_" + std::to_string(::getpid()) + ".json");
    nlohmann::json list = nlohmann::json::array();
    for (const rotor_case& c : cases)
        list.push_back({{"chain", nlohmann::json::parse(to_json(c.chain))}, {"budget", c.budget}, {"unit_bytes", 1}});
    std::ofstream(in) << list.dump();
    const std::string command =
        "'" + python + "' '" REMAT_ROTOR_PLAN "' --cases '" + in.string() + "' > '" + out.string() + "'";
    const int status = std::system(command.c_str());
    std::filesystem::remove(in);
    BOOST_TEST_REQUIRE(status == 0, "rockmate's rotor solver did not run ("
                                        << command
                                        << "): scripts/install-python.sh <build dir> installs rockmate from PyPI "
                                           "(pinned); it failed or was not run (see <build dir>/python-venv.log)");
    std::ifstream result(out);
    const auto plans = nlohmann::json::parse(result).get<std::vector<nlohmann::json>>();
    std::filesystem::remove(out);
    BOOST_TEST_REQUIRE(plans.size() == cases.size());
    return plans;
}

} // namespace

BOOST_AUTO_TEST_CASE(rotor_plans_never_beat_the_exact_plan_under_remats_model)
{
    // rotor counts more than remat's model does (the adjoint's own vectors, a step's input next to its
    // output), so it is given every budget from remat's least to three times store-all, and each remat
    // budget is compared with the cheapest of rotor's plans that fit it under the replay: the best rotor
    // can do for that budget.
    std::mt19937_64 rng(2026);
    std::vector<chain_model> chains;
    std::vector<rotor_case> cases;
    std::vector<std::size_t> chain_of;
    for (int trial = 0; trial < 120; ++trial) {
        // No zero cost; b_k includes the step's re-run, as in the model, so it is at least f_k; a_k on every
        // third step.
        chains.push_back(test::random_chain(rng, 1 + trial % 10,
                                            {.most_adjoint_bytes = 3, .least_quarters = 1, .adjoint_bytes_every = 3}));
        const chain_model& m = chains.back();
        for (std::uint64_t budget = 1; budget <= 3 * m.store_all_bytes(); ++budget) {
            cases.push_back({m, budget});
            chain_of.push_back(chains.size() - 1);
        }
    }
    const std::vector<nlohmann::json> plans = run_rotor(cases);

    std::vector<std::vector<test::chain_replay>> rotor_plans(chains.size());
    std::size_t planned = 0;
    for (std::size_t i = 0; i < cases.size(); ++i) {
        const auto sequence = plans[i].at("sequence").get<std::vector<std::string>>();
        if (sequence.empty())
            continue; // no plan in rotor's own model
        ++planned;
        const rotor_case& c = cases[i];
        const test::chain_replay rotor = test::replay_chain(c.chain, bench::rotor_actions(c.chain.size(), sequence));
        BOOST_TEST_REQUIRE(!rotor.error.has_value(), "case " << i << " (T = " << c.chain.size() << ", "
                                                             << plans[i].at("sequence").dump()
                                                             << "): " << rotor.error.value_or(""));
        BOOST_TEST(rotor.cost <= plans[i].at("rotor_cost").get<double>() + 1e-9,
                   "case " << i << ": the translation added work");
        rotor_plans[chain_of[i]].push_back(rotor);
    }

    int compared = 0, as_cheap = 0;
    for (std::size_t n = 0; n < chains.size(); ++n) {
        const chain_model& m = chains[n];
        std::uint64_t least = 0;
        for (step_t k = 0; k < m.size(); ++k)
            least = std::max(least, m.adjoint_need(k));
        for (std::uint64_t budget = least; budget <= m.store_all_bytes(); ++budget) {
            double best_rotor = std::numeric_limits<double>::infinity();
            for (const test::chain_replay& r : rotor_plans[n])
                if (r.peak_bytes <= budget)
                    best_rotor = std::min(best_rotor, r.cost);
            if (!std::isfinite(best_rotor))
                continue;
            const chain ours(m, budget);
            BOOST_TEST_REQUIRE(ours.exact());
            const test::chain_replay mine = test::replay_chain_plan(m, ours);
            BOOST_TEST_REQUIRE(!mine.error.has_value());
            BOOST_TEST_REQUIRE(mine.peak_bytes <= budget);
            ++compared;
            BOOST_TEST(mine.cost <= best_rotor + 1e-9, "T = " << m.size() << ", budget " << budget << ": remat "
                                                              << mine.cost << ", rotor " << best_rotor);
            as_cheap += mine.cost >= best_rotor - 1e-9;
        }
    }
    BOOST_TEST_MESSAGE(cases.size() << " rotor budgets, " << planned << " planned; " << compared
                                    << " remat budgets compared, rotor's best as cheap as remat's exact plan in "
                                    << as_cheap);
    // Not vacuous: most budgets are compared, and rotor's best is often optimal in remat's model too.
    BOOST_TEST(compared > 500);
    BOOST_TEST(as_cheap * 4 > compared);
}
