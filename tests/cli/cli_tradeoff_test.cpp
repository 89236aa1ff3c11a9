// `remat tradeoff`, run in-process: every row against `remat plan` for the same schedule and slots, the
// overhead against its formula, the grid's promised counts, both inverse questions against brute force
// over every slot count, the SVG read back by an XML parser, and bad input.
#define BOOST_TEST_MODULE cli_tradeoff
#include <boost/test/unit_test.hpp>

#include "scratch_dir.hpp"
#include "svg_facts.hpp"
#include "tool_runner.hpp"
#include "tradeoff.hpp"

#include "remat/schedule/multilevel.hpp"
#include "remat/schedule/online_revolve.hpp"
#include "remat/schedule/revolve.hpp"
#include "remat/schedule/uniform.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

using namespace remat;

namespace {

using test::run_tool;

nlohmann::json tradeoff_json(std::vector<std::string> args)
{
    args.insert(args.begin(), "tradeoff");
    args.emplace_back("--format");
    args.emplace_back("json");
    const test::tool_result r = run_tool(args);
    BOOST_TEST_REQUIRE(r.status == 0, r.err);
    return nlohmann::json::parse(r.out);
}

// The overhead from its definition: predicted time (forward steps + T adjoint steps of cost R) over
// store-all's (T-1 forward steps).
double overhead(std::uint64_t forward, step_t t, double r)
{
    const double base = static_cast<double>(t - 1) + r * static_cast<double>(t);
    return base > 0 ? (static_cast<double>(forward) + r * static_cast<double>(t)) / base : 1.0;
}

// Independent of uniform::fit: the fewest forward steps over every spacing whose peak fits `slots`.
std::optional<std::uint64_t> best_uniform(step_t t, slot_t slots)
{
    std::optional<std::uint64_t> best;
    for (step_t k = 1; k <= t; ++k) {
        const schedule_cost c = uniform(t, k).cost();
        if (c.peak_slots <= slots && (!best || c.forward_steps < *best))
            best = c.forward_steps;
    }
    return best;
}

// Forward steps of each single-level schedule with s slots, straight from the library (nullopt: does not
// fit).
std::optional<std::uint64_t> forward_steps(const std::string& schedule, step_t t, slot_t s)
{
    if (schedule == "revolve")
        return revolve(t, s).cost().forward_steps;
    if (schedule == "online")
        return online_revolve(s).cost(t).forward_steps;
    if (schedule == "uniform")
        return best_uniform(t, s);
    BOOST_FAIL("no brute force for " << schedule);
    return std::nullopt;
}

const std::vector<std::string> single_level = {"revolve", "online", "uniform"};

} // namespace

