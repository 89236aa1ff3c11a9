// `remat plan --chain FILE --budget B`: the JSON report agrees with the library, the printed actions are
// legal and within budget under an independent replay of the chain model, and bad files or budgets are
// refused with one line and exit 2.
#define BOOST_TEST_MODULE cli_chain
#include <boost/test/unit_test.hpp>

#include "chain_reference.hpp"
#include "chain_taped_reference.hpp"
#include "replay_actions.hpp"
#include "scratch_dir.hpp"
#include "svg_facts.hpp"
#include "tool_runner.hpp"

#include "remat/schedule/chain.hpp"
#include "remat/schedule/chain_taped.hpp"

#include <cmath>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace remat;

namespace {

chain_model alternating(step_t steps)
{
    chain_model m;
    for (step_t k = 0; k < steps; ++k)
        m.steps.push_back(k % 2 == 0 ? chain_step{1.0, 2.5, 1 << 20, 0} : chain_step{3.0, 6.0, 4 << 20, 1 << 20});
    m.final_state_bytes = 1 << 20;
    return m;
}

std::string write(const test::scratch_dir& dir, const std::string& name, const std::string& text)
{
    const std::string path = (dir / name).string();
    std::ofstream(path) << text;
    return path;
}

// `remat plan --chain file --taped-advances` at `budget` against the library's plan of m: the same predicted cost and
// peak, and its actions legal and within the budget under the replay, at that cost. Returns the tool's report.
nlohmann::json taped_plan_as_the_librarys(const chain_model& m, const std::string& file, std::uint64_t budget)
{
    const taped_chain_plan plan = plan_taped_chain(m, budget);
    auto j = test::plan_json({"--chain", file, "--budget", std::to_string(budget), "--taped-advances"});
    BOOST_TEST(j["predicted_cost"].get<double>() == plan.cost);
    BOOST_TEST(j["peak_bytes"].get<std::uint64_t>() == plan.peak_bytes);
    const test::tool_result actions = test::run_tool(
        {"plan", "--chain", file, "--budget", std::to_string(budget), "--taped-advances", "--format", "actions"});
    BOOST_TEST_REQUIRE(actions.status == 0);
    const test::chain_replay r = test::replay_taped_chain(m, test::parse_actions(actions.out));
    BOOST_TEST_REQUIRE(!r.error.has_value(), *r.error);
    BOOST_TEST(r.peak_bytes <= budget);
    BOOST_TEST(r.cost == plan.cost);
    return j;
}

} // namespace

BOOST_AUTO_TEST_CASE(json_and_actions_agree_with_the_library_and_the_replay)
{
    test::scratch_dir dir;
    const chain_model m = alternating(40);
    const std::string file = write(dir, "costs.json", to_json(m));
    for (const std::uint64_t budget : {m.store_all_bytes() / 5, m.store_all_bytes() / 2, m.store_all_bytes()}) {
        const chain plan(m, budget);
        const auto j = test::plan_json({"--chain", file, "--budget", std::to_string(budget)});
        BOOST_TEST(j["schedule"].get<std::string>() == "chain");
        BOOST_TEST(j["predicted_cost"].get<double>() == plan.cost().predicted_cost);
        BOOST_TEST(j["peak_bytes"].get<std::uint64_t>() == plan.peak_bytes());
        BOOST_TEST(j["budget_bytes"].get<std::uint64_t>() == budget);
        BOOST_TEST(j["exact"].get<bool>());
        const test::tool_result actions =
            test::run_tool({"plan", "--chain", file, "--budget", std::to_string(budget), "--format", "actions"});
        BOOST_TEST_REQUIRE(actions.status == 0);
        const test::chain_replay r = test::replay_chain(m, test::parse_actions(actions.out));
        BOOST_TEST_REQUIRE(!r.error.has_value(), *r.error);
        BOOST_TEST(r.peak_bytes <= budget);
        BOOST_TEST(r.peak_bytes == plan.peak_bytes());
        BOOST_TEST(r.cost == plan.cost().predicted_cost);
        const test::tool_result text = test::run_tool({"plan", "--chain", file, "--budget", std::to_string(budget)});
        BOOST_TEST(text.status == 0);
        BOOST_TEST(text.out.find("predicted cost") != std::string::npos);
    }
}

