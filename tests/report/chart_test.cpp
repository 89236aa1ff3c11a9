// remat_report's line charts: ticks, and the SVG read back through an XML parser — one group per series,
// each label beside its own curve (nearer to it than to any other), inside the picture, overlapping no
// other label; markers, reference lines and callouts where the data puts them.
#define BOOST_TEST_MODULE report_chart
#include <boost/test/unit_test.hpp>

#include "scratch_dir.hpp"
#include "svg_facts.hpp"

#include "remat/error.hpp"
#include "remat/report/line_chart.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using namespace remat;
using report::scale;

namespace {

nlohmann::json draw(const report::line_chart& chart, const test::scratch_dir& dir, const std::string& name,
                    std::vector<report::placed_label>* placed = nullptr)
{
    const auto file = dir / name;
    {
        std::ofstream out(file);
        const auto labels = report::write_svg(out, chart);
        if (placed != nullptr)
            *placed = labels;
    }
    return test::read_svg_facts(file);
}

// Every series label: inside the picture, clear of every other label, and beside its own curve (or tied to
// it by a leader line that starts on it), nearer to its own curve than to any other.
void check_labels(const nlohmann::json& facts)
{
    const double width = facts["width"].get<double>(), height = facts["height"].get<double>();
    std::vector<test::text_box> boxes;
    for (const auto& r : facts["references"])
        if (!r["label"].is_null())
            boxes.push_back(test::box_of(r["label"]));
    const std::size_t reference_labels = boxes.size();
    for (const auto& s : facts["series"]) {
        const std::string name = s["name"].get<std::string>();
        BOOST_TEST_REQUIRE(!s["label"].is_null(), name << " has no label");
        BOOST_TEST(s["label"]["text"].get<std::string>() == name);
        const test::text_box b = test::box_of(s["label"]);
        BOOST_TEST(test::inside(b, width, height), name << " label outside the picture");
        for (std::size_t k = 0; k < boxes.size(); ++k)
            BOOST_TEST(!test::overlap(b, boxes[k]), name << " label overlaps label " << k);
        boxes.push_back(b);
        double own = 1e9;
        for (const auto& c : s["curves"])
            own = std::min(own, test::distance(b, c));
        if (s["curves"].empty()) // a single point: its marker
            own = test::distance(b, s["markers"]);
        if (!s["leader"].is_null()) {
            // The leader starts on the curve and ends at the label.
            const auto& l = s["leader"];
            const nlohmann::json start = nlohmann::json::array({{l[0], l[1]}});
            const nlohmann::json end = nlohmann::json::array({{l[2], l[3]}});
            double on_curve = 1e9;
            for (const auto& c : s["curves"])
                on_curve = std::min(
                    on_curve, test::distance(
                                  {l[0].get<double>(), l[1].get<double>(), l[0].get<double>(), l[1].get<double>()}, c));
            if (s["curves"].empty())
                on_curve = test::distance(
                    {l[0].get<double>(), l[1].get<double>(), l[0].get<double>(), l[1].get<double>()}, s["markers"]);
            BOOST_TEST(on_curve < 0.5, name << " leader starts " << on_curve << " from its curve");
            BOOST_TEST(test::distance(b, end) < 3, name << " leader does not reach its label");
            (void)start;
            continue;
        }
        BOOST_TEST(own < 15, name << " label is " << own << " from its curve"); // 4 units, 14 around a callout ring
        BOOST_TEST(own >= 1, name << " label sits on its curve");
        for (const auto& other : facts["series"]) {
            if (other["name"] == s["name"])
                continue;
            for (const auto& c : other["curves"])
                BOOST_TEST(test::distance(b, c) > own, name << " label nearer to " << other["name"]);
            if (other["curves"].empty())
                BOOST_TEST(test::distance(b, other["markers"]) > own, name << " label nearer to " << other["name"]);
        }
    }
    BOOST_TEST(boxes.size() == reference_labels + facts["series"].size());
}

// Overhead-like curves: all fall towards 1 and meet at the right end, where labels would collide.
report::line_chart converging_chart()
{
    report::line_chart chart;
    chart.title = "overhead against slots";
    chart.x = {.label = "slots", .kind = scale::log};
    chart.y = {.label = "overhead", .kind = scale::log};
    for (int k = 1; k <= 5; ++k) {
        report::data_series s{.name = "schedule " + std::to_string(k), .points = {}, .markers = k % 2 == 0};
        for (double x = 1; x <= 1000; x *= 1.5)
            s.points.push_back({x, 1 + k * 20.0 / std::pow(x, 0.3 + 0.1 * k)});
        s.points.push_back({1000, 1});
        chart.series.push_back(s);
    }
    chart.series.push_back({.name = "store-all", .points = {{1000, 1}}});
    chart.series.push_back({.name = "√T rule", .points = {{32, 4.0 / 3}}});
    chart.references.push_back(
        {.direction = report::reference_line::horizontal, .value = 1.5, .label = "max overhead 1.5"});
    chart.references.push_back({.direction = report::reference_line::vertical, .value = 32, .label = "√T = 32"});
    chart.callouts.push_back({.at = {32, 4.0 / 3}, .label = "4/3 at √T"});
    return chart;
}

} // namespace