BOOST_AUTO_TEST_CASE(every_row_is_what_plan_reports)
{
    const step_t t = 1000;
    const auto j = tradeoff_json({"-T", "1000", "--reverse-cost", "2"});
    BOOST_TEST(j["steps"].get<step_t>() == t);
    BOOST_TEST(j["reverse_cost"].get<double>() == 2.0);
    BOOST_TEST(!j.contains("least_slots"));
    std::map<std::string, std::vector<nlohmann::json>> by_schedule;
    for (const auto& row : j["rows"])
        by_schedule[row["schedule"].get<std::string>()].push_back(row);
    BOOST_TEST(by_schedule.size() == 5u);
    for (const auto& [name, rows] : by_schedule)
        for (const auto& row : rows) {
            const std::string s = std::to_string(row["slots"].get<slot_t>());
            std::vector<std::string> args{"-T", "1000", "-s", s};
            if (name == "online")
                args.emplace_back("--online");
            else if (name == "uniform" || name == "store-all")
                args.insert(args.end(), {"--schedule", name});
            else if (name == "sqrt-rule")
                args = {"-T", "1000", "--schedule", "uniform", "--every", "32"};
            const auto plan = test::plan_json(args);
            BOOST_TEST(row["forward_steps"].get<std::uint64_t>() == plan["forward_steps"].get<std::uint64_t>(),
                       name << " with " << s << " slots");
            BOOST_TEST(row["peak_slots"].get<std::uint64_t>() == plan["peak_slots"].get<std::uint64_t>());
            BOOST_TEST(row["recompute_ratio"].get<double>() == plan["recompute_ratio"].get<double>(),
                       boost::test_tools::tolerance(1e-12));
            BOOST_TEST(row["overhead"].get<double>() == overhead(row["forward_steps"], t, 2.0),
                       boost::test_tools::tolerance(1e-12));
            if (name == "uniform" || name == "sqrt-rule")
                BOOST_TEST(row["every"].get<step_t>() == plan["every"].get<step_t>());
        }
    // Revolve: non-increasing in the slots; over 1 .. T-1 on a log grid with the promised counts.
    const auto& revolve_rows = by_schedule["revolve"];
    std::set<slot_t> slots;
    for (std::size_t i = 0; i < revolve_rows.size(); ++i) {
        slots.insert(revolve_rows[i]["slots"].get<slot_t>());
        if (i > 0)
            BOOST_TEST(revolve_rows[i]["forward_steps"].get<std::uint64_t>() <=
                       revolve_rows[i - 1]["forward_steps"].get<std::uint64_t>());
    }
    BOOST_TEST(slots.count(1) == 1u);
    BOOST_TEST(slots.count(999) == 1u);
    BOOST_TEST(slots.count(32) == 1u); // round(sqrt(1000))
    BOOST_TEST(slots.size() >= 12u);   // about four per decade over three decades
    // The one-extra-sweep count: the least s whose forward steps are at most 2(T-1), by brute force.
    slot_t sweep = 1;
    while (revolve(t, sweep).cost().forward_steps > 2 * static_cast<std::uint64_t>(t - 1))
        ++sweep;
    BOOST_TEST(j["one_extra_sweep_slots"].get<slot_t>() == sweep);
    BOOST_TEST(slots.count(sweep) == 1u);
    // The textbook claim: the sqrt(T) rule costs about 4/3 of store-all when an adjoint step costs two
    // forward steps.
    const auto& root = by_schedule["sqrt-rule"].at(0);
    BOOST_TEST(std::abs(root["overhead"].get<double>() - 4.0 / 3.0) < 0.04, root.dump());
    BOOST_TEST(slots.count(root["slots"].get<slot_t>()) == 1u); // revolve is shown at the same memory
    BOOST_TEST(by_schedule["store-all"].at(0)["overhead"].get<double>() == 1.0);
}

BOOST_AUTO_TEST_CASE(least_slots_is_exact_against_brute_force)
{
    for (const step_t t : {1, 2, 3, 10, 57, 300})
        for (const double r : {0.0, 2.0})
            for (const double limit : {0.5, 1.0, 1.05, 1.2, 4.0 / 3.0, 1.5, 2.0, 3.0, 10.0}) {
                const std::string xs = std::to_string(limit);
                const double x = std::stod(xs); // what the tool reads

                const auto j =
                    tradeoff_json({"-T", std::to_string(t), "--reverse-cost", std::to_string(r), "--max-overhead", xs});
                BOOST_TEST_REQUIRE(j.contains("least_slots"));
                const auto& least = j["least_slots"];
                const slot_t all = std::max<step_t>(t - 1, 1);
                for (const std::string& name : single_level) {
                    std::optional<slot_t> expected;
                    for (slot_t s = 1; s <= all && !expected; ++s)
                        if (const auto f = forward_steps(name, t, s); f && overhead(*f, t, r) <= x)
                            expected = s;
                    const std::string where = name + " T=" + std::to_string(t) + " R=" + std::to_string(r) + " X=" + xs;
                    BOOST_TEST_REQUIRE(least.contains(name), where);
                    if (!expected) {
                        BOOST_TEST(least[name].is_null(), where);
                    } else {
                        BOOST_TEST_REQUIRE(!least[name].is_null(), where);
                        BOOST_TEST(least[name]["slots"].get<slot_t>() == *expected, where);
                        BOOST_TEST(least[name]["overhead"].get<double>() <= x, where);
                    }
                }
                const bool all_fits = 1.0 <= x;
                BOOST_TEST(least["store-all"].is_null() == !all_fits);
            }
}