BOOST_AUTO_TEST_CASE(non_persistent_plans_the_librarys_cheaper_plan)
{
    // A chain where freeing x_1 at its last restore (and re-running step 0 for step 1's adjoint) fits the
    // adjoints' extra bytes more cheaply than any persistent schedule (found by the exhaustive search).
    chain_model m;
    m.steps = {{1.25, 1.75, 2, 0}, {2.75, 3.0, 2, 2}, {1.5, 2.75, 4, 2}, {2.0, 2.5, 4, 0}};
    m.final_state_bytes = 2;
    test::scratch_dir dir;
    const std::string file = write(dir, "costs.json", to_json(m));
    chain::options o;
    o.non_persistent = true;
    const chain plan(m, 8, o);
    const chain persistent(m, 8);
    BOOST_TEST_REQUIRE(plan.cost().predicted_cost < persistent.cost().predicted_cost);
    BOOST_TEST(plan.cost().predicted_cost == test::brute_force_chain_optimum(m, 8, false));
    const auto j = test::plan_json({"--chain", file, "--budget", "8", "--non-persistent"});
    BOOST_TEST(j["method"].get<std::string>() == "dynamic program, non-persistent");
    BOOST_TEST(j["predicted_cost"].get<double>() == plan.cost().predicted_cost);
    const auto without = test::plan_json({"--chain", file, "--budget", "8"});
    BOOST_TEST(without["predicted_cost"].get<double>() == persistent.cost().predicted_cost);
    const test::tool_result actions =
        test::run_tool({"plan", "--chain", file, "--budget", "8", "--non-persistent", "--format", "actions"});
    BOOST_TEST_REQUIRE(actions.status == 0);
    const test::chain_replay r = test::replay_chain(m, test::parse_actions(actions.out));
    BOOST_TEST_REQUIRE(!r.error.has_value(), *r.error);
    BOOST_TEST(r.peak_bytes <= 8u);
    BOOST_TEST(r.cost == plan.cost().predicted_cost);
}

BOOST_AUTO_TEST_CASE(granularity_and_horizon_options)
{
    test::scratch_dir dir;
    const chain_model m = alternating(30);
    const std::string file = write(dir, "costs.json", to_json(m));
    const std::string budget = std::to_string(m.store_all_bytes() / 3);
    const auto j = test::plan_json({"--chain", file, "--budget", budget, "--granularity", "300000", "--horizon", "5"});
    BOOST_TEST(j["granularity_bytes"].get<std::uint64_t>() == 300000u);
    BOOST_TEST(!j["lossless"].get<bool>());
    BOOST_TEST(j["discretisation_gap_bytes"].get<std::uint64_t>() == 33u * 300000u);
    BOOST_TEST(j["horizon"].get<std::int64_t>() == 5);
    BOOST_TEST(!j["exact"].get<bool>());
    BOOST_TEST(j["peak_bytes"].get<std::uint64_t>() <= m.store_all_bytes() / 3);
    // the least budget of a rounded, cut-short table is not claimed for the chain itself
    const test::tool_result text =
        test::run_tool({"plan", "--chain", file, "--budget", budget, "--granularity", "300000", "--horizon", "5"});
    BOOST_TEST(text.out.find("; at these units and horizon at least ") != std::string::npos, text.out);
    BOOST_TEST(text.out.find("this chain at least") == std::string::npos, text.out);
    // The library's plan with and without the greedy fallback, whichever method each ends with.
    chain::options o;
    o.granularity = 300000;
    o.horizon = 5;
    BOOST_TEST(j["predicted_cost"].get<double>() == chain(m, m.store_all_bytes() / 3, o).cost().predicted_cost);
    o.greedy_fallback = false;
    const chain own(m, m.store_all_bytes() / 3, o);
    const auto tables = test::plan_json(
        {"--chain", file, "--budget", budget, "--granularity", "300000", "--horizon", "5", "--no-greedy-fallback"});
    BOOST_TEST(tables["method"].get<std::string>() == "dynamic program");
    BOOST_TEST(tables["predicted_cost"].get<double>() == own.cost().predicted_cost);
    BOOST_TEST(tables["predicted_cost"].get<double>() >= j["predicted_cost"].get<double>());
}

