#include "remat/report/line_chart.hpp"

#include "label_placement.hpp"

#include "remat/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numbers>
#include <ostream>

namespace remat::report {
namespace {

// Okabe & Ito's palette, readable with every common colour-vision deficiency (yellow left out: too
// light on white).
constexpr std::array<const char*, 7> palette{"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                             "#E69F00", "#56B4E9", "#000000"};
constexpr double margin_left = 84;
constexpr double margin_right = 190; // room for labels beside the curves' right ends
constexpr double margin_top = 66;
constexpr double margin_bottom = 58;
constexpr double label_font = 12;
constexpr double tick_font = 11;
constexpr double callout_radius = 7;

struct range {
    double lo = std::numeric_limits<double>::infinity();
    double hi = -std::numeric_limits<double>::infinity();
    void add(double v)
    {
        lo = std::min(lo, v);
        hi = std::max(hi, v);
    }
};

// Data coordinates to SVG units along one axis.
struct axis_map {
    double lo, hi;   // data range shown (for log axes, log10 of it)
    double from, to; // SVG units where lo and hi land
    bool log;
    [[nodiscard]] double operator()(double v) const
    {
        const double t = log ? std::log10(v) : v;
        return from + (to - from) * (t - lo) / (hi - lo);
    }
};

void check_value(const axis& a, const std::string& what, double v)
{
    if (!std::isfinite(v))
        throw argument_error(fmt::format("{}: expected finite values, got {}", what, v));
    if (a.kind == scale::log && v <= 0)
        throw argument_error(
            fmt::format("{}: the {} axis is logarithmic, so values must be > 0, got {}", what, a.label, v));
}

// The shown range and its ticks: the data's range widened to whole ticks, unless fixed.
struct axis_layout {
    std::vector<double> ticks;
    double lo, hi;
};

axis_layout lay_out(const axis& a, range data)
{
    if (a.min)
        data.lo = *a.min;
    if (a.max)
        data.hi = *a.max;
    if (a.min && a.max && *a.max <= *a.min)
        throw argument_error(fmt::format("axis \"{}\": expected min < max, got [{}, {}]", a.label, *a.min, *a.max));
    if (a.kind == scale::log && data.lo <= 0)
        throw argument_error(fmt::format("axis \"{}\" is logarithmic: expected min > 0, got {}", a.label, data.lo));
    axis_layout layout{axis_ticks(a, data.lo, data.hi), data.lo, data.hi};
    if (!a.min)
        layout.lo = std::min(layout.lo, layout.ticks.front());
    if (!a.max)
        layout.hi = std::max(layout.hi, layout.ticks.back());
    if (layout.hi <= layout.lo) // a single value on a fixed side
        layout.hi = layout.lo + 1;
    return layout;
}

axis_map map_for(const axis& a, const axis_layout& layout, double from, double to)
{
    const bool log = a.kind == scale::log;
    return {log ? std::log10(layout.lo) : layout.lo, log ? std::log10(layout.hi) : layout.hi, from, to, log};
}

void draw_axes(svg_document& svg, const line_chart& chart, const axis_layout& xl, const axis_layout& yl,
               const axis_map& mx, const axis_map& my, const detail::box& plot)
{
    svg.open("g", {{"class", "axis x"}, {"font-size", tick_font}, {"fill", "#333"}});
    for (const double t : xl.ticks) {
        const double x = mx(t);
        if (x < plot.left - 0.5 || x > plot.right + 0.5)
            continue;
        svg.line(x, plot.top, x, plot.bottom, {{"stroke", "#e5e5e5"}, {"stroke-width", 1}});
        svg.text(x, plot.bottom + 16, tick_label(t, chart.x.kind), {{"class", "tick"}, {"text-anchor", "middle"}});
    }
    svg.text((plot.left + plot.right) / 2, plot.bottom + 40, chart.x.label,
             {{"class", "axis-label"}, {"text-anchor", "middle"}, {"font-size", label_font}});
    svg.close();
    svg.open("g", {{"class", "axis y"}, {"font-size", tick_font}, {"fill", "#333"}});
    for (const double t : yl.ticks) {
        const double y = my(t);
        if (y < plot.top - 0.5 || y > plot.bottom + 0.5)
            continue;
        svg.line(plot.left, y, plot.right, y, {{"stroke", "#e5e5e5"}, {"stroke-width", 1}});
        svg.text(plot.left - 6, y + 4, tick_label(t, chart.y.kind), {{"class", "tick"}, {"text-anchor", "end"}});
    }
    const double mid = (plot.top + plot.bottom) / 2;
    svg.text(18, mid, chart.y.label,
             {{"class", "axis-label"},
              {"text-anchor", "middle"},
              {"font-size", label_font},
              {"transform", fmt::format("rotate(-90 18 {})", svg_number(mid))}});
    svg.close();
    svg.rect(plot.left, plot.top, plot.width(), plot.height(), {{"fill", "none"}, {"stroke", "#999"}});
}

// A reference line's label: at either end of the line, on either side, where it is farthest from the
// curves (and overlaps no label already placed); the first of equals: right end above, for a horizontal
// line, top right for a vertical one.
detail::box place_reference_label(const reference_line& r, double at, const detail::box& plot,
                                  std::span<const detail::label_request> curves, std::span<const detail::box> taken)
{
    const std::size_t chars = detail::utf8_length(r.label);
    std::vector<detail::box> options;
    if (r.direction == reference_line::horizontal) {
        for (const double baseline : {at - 4, at + 4 + 0.8 * label_font})
            for (const bool right_end : {true, false})
                options.push_back(detail::text_box(right_end ? plot.right - 4 : plot.left + 4, baseline, chars,
                                                   label_font, right_end));
    } else {
        for (const double baseline : {plot.top + 14, plot.bottom - 6})
            for (const bool right_side : {true, false})
                options.push_back(
                    detail::text_box(right_side ? at + 4 : at - 4, baseline, chars, label_font, !right_side));
    }
    detail::box best = options.front();
    double best_clearance = -1;
    for (const detail::box& b : options) {
        if (b.left < plot.left || b.right > plot.right || b.top < plot.top || b.bottom > plot.bottom ||
            std::any_of(taken.begin(), taken.end(), [&](const detail::box& t) { return detail::overlap(b, t, 2); }))
            continue;
        double clearance = 24;
        for (const detail::label_request& c : curves)
            for (const detail::piece& p : c.curve)
                for (std::size_t k = 0; k < p.size() && clearance > 0; ++k)
                    clearance = std::min(clearance, detail::distance(b, p[k], k + 1 < p.size() ? p[k + 1] : p[k]));
        if (clearance > best_clearance) {
            best_clearance = clearance;
            best = b;
        }
    }
    return best;
}

// Where a leader line from `from` meets its label: the middle of the label's left side when the label is to
// the right (the margin), else the nearest point of its box, 2 units off.
point leader_end(const placed_label& l, point from)
{
    if (from.x < l.left)
        return {l.left - 2, (l.top + l.bottom) / 2};
    return {std::clamp(from.x, l.left - 2, l.right + 2), std::clamp(from.y, l.top - 2, l.bottom + 2)};
}

// A point beyond a fixed y range: marked at the edge it lies beyond, never silently dropped.
struct off_scale_point {
    std::size_t series;
    double x;     // SVG units
    double value; // data units
    bool above;
};

std::vector<off_scale_point> off_scale_points(const line_chart& chart, const axis_layout& yl, const axis_map& mx,
                                              const detail::box& plot)
{
    std::vector<off_scale_point> result;
    for (std::size_t i = 0; i < chart.series.size(); ++i)
        for (const data_point& p : chart.series[i].points) {
            const double x = mx(p.x);
            if ((p.y > yl.hi || p.y < yl.lo) && x >= plot.left - 0.5 && x <= plot.right + 0.5)
                result.push_back({i, x, p.y, p.y > yl.hi});
        }
    return result;
}

// A small triangle pointing out of the plot at the top (or bottom) edge.
detail::piece off_scale_triangle(const off_scale_point& o, const detail::box& plot)
{
    constexpr double half = 4.5, depth = 8;
    const double edge = o.above ? plot.top + 1 : plot.bottom - 1;
    const double base = o.above ? edge + depth : edge - depth;
    return {{o.x, edge}, {o.x + half, base}, {o.x - half, base}, {o.x, edge}};
}

double three_digits(double v)
{
    const double unit = std::pow(10.0, std::floor(std::log10(std::abs(v))) - 2);
    return std::round(v / unit) * unit;
}

// "▲ off scale: 8 points above 3 (up to 167)": how many points the fixed range leaves out, and how far.
std::string off_scale_note(std::span<const off_scale_point> points, scale kind)
{
    std::string note;
    for (const bool above : {true, false}) {
        std::size_t count = 0;
        double extreme = above ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
        for (const off_scale_point& o : points)
            if (o.above == above) {
                ++count;
                extreme = above ? std::max(extreme, o.value) : std::min(extreme, o.value);
            }
        if (count == 0)
            continue;
        note += fmt::format("{}{} off scale: {} point{} {} the axis (up to {})", note.empty() ? "" : "; ",
                            above ? "▲" : "▼", count, count == 1 ? "" : "s", above ? "above" : "below",
                            tick_label(three_digits(extreme), kind));
    }
    return note;
}

} // namespace

std::vector<placed_label> write_svg(std::ostream& out, const line_chart& chart)
{
    range xr, yr;
    for (const data_series& s : chart.series) {
        const std::string what = fmt::format("series \"{}\"", s.name);
        if (s.points.empty())
            throw argument_error(what + " has no points");
        for (const data_point& p : s.points) {
            check_value(chart.x, what, p.x);
            check_value(chart.y, what, p.y);
            xr.add(p.x);
            yr.add(p.y);
        }
    }
    if (chart.series.empty())
        throw argument_error("a line chart needs at least one series");
    for (const reference_line& r : chart.references) {
        const bool horizontal = r.direction == reference_line::horizontal;
        check_value(horizontal ? chart.y : chart.x, fmt::format("reference line \"{}\"", r.label), r.value);
        (horizontal ? yr : xr).add(r.value);
    }
    for (const callout& c : chart.callouts) {
        check_value(chart.x, fmt::format("callout \"{}\"", c.label), c.at.x);
        check_value(chart.y, fmt::format("callout \"{}\"", c.label), c.at.y);
    }
    const detail::box plot{margin_left, margin_top, chart.width - margin_right, chart.height - margin_bottom};
    const detail::box area{plot.left, plot.top, chart.width - 6, plot.bottom};
    const axis_layout xl = lay_out(chart.x, xr);
    const axis_layout yl = lay_out(chart.y, yr);
    const axis_map mx = map_for(chart.x, xl, plot.left, plot.right);
    const axis_map my = map_for(chart.y, yl, plot.bottom, plot.top);
    auto to_svg = [&](data_point p) { return point{mx(p.x), my(p.y)}; };

    svg_document svg(out, chart.width, chart.height);
    svg.open("g", {{"font-family", "sans-serif"}});
    svg.text(plot.left, 24, chart.title, {{"class", "title"}, {"font-size", 16}});
    if (!chart.subtitle.empty())
        svg.text(plot.left, 44, chart.subtitle, {{"class", "subtitle"}, {"font-size", 12}, {"fill", "#444"}});
    draw_axes(svg, chart, xl, yl, mx, my, plot);
    const std::vector<off_scale_point> off_scale = off_scale_points(chart, yl, mx, plot);
    if (!off_scale.empty()) // above the plot's top right corner, under the subtitle
        svg.text(plot.right, plot.top - 6, off_scale_note(off_scale, chart.y.kind),
                 {{"class", "off-scale-note"}, {"text-anchor", "end"}, {"font-size", tick_font}, {"fill", "#333"}});

    // The curves, in SVG units and clipped to the plot.
    std::vector<detail::label_request> requests;
    std::vector<std::string> colors;
    for (std::size_t i = 0; i < chart.series.size(); ++i) {
        const data_series& s = chart.series[i];
        std::vector<point> points;
        points.reserve(s.points.size());
        for (const data_point& p : s.points)
            points.push_back(to_svg(p));
        requests.push_back({detail::clip_polyline(points, plot), detail::utf8_length(s.name), true});
        colors.emplace_back(s.color.empty() ? palette[i % palette.size()] : s.color);
    }

    // Reference lines, labelled at an end inside the plot where the curves leave the most room; their
    // labels are taken space for the series' labels, their lines obstacles.
    std::vector<detail::box> taken;
    std::vector<detail::piece> obstacles;
    for (const reference_line& r : chart.references) {
        const bool horizontal = r.direction == reference_line::horizontal;
        const double at = horizontal ? my(r.value) : mx(r.value);
        if (at < (horizontal ? plot.top : plot.left) - 0.5 || at > (horizontal ? plot.bottom : plot.right) + 0.5)
            continue; // outside a fixed range
        const point a = horizontal ? point{plot.left, at} : point{at, plot.top};
        const point b = horizontal ? point{plot.right, at} : point{at, plot.bottom};
        svg.open("g", {{"class", "reference"}, {"data-value", fmt::format("{}", r.value)}});
        svg.line(a.x, a.y, b.x, b.y, {{"stroke", "#555"}, {"stroke-width", 1}, {"stroke-dasharray", "6 4"}});
        if (!r.label.empty()) {
            const detail::box label = place_reference_label(r, at, plot, requests, taken);
            svg.text(label.left, label.bottom - 0.25 * label_font, r.label,
                     {{"class", "reference-label"}, {"font-size", label_font}, {"fill", "#333"}});
            taken.push_back(label);
        }
        svg.close();
        obstacles.push_back({a, b});
    }

    // Callouts: their rings are obstacles, their labels placed with the series' (after them).
    for (const callout& c : chart.callouts) {
        const point p = to_svg(c.at);
        requests.push_back({detail::clip_polyline(std::span(&p, 1), plot), detail::utf8_length(c.label), false});
        if (!requests.back().curve.empty()) {
            detail::piece ring;
            for (int k = 0; k <= 12; ++k)
                ring.push_back({p.x + callout_radius * std::cos(k * std::numbers::pi / 6),
                                p.y + callout_radius * std::sin(k * std::numbers::pi / 6)});
            obstacles.push_back(std::move(ring));
        }
    }
    for (const off_scale_point& o : off_scale)
        obstacles.push_back(off_scale_triangle(o, plot));
    const std::vector<placed_label> labels = detail::place_labels(requests, obstacles, taken, plot, area, label_font);

    for (std::size_t i = 0; i < chart.series.size(); ++i) {
        const data_series& s = chart.series[i];
        const std::string& color = colors[i];
        svg.open("g", {{"class", "series"}, {"data-name", s.name}});
        for (const detail::piece& p : requests[i].curve)
            if (p.size() > 1) {
                if (s.dashed)
                    svg.polyline(p, {{"class", "curve"},
                                     {"stroke", color},
                                     {"stroke-width", 2},
                                     {"stroke-dasharray", "7 4"},
                                     {"stroke-linejoin", "round"}});
                else
                    svg.polyline(
                        p, {{"class", "curve"}, {"stroke", color}, {"stroke-width", 2}, {"stroke-linejoin", "round"}});
            }
        if (s.markers || s.points.size() == 1)
            for (const data_point& p : s.points) {
                const point q = to_svg(p);
                if (q.x >= plot.left - 0.01 && q.x <= plot.right + 0.01 && q.y >= plot.top - 0.01 &&
                    q.y <= plot.bottom + 0.01)
                    svg.circle(q.x, q.y, 3.5, {{"class", "marker"}, {"fill", color}});
            }
        for (const off_scale_point& o : off_scale)
            if (o.series == i) {
                std::string corners;
                for (const point& q : off_scale_triangle(o, plot))
                    corners += fmt::format("{}{},{}", corners.empty() ? "" : " ", svg_number(q.x), svg_number(q.y));
                svg.element("polygon", {{"class", "off-scale"},
                                        {"points", corners},
                                        {"fill", color},
                                        {"data-value", fmt::format("{}", o.value)}});
            }
        const placed_label& l = labels[i];
        if (requests[i].curve.empty()) { // entirely outside a fixed range
            svg.close();
            continue;
        }
        if (l.leader) {
            const point to = leader_end(l, l.anchor);
            svg.line(l.anchor.x, l.anchor.y, to.x, to.y,
                     {{"class", "leader"}, {"stroke", color}, {"stroke-width", 0.75}});
        }
        svg.text(l.left, l.bottom - 0.25 * label_font, s.name,
                 {{"class", "series-label"}, {"font-size", label_font}, {"fill", color}, {"font-weight", "bold"}});
        svg.close();
    }
    for (std::size_t k = 0; k < chart.callouts.size(); ++k) {
        const callout& c = chart.callouts[k];
        const placed_label& l = labels[chart.series.size() + k];
        const point p = to_svg(c.at);
        svg.open("g", {{"class", "callout"}});
        if (requests[chart.series.size() + k].curve.empty()) { // outside a fixed range
            svg.close();
            continue;
        }
        svg.circle(p.x, p.y, callout_radius,
                   {{"class", "callout-ring"}, {"fill", "none"}, {"stroke", "#333"}, {"stroke-width", 1.5}});
        if (l.leader) {
            const point to = leader_end(l, p);
            svg.line(p.x, p.y, to.x, to.y, {{"class", "leader"}, {"stroke", "#333"}, {"stroke-width", 0.75}});
        }
        svg.text(l.left, l.bottom - 0.25 * label_font, c.label,
                 {{"class", "callout-label"}, {"font-size", label_font}, {"fill", "#333"}});
        svg.close();
    }
    svg.close();
    svg.finish();
    std::vector<placed_label> series_labels(labels.begin(),
                                            labels.begin() + static_cast<std::ptrdiff_t>(chart.series.size()));
    return series_labels;
}

} // namespace remat::report