// At T = 1e18 a cost near 3e18 is a double rounded to a multiple of 512: compared in doubles, --max-overhead 1.5
// answered revolve with 499999999999999870 slots, 130 short of the fewest (review12). The answer is checked
// exactly and independently of the tool's arithmetic: the forward steps F of the library's plan with s slots
// reach X = p/q where (F + R T) q <= (T - 1 + R T) p in 128-bit integers, and with s - 1 slots do not.
BOOST_AUTO_TEST_CASE(least_slots_is_exact_at_t_near_1e18)
{
    __extension__ using u128 = unsigned __int128;
    const step_t t = 1'000'000'000'000'000'000;
    struct limit {
        std::string text;
        std::uint64_t p, q;
    };
    for (const std::uint64_t r : {0u, 2u})
        for (const limit& x : {limit{"1.5", 3, 2}, limit{"1.2", 6, 5}}) {
            const auto j = tradeoff_json({"-T", "1e18", "--reverse-cost", std::to_string(r), "--max-overhead", x.text});
            const u128 adjoint = u128{r} * static_cast<u128>(t);
            const auto reaches = [&](std::optional<std::uint64_t> forward) {
                return forward && (*forward + adjoint) * x.q <= (static_cast<u128>(t - 1) + adjoint) * x.p;
            };
            const auto forward = [&](const std::string& name, slot_t s) -> std::optional<std::uint64_t> {
                if (name == "revolve")
                    return revolve(t, s).cost().forward_steps;
                if (s < uniform::min_slots(t))
                    return std::nullopt;
                return uniform::fit(t, s).cost().forward_steps;
            };
            for (const std::string name : {"revolve", "uniform"}) {
                const std::string where = name + " R=" + std::to_string(r) + " X=" + x.text;
                BOOST_TEST_REQUIRE(!j["least_slots"][name].is_null(), where);
                const auto s = j["least_slots"][name]["slots"].get<slot_t>();
                BOOST_TEST(j["least_slots"][name]["forward_steps"].get<std::uint64_t>() == *forward(name, s), where);
                BOOST_TEST(reaches(forward(name, s)), where << ": " << s << " slots");
                BOOST_TEST(!reaches(forward(name, s - 1)), where << ": " << s - 1 << " slots");
            }
        }
}

// The limit is the fraction its text says and the costs sums of exact terms: an overhead of exactly 6/5 is within
// "1.2" however it is written, not within the double nearest 1.2 (a hex float, read as that double), which is
// below 6/5; a cost of 2^-1074 (the least double) is compared as itself; over a base of 0 the overhead is 1.
BOOST_AUTO_TEST_CASE(an_overhead_limit_is_compared_exactly)
{
    const std::vector<cli::cost_term> six{{1.0, 6}}, five{{1.0, 5}}, none{{2.0, 0}};
    for (const std::string text : {"1.2", "+1.2", " 1.2", "12e-1", "0.12E+1", "1.20000000000000000000000000000"})
        BOOST_TEST(cli::overhead_limit(text, std::stod(text)).admits(six, five), text);
    BOOST_TEST(!cli::overhead_limit("0x1.3333333333333p+0", std::stod("0x1.3333333333333p+0")).admits(six, five));
    BOOST_TEST(!cli::overhead_limit(1.2).admits(six, five)); // the double, exactly
    BOOST_TEST(!cli::overhead_limit("1.19999999999999999999", 1.2).admits(six, five));
    const double least = std::numeric_limits<double>::denorm_min();
    const std::vector<cli::cost_term> one_and_least{{1.0, 1}, {least, 1}}, one{{1.0, 1}};
    BOOST_TEST(!cli::overhead_limit(1.0).admits(one_and_least, one)); // 1 + 2^-1074 is a double's 1 + 0
    BOOST_TEST(cli::overhead_limit(1.0).admits(one, one_and_least));
    BOOST_TEST(cli::overhead_limit("1", 1.0).admits(six, none));
    BOOST_TEST(!cli::overhead_limit("0.999", 0.999).admits(six, none));
}

