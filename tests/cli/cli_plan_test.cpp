// `remat plan` and `remat draw`, run in-process: outputs checked against the library and against an
// independent replay of the printed actions.
#define BOOST_TEST_MODULE cli_plan
#include <boost/test/unit_test.hpp>

#include "scratch_dir.hpp"
#include "simulator.hpp"
#include "svg_facts.hpp"
#include "tool_runner.hpp"

#include "remat/schedule/revolve.hpp"
#include "remat/schedule/uniform.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

using namespace remat;

namespace {

using result = test::tool_result;
using test::plan_json;
using test::run_tool;

} // namespace

BOOST_AUTO_TEST_CASE(json_reports_the_revolve_optimum)
{
    const auto j = plan_json({"--steps", "10", "--slots", "3"});
    BOOST_TEST(j["forward_steps"].get<std::uint64_t>() == 15u);
    BOOST_TEST(j["steps"].get<std::int64_t>() == 10);
    BOOST_TEST(j["slots"].get<std::int64_t>() == 3);
    BOOST_TEST(j["reverse_steps"].get<std::uint64_t>() == 10u);
    BOOST_TEST(j["stores"].get<std::uint64_t>() == revolve(10, 3).cost().stores);
    BOOST_TEST(j["restores"].get<std::uint64_t>() == 9u);
    BOOST_TEST(j["peak_slots"].get<std::uint64_t>() == 3u);
    BOOST_TEST(j["schedule"].get<std::string>() == "revolve");
    const auto big = plan_json({"--steps", "1e15", "--slots", "50"});
    BOOST_TEST(big["forward_steps"].get<std::uint64_t>() == revolve(1'000'000'000'000'000, 50).cost().forward_steps);
}

BOOST_AUTO_TEST_CASE(step_counts_in_any_exact_decimal_or_scientific_form)
{
    const std::vector<std::pair<std::string, std::int64_t>> forms{
        {"1.1e8", 110'000'000}, {"1.05e8", 105'000'000}, {"1E3", 1000}, {"2.50e1", 25},
        {"150e-1", 15},         {"1e+2", 100},           {"12.0", 12},  {"1.234567e6", 1'234'567},
    };
    for (const auto& [text, value] : forms) {
        const auto j = plan_json({"-T", text, "--slots", "60"});
        BOOST_TEST(j["steps"].get<std::int64_t>() == value, text);
    }
    BOOST_TEST(plan_json({"--steps", "1.05e8", "--slots", "5"})["steps"].get<std::int64_t>() == 105'000'000);
}

BOOST_AUTO_TEST_CASE(actions_format_replays_legally_with_the_reported_counts)
{
    for (const std::string schedule : {"revolve", "uniform", "store-all"}) {
        const std::string slots = schedule == "store-all" ? "56" : "16";
        const result r =
            run_tool({"plan", "--steps", "57", "--slots", slots, "--schedule", schedule, "--format", "actions"});
        BOOST_TEST_REQUIRE(r.status == 0, r.err);
        const auto j = plan_json({"--steps", "57", "--slots", slots, "--schedule", schedule});
        test::simulator sim(57, {j["slots"].get<slot_t>()});
        test::replay_counts n;
        const auto e = test::replay_printed(sim, r.out, n);
        BOOST_TEST_REQUIRE(!e.has_value(), schedule << ": " << e.value_or(""));
        BOOST_TEST(n.forward_steps == j["forward_steps"].get<std::uint64_t>());
        BOOST_TEST(n.stores == j["stores"].get<std::uint64_t>());
        BOOST_TEST(n.peak_slots == j["peak_slots"].get<std::uint64_t>());
    }
}

BOOST_AUTO_TEST_CASE(text_summary_is_readable)
{
    const result r = run_tool({"plan", "--steps", "10", "--slots", "3"});
    BOOST_TEST_REQUIRE(r.status == 0);
    BOOST_TEST(r.out.find("forward steps  15 (store-all: 9; 6 recomputed, 1.667x)") != std::string::npos, r.out);
    BOOST_TEST(r.out.find("repetition     2") != std::string::npos, r.out);
}

BOOST_AUTO_TEST_CASE(budget_in_bytes_chooses_the_slots)
{
    const auto j = plan_json({"--steps", "100000", "--budget", "2GiB", "--state-bytes", "64MiB"});
    BOOST_TEST(j["slots"].get<std::int64_t>() == 32);
    BOOST_TEST(j["forward_steps"].get<std::uint64_t>() == revolve(100000, 32).cost().forward_steps);
    BOOST_TEST(j["peak_snapshot_bytes"].get<std::uint64_t>() == 32u * 64u * 1024u * 1024u);
    const result text = run_tool({"plan", "--steps", "100000", "--budget", "2GiB", "--state-bytes", "64MiB"});
    BOOST_TEST(text.out.find("2.00 GiB for snapshots of 64.0 MiB: 32 slots") != std::string::npos, text.out);
}

BOOST_AUTO_TEST_CASE(uniform_reports_its_spacing)
{
    const auto fitted = plan_json({"--steps", "100", "--slots", "20", "--schedule", "uniform"});
    BOOST_TEST(fitted["every"].get<std::int64_t>() == uniform::fit(100, 20).every());
    const auto given = plan_json({"--steps", "100", "--every", "10", "--schedule", "uniform"});
    BOOST_TEST(given["every"].get<std::int64_t>() == 10);
    BOOST_TEST(given["peak_slots"].get<std::uint64_t>() == uniform(100, 10).cost().peak_slots);
}

BOOST_AUTO_TEST_CASE(bad_input_exits_2_with_one_line_naming_the_problem)
{
    struct bad_case {
        std::vector<std::string> args;
        std::string mentions;
    };
    const std::vector<bad_case> cases{
        {{"plan", "--steps", "0", "--slots", "3"}, "--steps"},
        {{"plan", "--steps", "-4", "--slots", "3"}, "--steps"},
        {{"plan", "--steps", "ten", "--slots", "3"}, "\"ten\""},
        {{"plan", "--steps", "9223372036854775808", "--slots", "3"}, "9223372036854775807"},
        {{"plan", "--steps", "1e19", "--slots", "3"}, "--steps"},
        {{"plan", "--steps", "9.223372036854775808e18", "--slots", "3"}, "\"9.223372036854775808e18\""},
        {{"plan", "--steps", "1.5", "--slots", "3"}, "\"1.5\" (not an integer)"},
        {{"plan", "--steps", "1.05e1", "--slots", "3"}, "\"1.05e1\" (not an integer)"},
        {{"plan", "--steps", "1e-3", "--slots", "3"}, "\"1e-3\" (not an integer)"},
        {{"plan", "--steps", "1.2.3", "--slots", "3"}, "\"1.2.3\""},
        {{"plan", "--steps", "1e", "--slots", "3"}, "\"1e\""},
        {{"plan", "--steps", ".", "--slots", "3"}, "\".\""},
        {{"plan", "--steps", "10", "--slots", "0"}, "--slots"},
        {{"plan", "--steps", "10", "--slots", "3", "--format", "yaml"}, "--format"},
        {{"plan", "--steps", "10", "--slots", "3", "--schedule", "magic"}, "--schedule"},
        {{"plan", "--slots", "3"}, "--steps"},
        {{"plan", "--steps", "10"}, "--slots"},
        {{"plan", "--steps", "10", "--budget", "1GiB"}, "--state-bytes"},
        {{"plan", "--steps", "10", "--budget", "1MiB", "--state-bytes", "64MiB"}, "no snapshot"},
        {{"plan", "--steps", "10", "--budget", "lots", "--state-bytes", "64MiB"}, "--budget"},
        {{"plan", "--steps", "1000000", "--slots", "10", "--schedule", "uniform"}, "at least"},
        {{"plan", "--steps", "100", "--slots", "3", "--schedule", "store-all"}, "99 slots"},
        {{"plan", "--steps", "100", "--slots", "3", "--schedule", "uniform", "--every", "10"}, "needs 18 slots"},
        {{"draw", "--steps", "10", "--slots", "3"}, "--output"},
        {{"frobnicate"}, "frobnicate"},
        {{}, "subcommand"},
    };
    for (const auto& c : cases) {
        test::check_usage_error(c.args, c.mentions);
    }
}

// An unknown option is named whatever else is wrong: `calibrate --bogus` named its required --disk instead (CLI11
// checks required options before unknown ones).
BOOST_AUTO_TEST_CASE(every_command_names_the_unknown_option_given)
{
    const std::vector<std::vector<std::string>> commands{{"plan"},
                                                         {"plan", "--steps", "10", "--slots", "3"},
                                                         {"draw"},
                                                         {"draw", "--steps", "10", "--slots", "3"},
                                                         {"inspect"},
                                                         {"calibrate"},
                                                         {"tradeoff"},
                                                         {"tradeoff", "--steps", "100"},
                                                         {}};
    for (const auto& command : commands) {
        // a remat built without HDF5 has inspect and calibrate say only that they are unavailable
        if (!command.empty() && test::run_tool(command).err.find("unavailable") != std::string::npos)
            continue;
        auto args = command;
        args.push_back("--bogus");
        test::check_usage_error(args, "--bogus");
        args.insert(args.begin() + (command.empty() ? 0 : 1), "--wrong-too");
        test::check_usage_error(args, "--wrong-too");
    }
}

BOOST_AUTO_TEST_CASE(a_predicted_cost_past_a_double_is_refused_not_printed_as_inf_or_null)
{
    // 490 forward steps at 1e308: the text said "predicted cost inf" and the JSON "predicted_cost": null.
    for (const std::vector<std::string>& costs :
         {std::vector<std::string>{"--step-cost", "1e308"}, std::vector<std::string>{"--reverse-cost", "1e307"}}) {
        for (const char* format : {"text", "json"}) {
            std::vector<std::string> args{"plan", "--steps", "100", "--slots", "3", "--format", format};
            args.insert(args.end(), costs.begin(), costs.end());
            test::check_usage_error(args, "passes the largest double");
        }
        std::vector<std::string> args{"plan", "--steps", "100", "--slots", "3", "--format", "actions"};
        args.insert(args.end(), costs.begin(), costs.end());
        const result actions = run_tool(args); // the schedule does not depend on the costs
        BOOST_TEST(actions.status == 0, actions.err);
    }
    const result taped = run_tool({"plan", "--steps", "100", "--slots", "5", "--schedule", "taped", "--tape-units", "2",
                                   "--step-cost", "1e307", "--format", "json"});
    BOOST_TEST(taped.status == 2, taped.out);
}

// A plan whose counts pass 64 bits exited 1, a runtime failure, where a --budget past 64 bits, a peak of snapshot
// bytes past 64 bits and an online count past the tool's limit exit 2: each follows from the arguments.
BOOST_AUTO_TEST_CASE(uncountable_plans_are_bad_usage_like_every_count_past_64_bits)
{
    for (const std::vector<std::string>& args :
         std::vector<std::vector<std::string>>{{"plan", "--steps", "9223372036854775807", "--slots", "100"},
                                               {"plan", "--steps", "1e18", "--slots", "2"},
                                               {"plan", "--steps", "100", "--budget", "2e19", "--state-bytes", "1"},
                                               {"plan", "--steps", "100", "--level", "host:4", "--level",
                                                "disk:inf:5:5", "--state-bytes", "4000000TiB"}}) {
        const result r = run_tool(args);
        BOOST_TEST(r.status == 2, args[2] << " " << args[4]);
        BOOST_TEST(r.out.empty());
        BOOST_TEST((r.err.find("64-bit") != std::string::npos || r.err.find("2^64-1") != std::string::npos), r.err);
    }
}

BOOST_AUTO_TEST_CASE(draw_writes_a_detailed_diagram_for_small_loops)
{
    const test::scratch_dir dir;
    const auto file = dir / "small.svg";
    const result r = run_tool({"draw", "--steps", "10", "--slots", "3", "-o", file.string()});
    BOOST_TEST_REQUIRE(r.status == 0, r.err);
    // Read back by an XML parser: one advance line per advance action, one reverse line per step (the
    // legend's samples carry no class).
    const auto facts = test::read_svg_facts(file);
    std::size_t advances = 0, stores = 0;
    for (const action& a : revolve(10, 3)) {
        advances += std::holds_alternative<advance>(a) ? 1 : 0;
        stores += std::holds_alternative<store>(a) ? 1 : 0;
    }
    BOOST_TEST(facts["classes"]["advance"].get<std::size_t>() == advances);
    BOOST_TEST(facts["classes"]["reverse"].get<std::size_t>() == 10u);
    BOOST_TEST(facts["classes"]["store"].get<std::size_t>() == stores);
}

BOOST_AUTO_TEST_CASE(draw_writes_through_a_symlink_and_keeps_it)
{
    const test::scratch_dir dir;
    const auto target = dir / "target.svg";
    {
        std::ofstream(target) << "old";
    }
    const auto link = dir / "link.svg";
    std::filesystem::create_symlink(target, link);
    const result r = run_tool({"draw", "--steps", "10", "--slots", "3", "-o", link.string()});
    BOOST_TEST_REQUIRE(r.status == 0, r.err);
    BOOST_TEST(std::filesystem::is_symlink(link));
    BOOST_TEST(test::read_svg_facts(target)["classes"]["reverse"].get<std::size_t>() == 10u);
}

BOOST_AUTO_TEST_CASE(draw_to_an_empty_path_names_the_problem)
{
    test::check_usage_error({"draw", "--steps", "10", "--slots", "3", "-o", ""}, "\"\"");
    const result r = run_tool({"draw", "--steps", "10", "--slots", "3", "-o", ""});
    BOOST_TEST(r.err.find("empty") != std::string::npos, r.err);
    BOOST_TEST(r.err.find(".tmp") == std::string::npos, r.err);
}

BOOST_AUTO_TEST_CASE(draw_summarises_long_loops_in_bounded_size)
{
    const test::scratch_dir dir;
    const auto file = dir / "large.svg";
    const result r = run_tool({"draw", "--steps", "200000", "--slots", "20", "-o", file.string()});
    BOOST_TEST_REQUIRE(r.status == 0, r.err);
    BOOST_TEST(std::filesystem::file_size(file) < 2'000'000u);
    std::ifstream in(file);
    const std::string svg((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    BOOST_TEST(svg.find("summarised") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(draw_to_an_unwritable_place_fails_cleanly)
{
    const result r = run_tool({"draw", "--steps", "10", "--slots", "3", "-o", "/nonexistent-dir/x.svg"});
    BOOST_TEST(r.status == 1);
    BOOST_TEST(r.err.find("/nonexistent-dir/x.svg") != std::string::npos, r.err);
    BOOST_TEST(!std::filesystem::exists("/nonexistent-dir"));
}

BOOST_AUTO_TEST_CASE(an_empty_value_is_refused_not_read_as_the_option_left_out)
{
    // A script's unset variable (`--step-cost "$COST"`) gave the default cost 1, `--schedule ""` revolve,
    // `--chain ""` "--steps is required", `--reverse-cost ""` a reverse cost of 0: every value given must say
    // something.
    const std::vector<std::vector<std::string>> cases{
        {"plan", "--steps", "10", "--slots", "3", "--step-cost", ""},
        {"plan", "--steps", "10", "--slots", "3", "--schedule", ""},
        {"plan", "--steps", "10", "--slots", "3", "--reverse-cost", ""},
        {"plan", "--steps", "", "--slots", "3"},
        {"plan", "--steps", "10", "--slots", ""},
        {"plan", "--chain", "", "--budget", "1MiB"},
        {"plan", "--steps", "10", "--slots", "3", "--format", ""},
        {"draw", "--steps", "10", "--slots", "3", "--every", "", "-o", "/nonexistent-dir/x.svg"}, // never written
        {"tradeoff", "--steps", "10", "--reverse-cost", ""},
        {"tradeoff", "--steps", "10", "--max-overhead", ""},
        {"calibrate", "--disk", "", "--repeats", "1"},
        {"inspect", ""},
    };
    for (const auto& args : cases) {
        std::string given;
        for (std::size_t i = 1; i < args.size(); ++i)
            if (args[i].empty())
                given = args[i - 1].starts_with("-") ? args[i - 1] : "file";
        test::check_usage_error(args, given + ": expected a value, got \"\"");
    }
}