BOOST_AUTO_TEST_CASE(linear_ticks_are_whole_steps_of_1_2_or_5)
{
    BOOST_TEST(report::axis_ticks({}, 0, 97) == (std::vector<double>{0, 20, 40, 60, 80, 100}),
               boost::test_tools::per_element());
    BOOST_TEST(report::axis_ticks({}, -3, 3) == (std::vector<double>{-3, -2, -1, 0, 1, 2, 3}),
               boost::test_tools::per_element());
    // On any range: 4 to 11 ticks, evenly spaced by 1, 2 or 5 times a power of ten, covering the range.
    for (const auto& [lo, hi] : std::vector<std::pair<double, double>>{
             {0.13, 0.87}, {1, 1.0001}, {-1e9, 3e9}, {0, 1}, {2.5e-5, 7e-5}, {999, 1001}, {1, 4.2}}) {
        const auto ticks = report::axis_ticks({}, lo, hi);
        BOOST_TEST_REQUIRE((ticks.size() >= 4 && ticks.size() <= 11), lo << ".." << hi << ": " << ticks.size());
        const double step = ticks[1] - ticks[0];
        const double mantissa = step / std::pow(10.0, std::floor(std::log10(step) + 1e-9));
        BOOST_TEST((std::abs(mantissa - 1) < 1e-6 || std::abs(mantissa - 2) < 1e-6 || std::abs(mantissa - 5) < 1e-6),
                   lo << ".." << hi << ": step " << step);
        for (std::size_t i = 1; i < ticks.size(); ++i)
            BOOST_TEST(std::abs(ticks[i] - ticks[i - 1] - step) < step * 1e-6);
        BOOST_TEST(ticks.front() <= lo);
        BOOST_TEST(ticks.back() >= hi);
    }
    // A fixed range is not widened.
    const auto fixed = report::axis_ticks({.label = "y", .kind = scale::linear, .min = 1, .max = 4}, 1, 4);
    BOOST_TEST(fixed.front() >= 1);
    BOOST_TEST(fixed.back() <= 4);
}

BOOST_AUTO_TEST_CASE(log_ticks_are_decades_with_steps_between_on_short_ranges)
{
    BOOST_TEST(report::axis_ticks({.label = "x", .kind = scale::log}, 3, 2000) ==
                   (std::vector<double>{1, 10, 100, 1000, 10000}),
               boost::test_tools::per_element());
    BOOST_TEST(report::axis_ticks({.label = "x", .kind = scale::log}, 1, 50) ==
                   (std::vector<double>{1, 2, 5, 10, 20, 50, 100}),
               boost::test_tools::per_element());
    const auto wide = report::axis_ticks({.label = "x", .kind = scale::log}, 1, 1e12);
    BOOST_TEST(wide.size() <= 9u);
    BOOST_TEST(wide.front() == 1);
    BOOST_TEST(wide.back() >= 1e12);
    BOOST_CHECK_THROW((void)report::axis_ticks({.label = "x", .kind = scale::log}, 0, 10), argument_error);
}

BOOST_AUTO_TEST_CASE(tick_labels_are_short)
{
    BOOST_TEST(report::tick_label(0, scale::linear) == "0");
    BOOST_TEST(report::tick_label(0.5, scale::linear) == "0.5");
    BOOST_TEST(report::tick_label(0.1 * 3, scale::linear) == "0.3");
    BOOST_TEST(report::tick_label(1000, scale::log) == "1000");
    BOOST_TEST(report::tick_label(20000, scale::linear) == "20k");
    BOOST_TEST(report::tick_label(1.5e6, scale::linear) == "1.5M");
    BOOST_TEST(report::tick_label(1e6, scale::log) == "10⁶");
    BOOST_TEST(report::tick_label(2e9, scale::log) == "2×10⁹");
    BOOST_TEST(report::tick_label(1e-4, scale::log) == "10⁻⁴");
    BOOST_TEST(report::tick_label(2.5e-4, scale::linear) == "2.5×10⁻⁴");
}

