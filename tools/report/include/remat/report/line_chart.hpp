// remat/report/line_chart.hpp — line charts as SVG: several named series, linear or logarithmic axes with
// readable ticks, each series labelled at its own curve (no legend to look up), markers, and labelled
// horizontal and vertical reference lines.
//
// Loss curves (log y against iterations), trajectories, and `remat tradeoff`'s overhead against slots are
// drawn with it. Part of remat_report (internal, not installed).
//
//     remat::report::line_chart chart;
//     chart.title = "training loss";
//     chart.x = {.label = "iteration"};
//     chart.y = {.label = "loss", .kind = remat::report::scale::log};
//     chart.series.push_back({.name = "train", .points = {{1, 0.9}, {2, 0.5}, {3, 0.2}}});
//     chart.references.push_back({.direction = remat::report::reference_line::horizontal, .value = 0.25,
//                                 .label = "target"});
//     remat::report::write_svg(file, chart);
#pragma once

#include "remat/report/svg.hpp"

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace remat::report {

enum class scale { linear, log };

/// One axis. The range is the data's (and the reference lines'), widened to whole tick steps (linear)
/// or whole decades (log), unless `min` or `max` fix it; data outside a fixed range is clipped. On the y
/// axis each point beyond a fixed range is marked where it would be, at the edge it lies beyond (a
/// triangle of its series' colour, class "off-scale"), and a note above the plot says how many there are
/// and how far they go (class "off-scale-note").
struct axis {
    std::string label{};
    scale kind = scale::linear;
    std::optional<double> min{};
    std::optional<double> max{};
};

/// A point in data coordinates.
struct data_point {
    double x = 0;
    double y = 0;
};

/// One curve, labelled with `name` next to itself.
struct data_series {
    std::string name{};
    std::vector<data_point> points{}; ///< in x order for a line; finite, and > 0 on a log axis
    bool markers = false;             ///< a dot at every point (a single-point series always has one)
    std::string color{};              ///< empty: the next colour of a palette for colour-blind readers
    bool dashed = false;
};

/// A labelled line across the plot: horizontal at y = value, or vertical at x = value.
struct reference_line {
    enum orientation { horizontal, vertical };
    orientation direction = horizontal;
    double value = 0;
    std::string label{};
};

/// A point called out with a ring and a label (the √T point of a trade-off curve, a minimum).
struct callout {
    data_point at{};
    std::string label{};
};

struct line_chart {
    std::string title{};
    std::string subtitle{}; ///< a second line under the title (parameters, totals)
    axis x{};
    axis y{};
    std::vector<data_series> series{};
    std::vector<reference_line> references{};
    std::vector<callout> callouts{};
    double width = 960;
    double height = 600;
};

/// Where write_svg put a series' label: its box in SVG units, and the curve point it names.
struct placed_label {
    double left = 0, top = 0, right = 0, bottom = 0;
    point anchor;
    bool leader = false; ///< no room next to the curve: the label sits in the right margin with a line to it
};

/// Writes the chart as a complete SVG document. Series are drawn as `<g class="series" data-name=NAME>`
/// holding a polyline (class "curve"), markers (class "marker") and the label (class "series-label"), so
/// tests and scripts can find them. Returns where each series' label went, in series order.
/// Throws remat::argument_error for a chart without data, a non-finite value, or a value <= 0 on a log
/// axis (naming the series and the value).
std::vector<placed_label> write_svg(std::ostream& out, const line_chart& chart);

/// The tick values write_svg uses on `a` for data spanning [lo, hi]: 1, 2 or 5 times a power of ten
/// apart on a linear axis (4 to 10 of them); powers of ten on a log axis (with 2 and 5 in between when
/// it spans at most two decades, every few decades when it spans many). Exposed for tests.
///
///     remat::report::axis_ticks({.kind = remat::report::scale::log}, 3, 2000);   // 1, 10, 100, 1000, 10000
[[nodiscard]] std::vector<double> axis_ticks(const axis& a, double lo, double hi);

/// A tick value as a label. Both kinds: "0", "0.5", "20", "1000". From 10^4 on, a linear axis writes
/// "20k", "1.5M", "3G", and a log axis the powers of ten and their whole multiples as "10⁶", "2×10⁹" (up
/// to 10^4 as plain numbers). Below 10^-3: "10⁻⁴" on log axes and "2.5×10⁻⁴" on linear axes.
///
///     remat::report::tick_label(1e6, remat::report::scale::log);      // "10⁶"
///     remat::report::tick_label(1.5e6, remat::report::scale::linear); // "1.5M"
[[nodiscard]] std::string tick_label(double value, scale kind);

} // namespace remat::report
