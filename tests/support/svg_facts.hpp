// SVG files read back for tests: parsed by a real XML parser (tests/support/svg_facts.py, Python's
// xml.etree) into JSON, and the geometry the chart tests check, computed here independently of
// remat_report's own placement code.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace remat::test {

/// The facts svg_facts.py prints for `svg` (see that script); fails the test when the file is not
/// well-formed XML or the parser cannot run.
nlohmann::json read_svg_facts(const std::filesystem::path& svg);

struct text_box {
    double left = 0, top = 0, right = 0, bottom = 0;
};

/// The box a label's text covers, from its x, y, font size, anchor and characters: 0.6 em per
/// character, 0.8 em above the baseline, 0.25 em below (sans-serif).
text_box box_of(const nlohmann::json& label);

/// The box any text element of the facts' "texts" covers: box_of, turned about its anchor when the text
/// is rotated by -90 degrees (the y axis's label); fails the test for any other transform.
text_box box_of_text(const nlohmann::json& text);

/// Every pair of texts in `facts` whose boxes overlap, and every text not inside the document, each as one
/// line naming the texts; empty when the labels are all legible.
std::vector<std::string> text_layout_faults(const nlohmann::json& facts);

/// Shortest distance between a box and a polyline ([[x, y], ...]), measured on points every 0.25 units
/// along it.
double distance(const text_box& b, const nlohmann::json& polyline);

bool overlap(const text_box& a, const text_box& b);

/// Whether `inner` lies within [0, width] x [0, height].
bool inside(const text_box& inner, double width, double height);

} // namespace remat::test