BOOST_AUTO_TEST_CASE(every_series_is_drawn_and_labelled_at_its_own_curve)
{
    const test::scratch_dir dir;
    const report::line_chart chart = converging_chart();
    std::vector<report::placed_label> placed;
    const auto facts = draw(chart, dir, "converging.svg", &placed);
    BOOST_TEST_REQUIRE(facts["series"].size() == chart.series.size());
    for (std::size_t i = 0; i < chart.series.size(); ++i) {
        BOOST_TEST(facts["series"][i]["name"].get<std::string>() == chart.series[i].name);
        const std::size_t markers =
            chart.series[i].markers || chart.series[i].points.size() == 1 ? chart.series[i].points.size() : 0;
        BOOST_TEST(facts["series"][i]["markers"].size() == markers, chart.series[i].name);
        // The box write_svg reports is where the text is.
        const test::text_box b = test::box_of(facts["series"][i]["label"]);
        BOOST_TEST(std::abs(b.left - placed[i].left) < 0.5);
        BOOST_TEST(std::abs(b.bottom - placed[i].bottom) < 0.5);
    }
    check_labels(facts);
    BOOST_TEST_REQUIRE(facts["references"].size() == 2u);
    BOOST_TEST(facts["references"][0]["label"]["text"].get<std::string>() == "max overhead 1.5");
    const auto& h = facts["references"][0]["line"];
    BOOST_TEST(h[1].get<double>() == h[3].get<double>()); // horizontal
    const auto& v = facts["references"][1]["line"];
    BOOST_TEST(v[0].get<double>() == v[2].get<double>()); // vertical
    // The callout ring is on the √T rule's marker, and the vertical line passes through it.
    BOOST_TEST_REQUIRE(facts["callouts"].size() == 1u);
    const auto& marker = facts["series"][6]["markers"][0];
    BOOST_TEST(std::abs(facts["callouts"][0]["ring"][0].get<double>() - marker[0].get<double>()) < 0.01);
    BOOST_TEST(std::abs(facts["callouts"][0]["ring"][1].get<double>() - marker[1].get<double>()) < 0.01);
    BOOST_TEST(std::abs(v[0].get<double>() - marker[0].get<double>()) < 0.01);
    BOOST_TEST(facts["ticks"]["x"].size() >= 3u);
    BOOST_TEST(facts["ticks"]["y"].size() >= 3u);
}

BOOST_AUTO_TEST_CASE(long_noisy_loss_curves_are_labelled_too)
{
    report::line_chart chart;
    chart.title = "loss";
    chart.x = {.label = "iteration"};
    chart.y = {.label = "loss", .kind = scale::log};
    report::data_series train{.name = "train"}, test_loss{.name = "validation", .dashed = true};
    for (int i = 1; i <= 20000; ++i) {
        const double trend = 2.0 * std::exp(-i / 4000.0) + 1e-3;
        train.points.push_back({static_cast<double>(i), trend * (1 + 0.3 * std::sin(i * 0.7))});
        if (i % 500 == 0)
            test_loss.points.push_back({static_cast<double>(i), trend * 1.4});
    }
    chart.series = {train, test_loss};
    const test::scratch_dir dir;
    const auto facts = draw(chart, dir, "loss.svg");
    BOOST_TEST_REQUIRE(facts["series"].size() == 2u);
    check_labels(facts);
}

BOOST_AUTO_TEST_CASE(a_fixed_range_clips_the_curves)
{
    report::line_chart chart = converging_chart();
    chart.y.max = 3;
    const test::scratch_dir dir;
    const auto facts = draw(chart, dir, "clipped.svg");
    double top = 1e9;
    for (const auto& s : facts["series"])
        for (const auto& c : s["curves"])
            for (const auto& p : c)
                top = std::min(top, p[1].get<double>());
    BOOST_TEST(top >= 66 - 1e-9); // the plot's top edge: nothing drawn above it
    check_labels(facts);
}

