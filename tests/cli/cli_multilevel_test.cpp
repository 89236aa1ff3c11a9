// `remat plan --level ...`: multi-level plans from the command line, checked against the library and
// against an independent replay of the printed actions with per-level capacities.
#define BOOST_TEST_MODULE cli_multilevel
#include <boost/test/unit_test.hpp>

#include "simulator.hpp"
#include "tool_runner.hpp"

#include "remat/schedule/multilevel.hpp"
#include "remat/schedule/revolve.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

using namespace remat;

namespace {

using result = test::tool_result;
using test::plan_json;
using test::run_tool;

constexpr slot_t inf = level_spec::unlimited;

} // namespace

BOOST_AUTO_TEST_CASE(json_reports_levels_costs_and_the_predicted_cost)
{
    const auto j =
        plan_json({"--steps", "500", "--level", "host:4", "--level", "disk:inf:5:3.5", "--reverse-cost", "2"});
    cost_model m{{{"host", 4, 0, 0}, {"disk", inf, 5, 3.5}}, 1, 2};
    const schedule_cost c = multilevel(500, m).cost();
    BOOST_TEST(j["schedule"].get<std::string>() == "multilevel");
    BOOST_TEST(j["method"].get<std::string>() == "exact");
    BOOST_TEST(j["predicted_cost"].get<double>() == c.predicted_cost);
    BOOST_TEST(j["forward_steps"].get<std::uint64_t>() == c.forward_steps);
    BOOST_TEST(j["reverse_cost"].get<double>() == 2.0);
    BOOST_TEST_REQUIRE(j["levels"].size() == 2u);
    const auto& disk = j["levels"][1];
    BOOST_TEST(disk["name"].get<std::string>() == "disk");
    BOOST_TEST(disk["slots"].is_null());
    BOOST_TEST(disk["write_cost"].get<double>() == 5.0);
    BOOST_TEST(disk["read_cost"].get<double>() == 3.5);
    BOOST_TEST(disk["stores"].get<std::uint64_t>() == c.levels[1].stores);
    BOOST_TEST(disk["restores"].get<std::uint64_t>() == c.levels[1].restores);
    BOOST_TEST(disk["peak_slots"].get<std::uint64_t>() == c.levels[1].peak_slots);
    BOOST_TEST(j["levels"][0]["slots"].get<std::uint64_t>() == 4u);
}

BOOST_AUTO_TEST_CASE(actions_replay_legally_with_per_level_capacities)
{
    for (const std::vector<std::string>& levels :
         {std::vector<std::string>{"--level", "host:3", "--level", "disk:inf:4:2"},
          std::vector<std::string>{"--level", "device:2", "--level", "host:3:1:1", "--level", "disk:5:6:6"}}) {
        for (const std::string& method : {std::string("exact"), std::string("near-optimal")}) {
            std::vector<std::string> options{"--steps", "300", "--method", method};
            options.insert(options.end(), levels.begin(), levels.end());
            std::vector<std::string> args{"plan"};
            args.insert(args.end(), options.begin(), options.end());
            args.push_back("--format");
            args.push_back("actions");
            const result r = run_tool(args);
            BOOST_TEST_REQUIRE(r.status == 0, r.err);
            const auto j = plan_json(options);
            std::vector<slot_t> capacity;
            for (const auto& l : j["levels"])
                capacity.push_back(l["slots"].is_null() ? inf : l["slots"].get<slot_t>());
            test::simulator sim(300, capacity);
            test::replay_counts n;
            const auto e = test::replay_printed(sim, r.out, n);
            BOOST_TEST_REQUIRE(!e.has_value(), method << ": " << e.value_or(""));
            BOOST_TEST(n.forward_steps == j["forward_steps"].get<std::uint64_t>());
            for (std::size_t i = 0; i < capacity.size(); ++i) {
                BOOST_TEST(n.stores_per_level[i] == j["levels"][i]["stores"].get<std::uint64_t>());
                BOOST_TEST(n.restores_per_level[i] == j["levels"][i]["restores"].get<std::uint64_t>());
                BOOST_TEST(n.peak_per_level[i] == j["levels"][i]["peak_slots"].get<std::uint64_t>());
            }
        }
    }
}

