// `remat plan --schedule taped | checkpoint-sequential` and `remat draw` of such plans: the reports equal
// the library's plans (remat::taped_revolve, remat::taped_uniform), the printed actions replay under the
// independent taped simulator within the memory asked for, and bad tape options are refused by name.
#define BOOST_TEST_MODULE cli_taped
#include <boost/test/unit_test.hpp>

#include "scratch_dir.hpp"
#include "svg_facts.hpp"
#include "taped_simulator.hpp"
#include "tool_runner.hpp"

#include "remat/schedule/taped_revolve.hpp"
#include "remat/schedule/taped_uniform.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

using namespace remat;

namespace {

using test::plan_json;
using test::run_tool;

// The counts every taped report gives, against a plan of the library's.
template <class Plan>
void check_report(const nlohmann::json& j, const Plan& plan, slot_t units)
{
    const schedule_cost c = plan.cost();
    BOOST_TEST(j["slots"].get<slot_t>() == units);
    BOOST_TEST(j["tape_units"].get<slot_t>() == plan.tape_units());
    BOOST_TEST(j["forward_steps"].get<std::uint64_t>() == c.forward_steps);
    BOOST_TEST(j["taped_steps"].get<std::uint64_t>() == c.taped_steps);
    BOOST_TEST(j["peak_tapes"].get<std::uint64_t>() == c.peak_tapes);
    BOOST_TEST(j["peak_slots"].get<slot_t>() == c.peak_slots);
    BOOST_TEST(j["peak_units"].get<slot_t>() == plan.peak_units());
    BOOST_TEST(j["evaluations"].get<std::uint64_t>() == plan.evaluations());
    BOOST_TEST(j["peak_units"].get<slot_t>() <= units);
}

} // namespace

BOOST_AUTO_TEST_CASE(taped_reports_the_optimal_plan_priced_per_evaluation)
{
    const auto j = plan_json({"--steps", "300", "--slots", "60", "--schedule", "taped", "--tape-units", "6",
                              "--step-cost", "0.69", "--reverse-cost", "1.19"});
    const taped_revolve plan(300, 60, 6, 0.69, 1.19);
    BOOST_TEST(j["schedule"].get<std::string>() == "taped");
    check_report(j, plan, 60);
    BOOST_TEST(plan.cost().taped_steps > 0u); // the memory holds tapes: the check above is not all zeros
    // F per evaluation (a reverse from a state re-runs its step), B per reverse.
    const double expected = 0.69 * static_cast<double>(plan.evaluations()) + 1.19 * 300;
    BOOST_TEST(std::abs(j["predicted_cost"].get<double>() - expected) <= 1e-9 * expected);
}

BOOST_AUTO_TEST_CASE(checkpoint_sequential_takes_a_spacing_or_fits_one)
{
    const auto given =
        plan_json({"--steps", "1000", "--every", "32", "--schedule", "checkpoint-sequential", "--tape-units", "6"});
    const taped_uniform spaced(1000, 32, 6);
    BOOST_TEST(given["every"].get<step_t>() == 32);
    check_report(given, spaced, spaced.peak_units()); // without --slots: the memory the spacing needs
    BOOST_TEST(given["evaluations"].get<std::uint64_t>() == 2 * 1000 - 8u); // 2T - L_last

    const auto fitted =
        plan_json({"--steps", "1000", "--slots", "154", "--schedule", "checkpoint-sequential", "--tape-units", "6"});
    const taped_uniform fit = taped_uniform::fit(1000, 154, 6);
    BOOST_TEST(fitted["every"].get<step_t>() == fit.every());
    check_report(fitted, fit, 154);
    // remat's optimum in the same memory never needs more evaluations.
    const auto optimal = plan_json({"--steps", "1000", "--slots", "154", "--schedule", "taped", "--tape-units", "6"});
    BOOST_TEST(optimal["evaluations"].get<std::uint64_t>() <= fitted["evaluations"].get<std::uint64_t>());
}