BOOST_AUTO_TEST_CASE(points_beyond_a_fixed_range_are_marked_at_the_edge_and_counted)
{
    report::line_chart chart = converging_chart();
    chart.y = {.label = "overhead", .kind = scale::linear, .min = 1.0, .max = 3.0};
    const test::scratch_dir dir;
    const auto facts = draw(chart, dir, "off_scale.svg");
    std::size_t above = 0;
    double highest = 0;
    for (std::size_t i = 0; i < chart.series.size(); ++i) {
        std::multiset<double> expected, marked;
        for (const report::data_point& p : chart.series[i].points)
            if (p.y > 3) {
                expected.insert(p.y);
                highest = std::max(highest, p.y);
            }
        for (const auto& m : facts["series"][i]["off_scale"]) {
            marked.insert(m["value"].get<double>());
            BOOST_TEST(std::abs(m["y"].get<double>() - 67) <= 1.0); // its tip at the top edge (y = 66)
        }
        BOOST_TEST(marked.size() == expected.size(), chart.series[i].name);
        above += expected.size();
    }
    BOOST_TEST_REQUIRE(above > 0u);
    std::string note;
    for (const auto& t : facts["texts"])
        if (t["classes"].size() == 1 && t["classes"][0] == "off-scale-note")
            note = t["text"].get<std::string>();
    BOOST_TEST(note.find(std::to_string(above) + " points above the axis") != std::string::npos, note);
    BOOST_TEST(note.find(report::tick_label(std::round(highest), scale::linear)) != std::string::npos, note);
    BOOST_TEST(test::text_layout_faults(facts).empty());
}

// A callout whose label is wider than the right margin, where the curves crowd together at the right end
// (remat tradeoff's T = 1000 picture on a log axis): it used to go into the margin, clipped by the
// picture's edge and printed over two series' labels.
BOOST_AUTO_TEST_CASE(a_label_too_wide_for_the_margin_stays_inside_and_clear_of_the_others)
{
    report::line_chart chart;
    chart.x = {.label = "snapshot slots", .kind = scale::log};
    chart.y = {.label = "overhead", .kind = scale::log};
    // Overheads as remat tradeoff's at T = 1000: 167 at one slot, a plateau near 1.3 from 44 slots on.
    for (const double shift : {0.0, 0.003, 0.006, 0.009}) {
        report::data_series s{.name = "schedule " + std::to_string(static_cast<int>(shift * 1000))};
        for (double x = 1; x < 44; x *= 1.5)
            s.points.push_back({x, 1.3 + shift + 166.0 / std::pow(x, 1.8)});
        for (const double x : {44.0, 61.0, 100.0, 180.0, 320.0, 560.0})
            s.points.push_back({x, 1.32 + shift - 0.17 * std::log10(x / 44) / std::log10(560.0 / 44)});
        s.points.push_back({999, 1 + shift});
        chart.series.push_back(s);
    }
    chart.series.push_back({.name = "store-all", .points = {{999, 1}}});
    chart.references.push_back(
        {.direction = report::reference_line::horizontal, .value = 1.5, .label = "max overhead 1.5"});
    chart.callouts.push_back({.at = {61, 1.32}, .label = "√T rule: every 32 steps, 61 slots, 1.32×"});
    const test::scratch_dir dir;
    const auto facts = draw(chart, dir, "wide_callout.svg");
    for (const std::string& fault : test::text_layout_faults(facts))
        BOOST_ERROR(fault);
    BOOST_TEST_REQUIRE(facts["callouts"].size() == 1u);
    BOOST_TEST(!facts["callouts"][0]["label"].is_null());
}

BOOST_AUTO_TEST_CASE(bad_data_is_refused_naming_the_series_and_value)
{
    std::ostringstream out;
    report::line_chart chart;
    chart.y.kind = scale::log;
    chart.y.label = "loss";
    chart.series.push_back({.name = "train", .points = {{1, 0.5}, {2, 0}}});
    try {
        (void)report::write_svg(out, chart);
        BOOST_FAIL("a zero on a log axis was accepted");
    } catch (const argument_error& e) {
        BOOST_TEST(std::string(e.what()).find("\"train\"") != std::string::npos, e.what());
        BOOST_TEST(std::string(e.what()).find("got 0") != std::string::npos, e.what());
    }
    chart.series[0].points[1].y = std::nan("");
    BOOST_CHECK_THROW((void)report::write_svg(out, chart), argument_error);
    chart.series[0].points.clear();
    BOOST_CHECK_THROW((void)report::write_svg(out, chart), argument_error);
    chart.series.clear();
    BOOST_CHECK_THROW((void)report::write_svg(out, chart), argument_error);
}