BOOST_AUTO_TEST_CASE(bad_files_and_budgets_exit_2_with_one_line)
{
    test::scratch_dir dir;
    const chain_model m = alternating(4);
    const std::string good = write(dir, "good.json", to_json(m));
    const auto bad = [&](const std::string& name, const std::string& text) { return write(dir, name, text); };
    struct bad_case {
        std::vector<std::string> args;
        std::string mentions;
    };
    const std::vector<bad_case> cases{
        {{"plan", "--chain", bad("a.json", "{\"steps\": [")}, "not valid JSON"},
        {{"plan", "--chain", bad("b.json", "[1, 2]")}, "expected an object"},
        {{"plan", "--chain", bad("c.json", R"({"steps": [{"forward": -1, "adjoint": 1, "state_bytes": 8}],
            "final_state_bytes": 8})")},
         "step 0: forward cost must be finite and >= 0, got -1"},
        {{"plan", "--chain", bad("d.json", R"({"steps": [{"forward": 1, "adjoint": 1, "state_bytes": 0}],
            "final_state_bytes": 8})")},
         "step 0: state_bytes must be at least 1, got 0"},
        {{"plan", "--chain", bad("e.json", R"({"steps": [{"forward": 1, "adjoint": "x", "state_bytes": 8}],
            "final_state_bytes": 8})")},
         "step 0: \"adjoint\" must be a number"},
        {{"plan", "--chain", bad("f.json", R"({"steps": [{"forward": 1, "adjoint": 1, "state_bytes": 8,
            "foward": 2}], "final_state_bytes": 8})")},
         "unknown field \"foward\""},
        {{"plan", "--chain", bad("g.json", R"({"steps": [{"forward": 1, "adjoint": 1, "state_bytes": -8}],
            "final_state_bytes": 8})")},
         "\"state_bytes\" must be a whole number of bytes"},
        // JSON has no infinity or NaN: a cost too large for a double is how a non-finite one arrives
        {{"plan", "--chain", bad("i.json", R"({"steps": [{"forward": 1e400, "adjoint": 1, "state_bytes": 8}],
            "final_state_bytes": 8})")},
         "i.json: a number too large to be finite"},
        {{"plan", "--chain", bad("t.json", R"({"steps": [{"forward": 1, "adjoint": 1, "state_bytes": 8,
            "tape_bytes": -1}], "final_state_bytes": 8})")},
         "\"tape_bytes\" must be a whole number of bytes"},
        // JSON reads 1e3 as a float: the message said only "must be a whole number of bytes >= 0, got 1000.0"
        {{"plan", "--chain", bad("w.json", R"({"steps": [{"forward": 1, "adjoint": 1, "state_bytes": 1e3}],
            "final_state_bytes": 8})")},
         "\"state_bytes\" must be a whole number of bytes >= 0 written as an integer, without a point or exponent, "
         "got 1000.0"},
        {{"plan", "--chain", bad("u.json", R"({"steps": [{"forward": 1, "adjoint": 1, "state_bytes": 8,
            "tape_bytes": 18446744073709551615}], "final_state_bytes": 8})")},
         "state and tape sizes add up to more than 2^64-1 bytes"},
        {{"plan", "--chain", bad("h.json", R"({"steps": [{"forward": 1, "adjoint": 1, "state_bytes": 8}]})")},
         "missing \"final_state_bytes\""},
        {{"plan", "--chain", (dir / "missing.json").string()}, "cannot be read"},
        // read as empty text, it was "not valid JSON (... unexpected end of input ...)"
        {{"plan", "--chain", dir.path().string(), "--budget", "1MiB"}, "is a directory, not a chain file"},
        {{"plan", "--chain", good, "--budget", "1MiB"}, "below what step 0 alone needs"},
        {{"plan", "--chain", good, "--budget", "5767168"}, "no schedule of this chain fits"},
        {{"plan", "--chain", good}, "--chain needs --budget"},
        {{"plan", "--chain", good, "--budget", "1GiB", "--steps", "4"}, "--chain takes the steps"},
        {{"plan", "--steps", "4", "--slots", "2", "--granularity", "4"}, "apply to --chain only"},
        {{"plan", "--steps", "4", "--slots", "2", "--no-greedy-fallback"}, "apply to --chain only"},
        {{"plan", "--steps", "4", "--slots", "2", "--non-persistent"}, "apply to --chain only"},
        {{"plan", "--slots", "2"}, "--steps is required"},
    };
    for (bad_case c : cases) {
        if (c.args.size() == 3 && c.args[2] != good)
            c.args.insert(c.args.end(), {"--budget", "1GiB"});
        test::check_usage_error(c.args, c.mentions);
    }
}

