// remat_report's SVG writer: escaping, numbers, and documents that a real XML parser reads back with
// the text and attributes that were written.
#define BOOST_TEST_MODULE report_svg
#include <boost/test/unit_test.hpp>

#include "scratch_dir.hpp"
#include "svg_facts.hpp"

#include "remat/error.hpp"
#include "remat/report/svg.hpp"

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>

using namespace remat;

BOOST_AUTO_TEST_CASE(escaping_covers_the_five_xml_specials_and_control_bytes)
{
    BOOST_TEST(report::xml_escape("a<b & \"c\" > 'd'") == "a&lt;b &amp; &quot;c&quot; &gt; &apos;d&apos;");
    BOOST_TEST(report::xml_escape("tab\tnew\nline") == "tab\tnew\nline");
    BOOST_TEST(report::xml_escape(std::string("bell\a|nul") + '\0') == "bell\xEF\xBF\xBD|nul\xEF\xBF\xBD");
    BOOST_TEST(report::xml_escape("√T ≈ 32") == "√T ≈ 32");
}

BOOST_AUTO_TEST_CASE(numbers_have_at_most_two_decimals_and_no_negative_zero)
{
    BOOST_TEST(report::svg_number(12.5) == "12.5");
    BOOST_TEST(report::svg_number(12.0) == "12");
    BOOST_TEST(report::svg_number(0.126) == "0.13");
    BOOST_TEST(report::svg_number(-0.001) == "0");
    BOOST_TEST(report::svg_number(-3.14159) == "-3.14");
    BOOST_TEST(report::svg_number(1e7) == "10000000");
    BOOST_CHECK_THROW((void)report::svg_number(std::nan("")), argument_error);
    BOOST_CHECK_THROW((void)report::svg_number(std::numeric_limits<double>::infinity()), argument_error);
}

BOOST_AUTO_TEST_CASE(a_document_with_hostile_text_parses_and_keeps_its_text)
{
    const test::scratch_dir dir;
    const auto file = dir / "text.svg";
    const std::string hostile = "x < y && z > \"w\" 'q' ]]> <!-- -->";
    {
        std::ofstream out(file);
        report::svg_document svg(out, 320, 200);
        svg.open("g", {{"class", "series"}, {"data-name", hostile}});
        svg.title("tooltip & <more>");
        svg.element("polyline", {{"class", "curve"}, {"points", "1,2 3,4"}});
        svg.text(10, 20, hostile, {{"class", "series-label"}, {"font-size", 12}});
        svg.close();
        svg.line(0, 0, 10, 10, {{"stroke", "black"}});
        svg.circle(5, 5, 2, {{"class", "marker"}});
        svg.rect(1, 1, 3, 3);
        svg.finish();
    }
    const auto facts = test::read_svg_facts(file);
    BOOST_TEST(facts["width"].get<double>() == 320);
    BOOST_TEST(facts["height"].get<double>() == 200);
    BOOST_TEST_REQUIRE(facts["series"].size() == 1u);
    BOOST_TEST(facts["series"][0]["name"].get<std::string>() == hostile);
    BOOST_TEST(facts["series"][0]["label"]["text"].get<std::string>() == hostile);
    BOOST_TEST(facts["series"][0]["curves"][0] == nlohmann::json::parse("[[1,2],[3,4]]"));
}

BOOST_AUTO_TEST_CASE(unbalanced_elements_are_refused)
{
    std::ostringstream out;
    report::svg_document svg(out, 10, 10);
    BOOST_CHECK_THROW(svg.close(), std::logic_error);
    svg.open("g");
    BOOST_CHECK_THROW(svg.finish(), std::logic_error);
    svg.close();
    svg.finish();
    BOOST_TEST(out.str().find("</g>\n</svg>\n") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(large_documents_stream_before_they_finish)
{
    std::ostringstream out;
    report::svg_document svg(out, 1000, 1000);
    for (int i = 0; i < 5000; ++i)
        svg.line(i % 1000, 0, 0, i % 1000, {{"stroke", "black"}});
    BOOST_TEST(out.str().size() > 100'000u); // flushed along the way, not held until finish()
    svg.finish();
    BOOST_TEST(out.str().rfind("</svg>\n") == out.str().size() - 7);
}