// docs/tradeoff.md: least_slots (and within_budget's schedules) are keyed by schedule, null where there is
// no answer; a schedule the library refused to answer (online's work limit at T = 10^10) is null too, its
// reason listed beside, not a missing key.
BOOST_AUTO_TEST_CASE(a_schedule_that_could_not_be_answered_is_null_not_missing)
{
    const nlohmann::json j =
        tradeoff_json({"-T", "1e10", "--max-overhead", "100", "--state-bytes", "1", "--budget", "7"});
    for (const char* name : {"revolve", "online", "uniform", "sqrt-rule", "store-all"}) {
        BOOST_TEST(j["least_slots"].contains(name), name);
        BOOST_TEST(j["within_budget"]["schedules"].contains(name), name);
    }
    BOOST_TEST(j["least_slots"]["online"].is_null());
    BOOST_TEST(j["within_budget"]["schedules"]["online"].is_null());
    BOOST_TEST_REQUIRE(j["least_slots_not_answered"].size() == 1u);
    BOOST_TEST(j["least_slots_not_answered"][0]["schedule"] == "online");
    BOOST_TEST(j["within_budget"]["not_answered"][0]["schedule"] == "online");
    BOOST_TEST(!j["least_slots"]["revolve"].is_null()); // answered schedules keep their rows
}

BOOST_AUTO_TEST_CASE(the_budget_answer_is_the_best_over_the_slots_it_holds)
{
    for (const step_t t : {2, 10, 200})
        for (const std::uint64_t budget : {100u, 128u, 700u, 1280u, 4000u, 100000u}) {
            const std::uint64_t state = 128;
            const auto j = tradeoff_json({"-T", std::to_string(t), "--reverse-cost", "2", "--state-bytes", "128",
                                          "--budget", std::to_string(budget < state ? state : budget)});
            const std::uint64_t b = budget < state ? state : budget;
            const auto holds = static_cast<slot_t>(b / state);
            const auto& w = j["within_budget"];
            BOOST_TEST(w["slots"].get<slot_t>() == holds);
            const slot_t all = std::max<step_t>(t - 1, 1);
            for (const std::string& name : single_level) {
                // Brute force: the least overhead over every slot count the budget holds.
                std::optional<double> best;
                for (slot_t s = 1; s <= std::min(holds, all); ++s)
                    if (const auto f = forward_steps(name, t, s))
                        best = std::min(best.value_or(std::numeric_limits<double>::infinity()), overhead(*f, t, 2));
                const std::string where = name + " T=" + std::to_string(t) + " budget " + std::to_string(b);
                if (!best) {
                    BOOST_TEST(w["schedules"][name].is_null(), where);
                } else {
                    BOOST_TEST_REQUIRE(!w["schedules"][name].is_null(), where);
                    BOOST_TEST(w["schedules"][name]["overhead"].get<double>() == *best,
                               boost::test_tools::tolerance(1e-12));
                    BOOST_TEST(w["schedules"][name]["snapshot_bytes"].get<std::uint64_t>() <= b, where);
                }
            }
        }
}

BOOST_AUTO_TEST_CASE(rows_have_snapshot_bytes_with_state_bytes)
{
    const auto j = tradeoff_json({"-T", "100", "--state-bytes", "1MiB"});
    BOOST_TEST(j["state_bytes"].get<std::uint64_t>() == 1048576u);
    for (const auto& row : j["rows"])
        BOOST_TEST(row["snapshot_bytes"].get<std::uint64_t>() == row["peak_slots"].get<std::uint64_t>() * 1048576u);
    const auto plain = tradeoff_json({"-T", "100"}); // kept: a range-for over a temporary's member dangles
    for (const auto& row : plain["rows"])
        BOOST_TEST(!row.contains("snapshot_bytes"));
}