BOOST_AUTO_TEST_CASE(actions_replay_within_the_units_with_the_reported_counts)
{
    for (const std::string schedule : {"taped", "checkpoint-sequential"}) {
        const std::vector<std::string> args{"--steps",    "97",     "--slots",      "40",
                                            "--schedule", schedule, "--tape-units", "3"};
        std::vector<std::string> plan_args{"plan"};
        plan_args.insert(plan_args.end(), args.begin(), args.end());
        plan_args.insert(plan_args.end(), {"--format", "actions"});
        const test::tool_result r = run_tool(plan_args);
        BOOST_TEST_REQUIRE(r.status == 0, r.err);
        const auto j = plan_json(args);
        test::taped_simulator sim(97, 40, 3);
        test::taped_counts n;
        const auto e = test::replay_printed(sim, r.out, n);
        BOOST_TEST_REQUIRE(!e.has_value(), schedule << ": " << e.value_or(""));
        BOOST_TEST(n.evaluations() == j["evaluations"].get<std::uint64_t>(), schedule);
        BOOST_TEST(n.taped_steps == j["taped_steps"].get<std::uint64_t>(), schedule);
        BOOST_TEST(n.peak_units == j["peak_units"].get<slot_t>(), schedule);
        BOOST_TEST(n.taped_steps > 0u, schedule);
    }
}

BOOST_AUTO_TEST_CASE(rerun_units_price_what_a_reverse_holds_while_it_re_runs)
{
    // As PyTorch holds a GRU loop (docs/tapes.md): a tape of 7 states, and a reverse's re-run keeps one.
    const std::vector<std::string> args{"--steps",      "300", "--slots",       "60", "--schedule", "taped",
                                        "--tape-units", "7",   "--rerun-units", "7"};
    const auto j = plan_json(args);
    const taped_revolve held(300, 60, 7, 1, 1, taped_revolve::default_work_limit, 7);
    check_report(j, held, 60);
    BOOST_TEST(j["rerun_units"].get<slot_t>() == 7);
    // the re-run's memory costs evaluations: more than the plan that leaves it out
    BOOST_TEST(held.evaluations() > taped_revolve(300, 60, 7).evaluations());
    std::vector<std::string> plan_args{"plan"};
    plan_args.insert(plan_args.end(), args.begin(), args.end());
    plan_args.insert(plan_args.end(), {"--format", "actions"});
    const test::tool_result r = run_tool(plan_args);
    BOOST_TEST_REQUIRE(r.status == 0, r.err);
    test::taped_simulator sim(300, 60, 7, 7); // the printed actions within 60 units, re-runs counted
    test::taped_counts n;
    const auto e = test::replay_printed(sim, r.out, n);
    BOOST_TEST_REQUIRE(!e.has_value(), e.value_or(""));
    BOOST_TEST(n.peak_units == j["peak_units"].get<slot_t>());
    const test::tool_result text = run_tool(
        {"plan", "--steps", "300", "--slots", "60", "--schedule", "taped", "--tape-units", "7", "--rerun-units", "7"});
    BOOST_TEST(text.out.find("+ 7 while a reverse re-runs its step") != std::string::npos, text.out);
}

BOOST_AUTO_TEST_CASE(tape_bytes_are_rounded_up_to_whole_states)
{
    // 14 MiB of 64 KiB states: 224 units; a tape of 370 KiB is 5.8 states, planned as 6.
    const auto bytes = plan_json({"--steps", "1000", "--budget", "14MiB", "--state-bytes", "64KiB", "--tape-bytes",
                                  "370KiB", "--schedule", "taped"});
    BOOST_TEST(bytes["tape_units"].get<slot_t>() == 6);
    check_report(bytes, taped_revolve(1000, 224, 6), 224);
    BOOST_TEST(bytes["peak_units_bytes"].get<std::uint64_t>() == bytes["peak_units"].get<std::uint64_t>() * 65536u);
    const test::tool_result text = run_tool({"plan", "--steps", "1000", "--budget", "14MiB", "--state-bytes", "64KiB",
                                             "--tape-bytes", "370KiB", "--schedule", "taped"});
    BOOST_TEST(text.out.find("14.0 MiB for snapshots and tapes, in states of 64.0 KiB: 224 units (a tape 6)") !=
                   std::string::npos,
               text.out);
    BOOST_TEST(text.out.find("evaluations    " + std::to_string(taped_revolve(1000, 224, 6).evaluations())) !=
                   std::string::npos,
               text.out);
}