BOOST_AUTO_TEST_CASE(a_near_optimal_layered_plan_names_its_structure)
{
    // Beyond one table's reach (host 1 + disk 2 slots, T = 3*10^4; at 10^5 the stacked plan wins since each
    // store's own structures get a fixed part of the work limit), near-optimal planning picks the layered
    // structure: the exact program over the disk, on a grid, with exact leaves between its checkpoints.
    const std::vector<std::string> options{"--steps", "30000",        "--level",  "host:1",
                                           "--level", "disk:2:2:0.5", "--method", "near-optimal"};
    const auto j = plan_json(options);
    multilevel::options o;
    o.how = multilevel::method::near_optimal;
    const multilevel plan(30000, cost_model{{{"host", 1, 0, 0}, {"disk", 2, 2, 0.5}}}, o);
    BOOST_TEST_REQUIRE((plan.structure_used() == multilevel::structure::layered));
    BOOST_TEST(j["method"].get<std::string>() == "near-optimal");
    BOOST_TEST(j["structure"].get<std::string>() == "layered");
    BOOST_TEST(j["period"].get<step_t>() == plan.period());
    BOOST_TEST(j["predicted_cost"].get<double>() == plan.cost().predicted_cost);
    std::vector<std::string> args{"plan"};
    args.insert(args.end(), options.begin(), options.end());
    const result r = run_tool(args);
    BOOST_TEST_REQUIRE(r.status == 0, r.err);
    const std::string expected = "the exact program over disk alone on a grid of " + std::to_string(plan.period()) +
                                 " steps, exact schedules of up to " + std::to_string(plan.horizon()) + " steps";
    BOOST_TEST(r.out.find(expected) != std::string::npos, r.out);
}

BOOST_AUTO_TEST_CASE(byte_capacities_become_slots)
{
    const auto j = plan_json({"--steps", "300", "--level", "device:16GiB:0:0", "--level", "host:200GiB:0.5:0.5",
                              "--level", "disk:inf:8:8", "--state-bytes", "1GiB"});
    BOOST_TEST(j["levels"][0]["slots"].get<std::uint64_t>() == 16u);
    BOOST_TEST(j["levels"][1]["slots"].get<std::uint64_t>() == 200u);
    BOOST_TEST(j["levels"][2]["slots"].is_null());
    BOOST_TEST(j["levels"][1]["capacity_bytes"].get<std::uint64_t>() == 200ull << 30);
    const cost_model m{{{"device", 16, 0, 0}, {"host", 200, 0.5, 0.5}, {"disk", inf, 8, 8}}};
    BOOST_TEST(j["predicted_cost"].get<double>() == multilevel(300, m).cost().predicted_cost);
    BOOST_TEST(j["state_bytes"].get<std::uint64_t>() == 1ull << 30);
    // Levels give capacities, not a budget: no budget_bytes (it printed 0, read from an empty optional).
    BOOST_TEST(!j.contains("budget_bytes"));
    const result text = run_tool(
        {"plan", "--steps", "300", "--level", "host:200GiB", "--level", "disk:inf:8:8", "--state-bytes", "1GiB"});
    BOOST_TEST_REQUIRE(text.status == 0, text.err);
    BOOST_TEST(text.out.find("budget") == std::string::npos, text.out); // was "budget 0 B for snapshots of ..."
    BOOST_TEST(text.out.find("peak slots     200 (200 GiB of snapshots)") != std::string::npos, text.out);
    BOOST_TEST(j["peak_snapshot_bytes"].get<std::uint64_t>() == j["peak_slots"].get<std::uint64_t>() << 30);
}

BOOST_AUTO_TEST_CASE(a_peak_of_snapshots_beyond_64_bits_is_refused_not_wrapped)
{
    // 9 snapshots of 4e6 TiB are 3.96e19 bytes: the report printed 2.69e18 (the product wrapped).
    for (const char* format : {"json", "text"}) {
        const result r = run_tool({"plan", "--steps", "100", "--level", "host:4", "--level", "disk:inf:5:5",
                                   "--state-bytes", "4000000TiB", "--format", format});
        BOOST_TEST(r.status == 2, format);
        BOOST_TEST(r.err.find("--state-bytes 4398046511104000000: 9 snapshots of it take about 3.96e+19 bytes, "
                              "beyond the 64-bit range") != std::string::npos,
                   r.err);
    }
}