// A row whose peak slots times --state-bytes pass 64 bits keeps its counts and says that its bytes do not fit:
// the report printed 2^64 - 1 (16 EiB) for such a row once, then refused the whole report (exit 2), which took
// every report of T near 2^63 (its rows have up to T - 1 slots) where remat.tradeoff in Python gave them all.
BOOST_AUTO_TEST_CASE(snapshot_bytes_beyond_64_bits_are_reported_as_such_not_saturated)
{
    const std::uint64_t state = 4'398'046'511'104'000'000; // 4e6 TiB: 1 to 4 slots fit 64 bits, 5 do not
    const nlohmann::json j = tradeoff_json({"-T", "100", "--state-bytes", "4000000TiB", "--max-overhead", "1"});
    int fit = 0, beyond = 0;
    const auto check = [&](const nlohmann::json& row) {
        const auto peak = row["peak_slots"].get<std::uint64_t>();
        const std::string where = row.dump();
        if (peak <= std::numeric_limits<std::uint64_t>::max() / state) {
            BOOST_TEST(row["snapshot_bytes"].get<std::uint64_t>() == peak * state, where);
            BOOST_TEST(!row.contains("snapshot_bytes_beyond_64_bits"), where);
            ++fit;
        } else {
            BOOST_TEST(!row.contains("snapshot_bytes"), where);
            BOOST_TEST(row["snapshot_bytes_beyond_64_bits"].get<bool>(), where);
            ++beyond;
        }
    };
    for (const auto& row : j["rows"])
        check(row);
    BOOST_TEST(fit > 0);
    BOOST_TEST(beyond > 0);
    BOOST_TEST_REQUIRE(!j["least_slots"]["store-all"].is_null()); // 99 slots: an answer beyond 64 bits too
    check(j["least_slots"]["store-all"]);

    // The largest T with 8-byte states: the report, its top rows marked in the text.
    const test::tool_result r = run_tool({"tradeoff", "-T", "9223372036854775807", "--state-bytes", "8"});
    BOOST_TEST_REQUIRE(r.status == 0, r.err);
    BOOST_TEST(r.out.find("store-all   9223372036854775806") != std::string::npos, r.out);
    BOOST_TEST(r.out.find("beyond 64 bits\n") != std::string::npos, r.out);
    BOOST_TEST(r.out.find("32.0 GiB\n") != std::string::npos, r.out); // 2^32 - 2 slots of 8 bytes, and fewer
}

BOOST_AUTO_TEST_CASE(multilevel_rows_put_the_slots_on_the_first_level)
{
    const step_t t = 60;
    const auto j = tradeoff_json(
        {"-T", "60", "--reverse-cost", "1", "--level", "host:4", "--level", "disk:inf:3:2", "--max-overhead", "1.4"});
    std::vector<nlohmann::json> rows;
    for (const auto& row : j["rows"])
        if (row["schedule"] == "multilevel")
            rows.push_back(row);
    BOOST_TEST_REQUIRE(rows.size() >= 6u);
    auto model_with = [](slot_t s) {
        cost_model m{{{"host", s, 0, 0}, {"disk", level_spec::unlimited, 3, 2}}};
        m.reverse_cost = 1;
        return m;
    };
    const double base = static_cast<double>(t - 1) + static_cast<double>(t);
    for (const auto& row : rows) {
        const auto s = row["slots"].get<slot_t>();
        const auto plan = test::plan_json(
            {"-T", "60", "--reverse-cost", "1", "--level", "host:" + std::to_string(s), "--level", "disk:inf:3:2"});
        BOOST_TEST(row["forward_steps"].get<std::uint64_t>() == plan["forward_steps"].get<std::uint64_t>());
        BOOST_TEST(row["overhead"].get<double>() == plan["predicted_cost"].get<double>() / base,
                   boost::test_tools::tolerance(1e-12));
    }
    // The fewest host slots under 1.4, by brute force over every count with the planner itself.
    std::optional<slot_t> expected;
    for (slot_t s = 1; s <= t - 1 && !expected; ++s)
        if (predicted_cost(multilevel(t, model_with(s)).cost(), model_with(s)) / base <= 1.4)
            expected = s;
    BOOST_TEST_REQUIRE(expected.has_value());
    BOOST_TEST(j["least_slots"]["multilevel"]["slots"].get<slot_t>() == *expected);
}