BOOST_AUTO_TEST_CASE(draw_shows_the_chain_step_by_step)
{
    test::scratch_dir dir;
    const chain_model m = alternating(12);
    const std::string file = write(dir, "costs.json", to_json(m));
    const auto svg = dir / "chain.svg";
    const std::uint64_t budget = m.store_all_bytes() / 2;
    const test::tool_result r =
        test::run_tool({"draw", "--chain", file, "--budget", std::to_string(budget), "-o", svg.string()});
    BOOST_TEST_REQUIRE(r.status == 0, r.err);
    // read back by an XML parser: one advance segment per forward step (each as wide as it costs), one
    // reverse per step, one store mark per store
    const chain plan(m, budget);
    const auto facts = test::read_svg_facts(svg);
    BOOST_TEST(facts["classes"]["advance"].get<std::uint64_t>() == plan.cost().forward_steps);
    BOOST_TEST(facts["classes"]["reverse"].get<std::uint64_t>() == 12u);
    BOOST_TEST(facts["classes"]["store"].get<std::uint64_t>() == plan.cost().stores);

    // Each segment's width is its step's f_k (advance) or b_k (reverse) at one scale: the steps' costs in
    // the order the plan runs them, against the segments in the order the file has them.
    std::vector<double> advance_costs;
    std::vector<double> reverse_costs;
    for (const action& a : plan) {
        if (const auto* x = std::get_if<advance>(&a))
            for (step_t k = x->from; k < x->to; ++k)
                advance_costs.push_back(m.steps[static_cast<std::size_t>(k)].forward);
        else if (const auto* rev = std::get_if<reverse>(&a))
            reverse_costs.push_back(m.steps[static_cast<std::size_t>(rev->step)].adjoint);
    }
    const auto& advances = facts["segments"]["advance"];
    const auto& reverses = facts["segments"]["reverse"];
    BOOST_TEST_REQUIRE(advances.size() == advance_costs.size());
    BOOST_TEST_REQUIRE(reverses.size() == reverse_costs.size());
    const auto width = [](const nlohmann::json& s) { return std::abs(s[2].get<double>() - s[0].get<double>()); };
    double total_width = 0;
    for (const auto& s : advances)
        total_width += width(s);
    for (const auto& s : reverses)
        total_width += width(s);
    const double per_cost = total_width / plan.cost().predicted_cost;
    for (std::size_t i = 0; i < advances.size(); ++i)
        BOOST_TEST(std::abs(width(advances[i]) - per_cost * advance_costs[i]) < 0.02, "advance segment " << i);
    for (std::size_t i = 0; i < reverses.size(); ++i)
        BOOST_TEST(std::abs(width(reverses[i]) - per_cost * reverse_costs[i]) < 0.02, "reverse segment " << i);
}