BOOST_AUTO_TEST_CASE(draw_marks_the_taped_advances)
{
    const test::scratch_dir dir;
    const auto file = dir / "taped.svg";
    const test::tool_result r = run_tool(
        {"draw", "--steps", "60", "--slots", "30", "--schedule", "taped", "--tape-units", "3", "-o", file.string()});
    BOOST_TEST_REQUIRE(r.status == 0, r.err);
    const auto facts = test::read_svg_facts(file);
    const taped_revolve plan(60, 30, 3);
    std::size_t advances = 0;
    for (const action& a : plan)
        advances += std::holds_alternative<advance>(a) ? 1 : 0;
    BOOST_TEST(facts["classes"]["advance"].get<std::size_t>() == advances);
    BOOST_TEST(facts["classes"]["taped"].get<std::size_t>() == plan.cost().taped_steps);
    BOOST_TEST(facts["classes"]["reverse"].get<std::size_t>() == 60u);
}

BOOST_AUTO_TEST_CASE(bad_tape_options_exit_2_naming_the_problem)
{
    struct bad_case {
        std::vector<std::string> args;
        std::string mentions;
    };
    const std::vector<bad_case> cases{
        {{"plan", "-T", "100", "-s", "10", "--schedule", "taped"}, "needs --tape-units"},
        {{"plan", "-T", "100", "-s", "10", "--schedule", "taped", "--tape-units", "2", "--tape-bytes", "1KiB"},
         "one of them"},
        {{"plan", "-T", "100", "-s", "10", "--schedule", "taped", "--tape-units", "0"}, "--tape-units"},
        {{"plan", "-T", "100", "-s", "10", "--schedule", "taped", "--tape-bytes", "1KiB"}, "--state-bytes"},
        {{"plan", "-T", "100", "--budget", "1MiB", "--state-bytes", "1KiB", "--schedule", "taped", "--tape-bytes", "0"},
         "--tape-bytes"},
        {{"plan", "-T", "100", "-s", "10", "--tape-units", "2"}, "--schedule taped and checkpoint-sequential only"},
        {{"plan", "-T", "100", "-s", "10", "--schedule", "uniform", "--tape-units", "2"}, "--tape-units"},
        {{"plan", "-T", "100", "-s", "10", "--schedule", "taped", "--tape-units", "2", "--every", "5"}, "--every"},
        {{"plan", "-T", "100", "-s", "10", "--schedule", "taped", "--tape-units", "2", "--online"}, "--online"},
        {{"plan", "-T", "100", "--schedule", "taped", "--tape-units", "2"}, "--slots"},
        {{"plan", "-T", "100000", "-s", "10", "--schedule", "taped", "--tape-units", "2"}, "steps = 100000"},
        {{"plan", "-T", "1000", "-s", "3", "--schedule", "checkpoint-sequential", "--tape-units", "6"},
         "at least 147 units"},
        {{"plan", "-T", "1000", "-s", "100", "--schedule", "checkpoint-sequential", "--tape-units", "6", "--every",
          "32"},
         "needs 216 units"},
        {{"plan", "-T", "1000", "--schedule", "checkpoint-sequential", "--tape-units", "6"}, "--every"},
        {{"plan", "-T", "100", "-s", "10", "--schedule", "taped", "--tape-units", "2", "--rerun-units", "3"},
         "rerun_units = 3"},
        {{"plan", "-T", "100", "-s", "10", "--schedule", "taped", "--tape-units", "2", "--rerun-units", "-1"},
         "--rerun-units"},
        {{"plan", "-T", "100", "-s", "10", "--schedule", "checkpoint-sequential", "--tape-units", "2", "--rerun-units",
          "2"},
         "--rerun-units applies to --schedule taped only"},
    };
    for (const auto& c : cases)
        test::check_usage_error(c.args, c.mentions);
}