BOOST_AUTO_TEST_CASE(the_svg_has_a_curve_per_schedule_the_sqrt_point_and_the_limit)
{
    const test::scratch_dir dir;
    const auto file = dir / "tradeoff.svg";
    const test::tool_result r = run_tool({"tradeoff", "-T", "1000", "--reverse-cost", "2", "--max-overhead", "1.5",
                                          "--format", "svg", "-o", file.string()});
    BOOST_TEST_REQUIRE(r.status == 0, r.err);
    BOOST_TEST(r.out.find(file.string()) != std::string::npos);
    const auto facts = test::read_svg_facts(file); // parsed by Python's XML parser
    std::set<std::string> names;
    for (const auto& s : facts["series"]) {
        names.insert(s["name"].get<std::string>());
        BOOST_TEST(s["curves"].size() + s["markers"].size() >= 1u, s.dump());
        BOOST_TEST(!s["label"].is_null(), s["name"]); // labelled at its curve
    }
    BOOST_TEST((names == std::set<std::string>{"revolve", "online", "uniform", "sqrt-rule", "store-all"}));
    BOOST_TEST_REQUIRE(facts["callouts"].size() == 1u);
    BOOST_TEST(facts["callouts"][0]["label"]["text"].get<std::string>().find("√T rule") != std::string::npos);
    std::set<double> references;
    for (const auto& ref : facts["references"])
        references.insert(ref["value"].get<double>());
    BOOST_TEST(references.count(1.5) == 1u);  // the --max-overhead line
    BOOST_TEST(references.count(32.0) == 1u); // sqrt(T)
    // -o writes as `draw` does: through a symlink (which stays), and into a device without replacing it.
    const auto link = dir / "link.svg";
    std::filesystem::create_symlink(file, link);
    BOOST_TEST_REQUIRE(run_tool({"tradeoff", "-T", "50", "--format", "json", "-o", link.string()}).status == 0);
    BOOST_TEST(std::filesystem::is_symlink(link));
    std::ifstream written(file);
    BOOST_TEST(nlohmann::json::parse(written)["steps"].get<step_t>() == 50);
    BOOST_TEST_REQUIRE(run_tool({"tradeoff", "-T", "50", "-o", "/dev/null"}).status == 0);
    BOOST_TEST(std::filesystem::is_character_file("/dev/null"));
    // Without -o the SVG goes to stdout.
    const test::tool_result out = run_tool({"tradeoff", "-T", "100", "--format", "svg"});
    BOOST_TEST(out.status == 0);
    BOOST_TEST(out.out.find("<svg") != std::string::npos);
}

// The pictures the docs show: every text inside the canvas and clear of every other (title, ticks, axis
// labels, curve labels, the √T callout, reference labels, the off-scale note).
namespace {
void check_legible(const nlohmann::json& facts, const std::string& which)
{
    for (const std::string& fault : test::text_layout_faults(facts))
        BOOST_ERROR(which << ": " << fault);
    BOOST_TEST(facts["texts"].size() >= 10u, which);
}
} // namespace

BOOST_AUTO_TEST_CASE(the_svg_shows_one_to_three_and_marks_every_point_above)
{
    const test::scratch_dir dir;
    // The commands docs/tradeoff.md gives for its two pictures.
    for (const std::string steps : {"1000", "1e6"}) {
        const std::vector<std::string> args{"-T", steps, "--reverse-cost", "2", "--max-overhead", "1.5"};
        const auto file = dir / ("tradeoff_" + steps + ".svg");
        std::vector<std::string> svg_args{"tradeoff"};
        svg_args.insert(svg_args.end(), args.begin(), args.end());
        svg_args.insert(svg_args.end(), {"--format", "svg", "-o", file.string()});
        const test::tool_result r = run_tool(svg_args);
        BOOST_TEST_REQUIRE(r.status == 0, r.err);
        const auto facts = test::read_svg_facts(file);
        check_legible(facts, "T = " + steps);
        // The overhead axis runs from 1 to 3: the range anyone chooses, not the 167x of one slot.
        const auto& y_ticks = facts["ticks"]["y"];
        BOOST_TEST_REQUIRE(y_ticks.size() >= 4u);
        BOOST_TEST(y_ticks.front() == "1");
        BOOST_TEST(y_ticks.back() == "3");
        // Each row above 3 is marked on its own series, with its value; none is dropped.
        const nlohmann::json j = tradeoff_json(args);
        std::size_t above = 0;
        for (const auto& series : facts["series"]) {
            std::multiset<double> expected, marked;
            for (const auto& row : j["rows"])
                if (row["schedule"] == series["name"] && row["overhead"].get<double>() > 3)
                    expected.insert(row["overhead"].get<double>());
            for (const auto& m : series["off_scale"]) {
                marked.insert(m["value"].get<double>());
                BOOST_TEST(m["y"].get<double>() <= 67.5, m.dump()); // at the plot's top edge (y = 66)
            }
            BOOST_TEST(marked.size() == expected.size(), series["name"]);
            for (const double v : expected) // values round-trip through the SVG's text to about 1e-12
                BOOST_TEST(
                    std::any_of(marked.begin(), marked.end(), [&](double m) { return std::abs(m - v) <= 1e-9 * v; }),
                    series["name"] << " " << v);
            above += expected.size();
        }
        BOOST_TEST(above >= 4u); // one slot, two, three... are far above 3 at both sizes
        bool noted = false;
        for (const auto& text : facts["texts"])
            if (std::find(text["classes"].begin(), text["classes"].end(), "off-scale-note") != text["classes"].end())
                noted =
                    text["text"].get<std::string>().find(std::to_string(above) + " points above") != std::string::npos;
        BOOST_TEST(noted, "the note counts the " << above << " points above the axis");
    }
}

