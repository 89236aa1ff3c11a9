// `remat plan --online` and `remat draw --online`, run in-process: the reported counts equal the library's
// closed-form cost and an independent replay of the printed actions; the offline comparison is the
// binomial optimum; misuse exits 2 with one line naming the option.
#define BOOST_TEST_MODULE cli_online
#include <boost/test/unit_test.hpp>

#include "plan_request.hpp"
#include "scratch_dir.hpp"
#include "simulator.hpp"
#include "tool_runner.hpp"

#include "remat/schedule/binomial.hpp"
#include "remat/schedule/online_revolve.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace remat;

namespace {

using result = test::tool_result;
using test::plan_json;
using test::run_tool;

nlohmann::json online_json(const std::string& steps, const std::string& slots)
{
    return plan_json({"--online", "--steps", steps, "--slots", slots});
}

} // namespace

BOOST_AUTO_TEST_CASE(json_carries_the_offline_comparison)
{
    for (const auto& [t, s] :
         std::vector<std::pair<step_t, slot_t>>{{1, 3}, {10, 3}, {100, 4}, {5000, 9}, {10'000'000, 64}}) {
        const auto j = online_json(std::to_string(t), std::to_string(s));
        const schedule_cost c = online_revolve(s).cost(t);
        const std::uint64_t offline = binomial::min_forward_steps(t, s);
        BOOST_TEST(j["schedule"].get<std::string>() == "online-revolve");
        BOOST_TEST(j["steps"].get<step_t>() == t);
        BOOST_TEST(j["forward_steps"].get<std::uint64_t>() == c.forward_steps);
        BOOST_TEST(j["stores"].get<std::uint64_t>() == c.stores);
        BOOST_TEST(j["restores"].get<std::uint64_t>() == c.restores);
        BOOST_TEST(j["peak_slots"].get<std::uint64_t>() == c.peak_slots);
        BOOST_TEST(j["repetition"].get<std::uint64_t>() == c.repetition);
        BOOST_TEST(j["offline_forward_steps"].get<std::uint64_t>() == offline);
        BOOST_TEST(j["ratio_to_offline"].get<double>() ==
                   (offline == 0 ? 1.0 : static_cast<double>(c.forward_steps) / static_cast<double>(offline)));
        BOOST_TEST(j["ratio_to_offline"].get<double>() >= 1.0);
    }
    // Within C(s+2,2) steps the online schedule is the offline optimum: ratio exactly 1.
    BOOST_TEST(online_json("21", "5")["ratio_to_offline"].get<double>() == 1.0);
    // Every state kept: answered in closed form, however large.
    const auto all = online_json("9223372036854775807", "9223372036854775807");
    BOOST_TEST(all["forward_steps"].get<std::uint64_t>() == 9223372036854775806u);
}

BOOST_AUTO_TEST_CASE(actions_replay_legally_with_the_reported_counts)
{
    for (const auto& [t, s] :
         std::vector<std::pair<step_t, std::string>>{{2, "1"}, {57, "4"}, {300, "6"}, {1000, "3"}}) {
        const result r =
            run_tool({"plan", "--online", "--steps", std::to_string(t), "--slots", s, "--format", "actions"});
        BOOST_TEST_REQUIRE(r.status == 0, r.err);
        const auto j = online_json(std::to_string(t), s);
        test::simulator sim(t, {static_cast<slot_t>(std::stoll(s))});
        test::replay_counts n;
        const auto e = test::replay_printed(sim, r.out, n);
        BOOST_TEST_REQUIRE(!e.has_value(), e.value_or(""));
        BOOST_TEST(n.forward_steps == j["forward_steps"].get<std::uint64_t>());
        BOOST_TEST(n.stores == j["stores"].get<std::uint64_t>());
        BOOST_TEST(n.restores == j["restores"].get<std::uint64_t>());
        BOOST_TEST(n.peak_slots == j["peak_slots"].get<std::uint64_t>());
    }
}

BOOST_AUTO_TEST_CASE(text_names_the_offline_optimum)
{
    const result r = run_tool({"plan", "--online", "--steps", "100", "--slots", "4"});
    BOOST_TEST_REQUIRE(r.status == 0, r.err);
    BOOST_TEST(r.out.find("online revolve") != std::string::npos, r.out);
    BOOST_TEST(r.out.find("offline        374 forward steps") != std::string::npos, r.out);
    BOOST_TEST(r.out.find("forward steps  " + std::to_string(online_revolve(4).cost(100).forward_steps)) !=
                   std::string::npos,
               r.out);
}

BOOST_AUTO_TEST_CASE(misuse_exits_2_with_one_line)
{
    struct bad_case {
        std::vector<std::string> args;
        std::string mentions;
    };
    const std::vector<bad_case> cases{
        {{"plan", "--online", "--steps", "100"}, "--slots"},
        {{"plan", "--online", "--steps", "100", "--slots", "4", "--schedule", "uniform"}, "--online"},
        {{"plan", "--online", "--steps", "100", "--slots", "4", "--every", "3"}, "--every"},
        {{"plan", "--online", "--steps", "0", "--slots", "4"}, "--steps"},
        // Beyond the replay limit: refused up front with the estimate, not after minutes.
        {{"plan", "--online", "--steps", "1e15", "--slots", "50"},
         std::to_string(remat::online_revolve::cost_work_limit)},
        {{"plan", "--online", "--steps", "9223372036854775807", "--slots", "2"}, "replay"},
        // Past C(s+2,2) steps (here s = 2^20) the snapshots held are listed and priced: too many.
        {{"plan", "--online", "--steps", "549757386755", "--slots", "1048576"}, "snapshots held"},
    };
    for (const auto& c : cases) {
        test::check_usage_error(c.args, c.mentions);
    }
}

BOOST_AUTO_TEST_CASE(draw_online_shows_every_action)
{
    const test::scratch_dir dir;
    const auto file = dir / "online.svg";
    const result r = run_tool({"draw", "--online", "--steps", "60", "--slots", "5", "-o", file.string()});
    BOOST_TEST_REQUIRE(r.status == 0, r.err);
    std::ifstream in(file);
    const std::string svg((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    BOOST_TEST(svg.find("online-revolve") != std::string::npos);
    std::size_t advances = 0, pos = 0;
    while ((pos = svg.find("stroke=\"black\" stroke-width=\"1.5\"", pos)) != std::string::npos) {
        ++advances;
        ++pos;
    }
    std::size_t expected = 0;
    for (const action& a : online_revolve(5).replay(60))
        expected += std::holds_alternative<advance>(a) ? 1 : 0;
    BOOST_TEST(advances == expected);
}
