// remat_report's JSON reports: the layout every `--format json` shares, text that is not UTF-8, and
// report files written with the safe writer.
#define BOOST_TEST_MODULE report_json
#include <boost/test/unit_test.hpp>

#include "scratch_dir.hpp"

#include "remat/report/json.hpp"

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