BOOST_AUTO_TEST_CASE(the_pictures_in_the_docs_are_legible)
{
    for (const char* name : {"tradeoff_T1000.svg", "tradeoff_T1e6.svg"})
        check_legible(test::read_svg_facts(std::filesystem::path(REMAT_DOCS_DIR) / name), name);
}

BOOST_AUTO_TEST_CASE(text_names_the_answers)
{
    const test::tool_result r = run_tool({"tradeoff", "-T", "1000", "--reverse-cost", "2", "--max-overhead", "1.5",
                                          "--state-bytes", "64MiB", "--budget", "1GiB"});
    BOOST_TEST_REQUIRE(r.status == 0, r.err);
    for (const char* words : {"sqrt(T) rule   a snapshot every 32 steps", "fewest slots for an overhead of at most 1.5",
                              "within a budget of 1.00 GiB (16 snapshots of 64.0 MiB)", "does not fit"})
        BOOST_TEST(r.out.find(words) != std::string::npos, words << "\n" << r.out);
}

// Past C(s+2,2) steps each online count replays the forward sweep (about T/r decisions): at T = 10^8 the report
// took 9 to 15 s before, each row within online revolve's own limit, and T stopped at 10^12. Now the rows share
// one limit, cheapest first: the priced rows' work stays within it, each row left out would not have fit in what
// was left and says so, and the wave's rows (closed form) are all priced. Any 64-bit T is taken.
BOOST_AUTO_TEST_CASE(online_rows_share_one_work_budget_cheapest_first)
{
    for (const step_t t : {step_t{100'000'000}, step_t{100'000'000'000'000}, std::numeric_limits<step_t>::max()}) {
        const nlohmann::json j = tradeoff_json({"-T", std::to_string(t)});
        std::map<slot_t, std::uint64_t> priced, over_budget;
        for (const auto& r : j["rows"])
            if (r["schedule"] == "online") {
                const auto s = r["slots"].get<slot_t>();
                priced[s] = online_revolve(s).cost_work(t);
            }
        for (const auto& o : j["omitted_rows"])
            if (o["schedule"] == "online" &&
                o["reason"].get<std::string>().find("this report spends on online counts") != std::string::npos) {
                const auto s = o["slots"].get<slot_t>();
                over_budget[s] = online_revolve(s).cost_work(t);
            }
        const std::string where = "T=" + std::to_string(t);
        BOOST_TEST_REQUIRE(!priced.empty(), where);
        BOOST_TEST_REQUIRE(!over_budget.empty(), where);
        std::uint64_t spent = 0, dearest = 0, cheapest_left_out = std::numeric_limits<std::uint64_t>::max();
        bool wave = false;
        for (const auto& [s, work] : priced) {
            spent += work;
            dearest = std::max(dearest, work);
            wave = wave || (work == 0 && s < t - 1);
        }
        for (const auto& [s, work] : over_budget)
            cheapest_left_out = std::min(cheapest_left_out, work);
        BOOST_TEST(spent <= cli::tradeoff::online_work_budget, where);
        BOOST_TEST(cheapest_left_out > cli::tradeoff::online_work_budget - spent, where);
        BOOST_TEST(dearest <= cheapest_left_out, where);
        BOOST_TEST(wave, where);
    }
}