BOOST_AUTO_TEST_CASE(taped_advances_plan_the_librarys_taped_plan)
{
    test::scratch_dir dir;
    const chain_model m = alternating(12);
    const std::string file = write(dir, "costs.json", to_json(m));
    const std::uint64_t all = all_taped_bytes(m);
    for (const std::uint64_t budget : {m.store_all_bytes() / 3, m.store_all_bytes(), all}) {
        const auto j = taped_plan_as_the_librarys(m, file, budget);
        const taped_chain_plan plan = plan_taped_chain(m, budget);
        BOOST_TEST(j["method"].get<std::string>() == "dynamic program, taped advances");
        BOOST_TEST(j["taped_steps"].get<std::uint64_t>() == plan.taped_steps);
        BOOST_TEST(j["least_budget_bytes"].get<std::uint64_t>() == plan.least_budget_bytes);
        BOOST_TEST(j["predicted_cost"].get<double>() <= chain(m, budget).cost().predicted_cost);
    }
    // With room for every tape, no step runs twice: every step but the last taped.
    BOOST_TEST(test::plan_json({"--chain", file, "--budget", std::to_string(all), "--taped-advances"})["taped_steps"]
                   .get<std::uint64_t>() == 11u);
    const test::tool_result horizon = test::run_tool(
        {"plan", "--chain", file, "--budget", std::to_string(all), "--taped-advances", "--horizon", "3"});
    BOOST_TEST(horizon.status == 2);
    const test::tool_result no_chain = test::run_tool({"plan", "--steps", "5", "--slots", "2", "--taped-advances"});
    BOOST_TEST(no_chain.status == 2);
}

BOOST_AUTO_TEST_CASE(tape_sizes_in_the_file_plan_as_the_library_with_them)
{
    // chain_step::tape_bytes, written by to_json where given and read back by --chain: the plan is the library's on
    // that chain (not on the chain without it), and its actions replay within the budget under the tapes' sizes.
    test::scratch_dir dir;
    chain_model m = alternating(12);
    for (std::size_t k = 1; k < m.steps.size(); k += 2)
        m.steps[k].tape_bytes = 2 << 20; // below m_k + a_k = 5 MiB: a tape sharing its output with the next one's
    const std::string text = to_json(m);
    std::size_t written = 0;
    for (std::size_t at = text.find("\"tape_bytes\": 2097152"); at != std::string::npos;
         at = text.find("\"tape_bytes\"", at + 1))
        ++written;
    BOOST_TEST(written == 6u); // the six given, none for the steps without
    const std::string file = write(dir, "tapes.json", text);
    chain_model without = m;
    for (chain_step& st : without.steps)
        st.tape_bytes = 0;
    BOOST_TEST(all_taped_bytes(m) < all_taped_bytes(without));
    for (const std::uint64_t budget : {all_taped_bytes(m) / 2, all_taped_bytes(m)}) {
        (void)taped_plan_as_the_librarys(m, file, budget);
    }
    // Room for every given tape: plain autograd's plan, which the tapes' default sizes would not fit
    BOOST_TEST(test::plan_json(
                   {"--chain", file, "--budget", std::to_string(all_taped_bytes(m)), "--taped-advances"})["taped_steps"]
                   .get<std::uint64_t>() == 11u);
}

BOOST_AUTO_TEST_CASE(a_chain_that_costs_nothing_reports_an_overhead_of_one_in_both_formats)
{
    // Store-all's cost 0: the text said 1.000x and the JSON 0/0, written as null.
    test::scratch_dir dir;
    const std::string file = write(dir, "free.json", to_json(chain_model::uniform(3, 0, 0, 10)));
    for (const bool taped : {false, true}) {
        std::vector<std::string> args{"plan", "--chain", file, "--budget", "40"};
        if (taped)
            args.emplace_back("--taped-advances");
        const test::tool_result text = test::run_tool(args);
        BOOST_TEST_REQUIRE(text.status == 0, text.err);
        BOOST_TEST(text.out.find("; 1.000x)") != std::string::npos, text.out);
        args.insert(args.end(), {"--format", "json"});
        const test::tool_result json = test::run_tool(args);
        BOOST_TEST_REQUIRE(json.status == 0, json.err);
        const auto doc = nlohmann::json::parse(json.out);
        BOOST_TEST_REQUIRE(doc["overhead"].is_number(), taped << ": " << json.out);
        BOOST_TEST(doc["overhead"].get<double>() == 1.0);
    }
}
