// remat_report's JSON reports: the layout every `--format json` shares, text that is not UTF-8, report
// files written with the safe writer, and a run's report (run_report_json) field by field.
#define BOOST_TEST_MODULE report_json
#include <boost/test/unit_test.hpp>

#include "scratch_dir.hpp"

#include "remat/driver/run.hpp"
#include "remat/report/json.hpp"
#include "remat/report/run_report_json.hpp"
#include "remat/schedule/revolve.hpp"
#include "remat/schedule/taped_revolve.hpp"
#include "remat/store/host_store.hpp"

#include <cstdint>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

using namespace remat;

BOOST_AUTO_TEST_CASE(reports_are_indented_and_end_with_a_newline)
{
    std::ostringstream out;
    report::write_json(out, nlohmann::ordered_json{{"steps", 10}, {"rows", {1, 2}}});
    BOOST_TEST(out.str() == "{\n  \"steps\": 10,\n  \"rows\": [\n    1,\n    2\n  ]\n}\n");
}

BOOST_AUTO_TEST_CASE(text_that_is_not_utf8_is_replaced_not_fatal)
{
    // A file name in Latin-1, as `remat inspect` may be given: nlohmann's default dump would throw.
    std::ostringstream out;
    report::write_json(out, nlohmann::json{{"file", std::string("caf\xE9.h5")}});
    BOOST_TEST(out.str() == "{\n  \"file\": \"caf\xEF\xBF\xBD.h5\"\n}\n");
    const nlohmann::json latin1{{"file", std::string("caf\xE9.h5")}};
    BOOST_CHECK_THROW((void)latin1.dump(), nlohmann::json::type_error);
}

BOOST_AUTO_TEST_CASE(report_files_are_written_whole)
{
    const test::scratch_dir dir;
    const auto file = dir / "report.json";
    report::write_json_file(file, nlohmann::ordered_json{{"loss", 0.5}});
    std::ifstream in(file);
    const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    BOOST_TEST(nlohmann::json::parse(text)["loss"].get<double>() == 0.5);
}

BOOST_AUTO_TEST_CASE(a_run_report_as_json_has_every_count_of_the_run)
{
    // A real run with a terminal callable: x_{k+1} = x_k / 2 over 20 steps with 3 slots.
    double x = 1.0;
    double xT = 0;
    host_store store(3);
    const run_report r = run(revolve(20, 3), store, x, forward_step([](step_t, double& s) { s *= 0.5; }),
                             adjoint_step([](step_t, double&) {}), final_state([&](const double& s) { xT = s; }));
    BOOST_TEST(xT == 0x1p-20);
    const nlohmann::json j = nlohmann::json::parse(nlohmann::ordered_json(report::run_report_json(r)).dump());
    BOOST_TEST(j["steps"].get<long long>() == 20);
    BOOST_TEST(j["forward_steps"].get<std::uint64_t>() == r.forward_steps);
    BOOST_TEST(j["forward_steps"].get<std::uint64_t>() == revolve(20, 3).cost().forward_steps);
    BOOST_TEST(j["reverse_steps"].get<std::uint64_t>() == 20u);
    BOOST_TEST(j["final_forward_steps"].get<std::uint64_t>() == 1u);
    BOOST_TEST(j["final_calls"].get<std::uint64_t>() == 1u);
    BOOST_TEST(j["stores"].get<std::uint64_t>() == r.stores);
    BOOST_TEST(j["restores"].get<std::uint64_t>() == r.restores);
    BOOST_TEST(j["peak_slots"].get<std::uint64_t>() == r.peak_slots);
    BOOST_TEST(j["peak_snapshot_bytes"].get<std::uint64_t>() == r.peak_snapshot_bytes);
    BOOST_TEST_REQUIRE(j["levels"].size() == 1u);
    BOOST_TEST(j["levels"][0]["stores"].get<std::uint64_t>() == r.levels[0].stores);
    BOOST_TEST(j["levels"][0]["name"].get<std::string>() == r.levels[0].name);
    BOOST_TEST(j["final_seconds"].get<double>() == r.final_seconds);
    BOOST_TEST(j["test_seconds"].get<double>() == r.test_seconds);
    BOOST_TEST(j["user_seconds"].get<double>() == r.user_seconds());
}

BOOST_AUTO_TEST_CASE(a_taped_run_reports_its_tapes_in_json_and_text)
{
    // x_{k+1} = x_k / 2 with a tape of x_k, under a plan that keeps tapes.
    const taped_revolve plan(20, 6, 2);
    BOOST_TEST_REQUIRE(plan.cost().taped_steps > 0u);
    double x = 1.0;
    host_store store(plan.cost().peak_slots);
    const run_report r =
        run(plan, store, x, forward_step([](step_t, double& s) { s *= 0.5; }), adjoint_step([](step_t, double&) {}),
            with_tapes(taped_step([](step_t, double& s, double& tape) {
                           tape = s;
                           s *= 0.5;
                       }),
                       tape_adjoint([](step_t, double&) {}), [] { return 0.0; }));
    const nlohmann::json j = nlohmann::json::parse(nlohmann::ordered_json(report::run_report_json(r)).dump());
    BOOST_TEST(j["taped_steps"].get<std::uint64_t>() == plan.cost().taped_steps);
    BOOST_TEST(j["tape_reverses"].get<std::uint64_t>() == plan.cost().taped_steps);
    BOOST_TEST(j["peak_tapes"].get<std::uint64_t>() == plan.cost().peak_tapes);
    const std::string text = to_string(r);
    const std::string line = std::to_string(plan.cost().taped_steps) + " taped steps, " +
                             std::to_string(plan.cost().taped_steps) + " reverses from a tape; peak " +
                             std::to_string(plan.cost().peak_tapes) + " tapes";
    BOOST_TEST(text.find(line) != std::string::npos, text);
}