// least_slots priced the online count it answered with twice, charging the report's online work budget twice:
// at T = 3e6 and an overhead of 2.5, what the rows left covered the answer's count once, not twice, and the
// answer was listed as not answered. Each count it tries is now charged once: what it spends is the sum of
// their works (online_revolve::cost_work, from revolve's answer up to its own), and the answer is the fewest
// slots whose online count reaches the overhead (the counts below it, from the library, do not).
BOOST_AUTO_TEST_CASE(least_slots_charges_each_online_count_it_tries_once)
{
    const step_t t = 3'000'000;
    const double limit = 2.5;
    cli::tradeoff_setup setup;
    setup.steps = t;
    const cli::tradeoff report(setup);
    std::vector<cli::omitted_row> omitted;
    (void)report.rows(omitted);
    const std::uint64_t left = report.online_work_left();
    const std::optional<cli::tradeoff_row> offline =
        report.least_slots(cli::tradeoff_schedule::revolve, cli::overhead_limit(limit));
    BOOST_TEST_REQUIRE(offline.has_value());
    BOOST_TEST(report.online_work_left() == left); // revolve's search spends nothing
    const std::optional<cli::tradeoff_row> online =
        report.least_slots(cli::tradeoff_schedule::online, cli::overhead_limit(limit));
    BOOST_TEST_REQUIRE(online.has_value());
    std::uint64_t tried = 0;
    for (slot_t s = offline->slots; s <= online->slots; ++s)
        tried += online_revolve(s).cost_work(t);
    BOOST_TEST(left - report.online_work_left() == tried);
    BOOST_TEST(2 * online_revolve(online->slots).cost_work(t) > left); // charged twice, it did not fit
    BOOST_TEST(online->overhead <= limit);
    BOOST_TEST(online->cost.forward_steps == online_revolve(online->slots).cost(t).forward_steps);
    for (slot_t s = offline->slots; s < online->slots; ++s)
        BOOST_TEST(overhead(online_revolve(s).cost(t).forward_steps, t, 0) > limit, s);
}

BOOST_AUTO_TEST_CASE(bad_input_is_named_on_one_line)
{
    struct bad_case {
        std::vector<std::string> args;
        std::string mentions;
    };
    const std::vector<bad_case> cases{
        {{"tradeoff"}, "--steps"},
        {{"tradeoff", "-T", "0"}, "--steps"},
        {{"tradeoff", "-T", "ten"}, "ten"},
        {{"tradeoff", "-T", "1e19"}, "1e19"}, // beyond 2^63-1
        {{"tradeoff", "-T", "100", "--reverse-cost", "-1"}, "-1"},
        {{"tradeoff", "-T", "100", "--max-overhead", "0"}, "--max-overhead"},
        {{"tradeoff", "-T", "100", "--max-overhead", "fast"}, "fast"},
        {{"tradeoff", "-T", "100", "--max-overhead", "nan"}, "nan"},
        {{"tradeoff", "-T", "100", "--budget", "1GiB"}, "--state-bytes"},
        {{"tradeoff", "-T", "100", "--budget", "10", "--state-bytes", "128"}, "--budget 10"},
        {{"tradeoff", "-T", "100", "--state-bytes", "0"}, "--state-bytes"},
        {{"tradeoff", "-T", "100", "--format", "pdf"}, "pdf"},
        {{"tradeoff", "-T", "100", "--level", "host"}, "host"},
        {{"tradeoff", "-T", "100", "--level", "host:4:-1:0"}, "host:4:-1:0"},
        {{"tradeoff", "-T", "100", "-o", ""}, "\"\""},
        // 100 adjoint steps at 1e308 pass a double: every overhead was inf/inf, printed as -nan (JSON null)
        {{"tradeoff", "-T", "100", "--reverse-cost", "1e308"}, "--reverse-cost 1e+308"},
        {{"tradeoff", "-T", "100", "--reverse-cost", "1e308", "--format", "json"}, "--reverse-cost 1e+308"},
    };
    for (const auto& c : cases)
        test::check_usage_error(c.args, c.mentions);
}