BOOST_AUTO_TEST_CASE(slots_still_mean_one_free_level)
{
    const auto j = plan_json({"--steps", "1000", "--slots", "10"});
    BOOST_TEST(j["predicted_cost"].get<double>() == static_cast<double>(revolve(1000, 10).cost().forward_steps));
    const auto priced = plan_json({"--steps", "1000", "--slots", "10", "--step-cost", "2", "--reverse-cost", "3"});
    BOOST_TEST(priced["predicted_cost"].get<double>() ==
               2.0 * static_cast<double>(revolve(1000, 10).cost().forward_steps) + 3.0 * 1000);
    // One free level given with --level is the same plan.
    const auto one = plan_json({"--steps", "1000", "--level", "ram:10"});
    BOOST_TEST(one["method"].get<std::string>() == "binomial");
    BOOST_TEST(one["forward_steps"].get<std::uint64_t>() == j["forward_steps"].get<std::uint64_t>());
}

BOOST_AUTO_TEST_CASE(text_lists_each_level)
{
    const result r = run_tool({"plan", "--steps", "200", "--level", "host:2", "--level", "disk:inf:3:3"});
    BOOST_TEST_REQUIRE(r.status == 0, r.err);
    BOOST_TEST(r.out.find("level 1        disk (inf slots, write 3, read 3)") != std::string::npos, r.out);
    BOOST_TEST(r.out.find("predicted cost ") != std::string::npos, r.out);
}

BOOST_AUTO_TEST_CASE(bad_levels_exit_2_with_one_line_naming_the_text)
{
    struct bad_case {
        std::vector<std::string> args;
        std::string mentions;
    };
    const std::vector<bad_case> cases{
        {{"--level", "host"}, "\"host\""},
        {{"--level", "host:0"}, "\"host:0\""},
        {{"--level", "host:lots"}, "\"host:lots\""},
        {{"--level", "host:4:1"}, "\"host:4:1\""},
        {{"--level", "host:4:x:1"}, "\"host:4:x:1\""},
        {{"--level", "host:4:1:-2"}, "\"host:4:1:-2\""},
        {{"--level", "host:16GiB"}, "--state-bytes"},
        {{"--level", "host:1KiB", "--state-bytes", "1MiB"}, "\"host:1KiB\""},
        {{"--level", ":4"}, "\":4\""},
        {{"--level", "host:4", "--slots", "3"}, "--slots"},
        {{"--level", "host:4", "--schedule", "uniform"}, "--level"},
        {{"--schedule", "multilevel"}, "--level"},
        {{"--level", "host:4", "--method", "fast"}, "--method"},
        {{"--level", "host:4", "--step-cost", "0"}, "--step-cost"},
        {{"--slots", "4", "--method", "exact"}, "--method"},
    };
    for (const auto& c : cases) {
        std::vector<std::string> args{"plan", "--steps", "100"};
        args.insert(args.end(), c.args.begin(), c.args.end());
        test::check_usage_error(args, c.mentions);
    }
}

BOOST_AUTO_TEST_CASE(one_step_is_zero_above_its_lower_bound)
{
    // T = 1 costs 0 and so does its bound: the text said "this plan is -nan% above" and the JSON null.
    const std::vector<std::string> args{"--steps", "1", "--level", "host:1", "--level", "disk:inf:1:1"};
    const auto j = plan_json(args);
    BOOST_TEST_REQUIRE(j["gap_to_lower_bound"].is_number(), j.dump());
    BOOST_TEST(j["gap_to_lower_bound"].get<double>() == 0.0);
    std::vector<std::string> text{"plan"};
    text.insert(text.end(), args.begin(), args.end());
    const result r = run_tool(text);
    BOOST_TEST_REQUIRE(r.status == 0, r.err);
    BOOST_TEST(r.out.find("this plan is 0.000% above") != std::string::npos, r.out);
}
