#include "svg_facts.hpp"

#include "command.hpp"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

namespace remat::test {
namespace {

double point_box_distance(double x, double y, const text_box& b)
{
    const double dx = std::max({b.left - x, 0.0, x - b.right});
    const double dy = std::max({b.top - y, 0.0, y - b.bottom});
    return std::hypot(dx, dy);
}

std::size_t code_points(const std::string& text)
{
    return static_cast<std::size_t>(
        std::count_if(text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

} // namespace

nlohmann::json read_svg_facts(const std::filesystem::path& svg)
{
    const tool_result r = run_command(std::string(REMAT_PYTHON3) + " " + REMAT_SVG_FACTS + " '" + svg.string() + "'");
    BOOST_TEST_REQUIRE(r.status == 0, "svg_facts.py " << svg << " failed (" << r.status << "): " << r.err);
    return nlohmann::json::parse(r.out);
}

text_box box_of(const nlohmann::json& label)
{
    const double size = label["font_size"].get<double>();
    const double width = 0.6 * size * static_cast<double>(code_points(label["text"].get<std::string>()));
    const double x = label["x"].get<double>();
    const double y = label["y"].get<double>();
    const std::string anchor = label["anchor"].get<std::string>();
    const double left = anchor == "end" ? x - width : anchor == "middle" ? x - width / 2 : x;
    return {left, y - 0.8 * size, left + width, y + 0.25 * size};
}

text_box box_of_text(const nlohmann::json& text)
{
    const text_box b = box_of(text);
    if (text["rotated"] == 0)
        return b;
    BOOST_TEST_REQUIRE(text["rotated"] == -90, "a text transformed other than by rotate(-90 x y): " << text.dump());
    // Turned counter-clockwise about (x, y): an offset (dx, dy) goes to (dy, -dx).
    const double x = text["x"].get<double>(), y = text["y"].get<double>();
    return {x + (b.top - y), y - (b.right - x), x + (b.bottom - y), y - (b.left - x)};
}

std::vector<std::string> text_layout_faults(const nlohmann::json& facts)
{
    std::vector<std::string> faults;
    const double width = facts["width"].get<double>(), height = facts["height"].get<double>();
    const nlohmann::json& texts = facts["texts"];
    for (std::size_t i = 0; i < texts.size(); ++i) {
        const text_box a = box_of_text(texts[i]);
        if (!inside(a, width, height))
            faults.push_back("outside the picture: " + texts[i].dump());
        for (std::size_t j = i + 1; j < texts.size(); ++j)
            if (overlap(a, box_of_text(texts[j])))
                faults.push_back("overlapping: " + texts[i].dump() + " and " + texts[j].dump());
    }
    return faults;
}

double distance(const text_box& b, const nlohmann::json& polyline)
{
    double best = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < polyline.size(); ++i) {
        const double x0 = polyline[i][0].get<double>(), y0 = polyline[i][1].get<double>();
        const double x1 = i + 1 < polyline.size() ? polyline[i + 1][0].get<double>() : x0;
        const double y1 = i + 1 < polyline.size() ? polyline[i + 1][1].get<double>() : y0;
        const auto pieces = static_cast<int>(std::ceil(std::hypot(x1 - x0, y1 - y0) / 0.25)) + 1;
        for (int k = 0; k <= pieces; ++k) {
            const double t = k / static_cast<double>(pieces);
            best = std::min(best, point_box_distance(x0 + t * (x1 - x0), y0 + t * (y1 - y0), b));
        }
    }
    return best;
}

bool overlap(const text_box& a, const text_box& b)
{
    return a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
}

bool inside(const text_box& inner, double width, double height)
{
    return inner.left >= 0 && inner.top >= 0 && inner.right <= width && inner.bottom <= height;
}

} // namespace remat::test
