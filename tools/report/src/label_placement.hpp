// Placing each series' label beside its own curve, clear of the other curves and of every other label
// (internal to line_chart).
#pragma once

#include "remat/report/line_chart.hpp"

#include <span>
#include <vector>

namespace remat::report::detail {

struct box {
    double left = 0, top = 0, right = 0, bottom = 0;
    [[nodiscard]] double width() const noexcept { return right - left; }
    [[nodiscard]] double height() const noexcept { return bottom - top; }
};

/// The box a one-line text of `chars` characters takes at `font_size`: 0.6 em per character (sans-serif
/// digits and letters average 0.5 to 0.6), 0.8 em above the baseline and 0.25 em below.
[[nodiscard]] box text_box(double x, double baseline, std::size_t chars, double font_size, bool anchor_end);

/// Characters of UTF-8 text (code points), for text widths.
[[nodiscard]] std::size_t utf8_length(std::string_view text);

/// Distance between a box and a segment (0 when they touch or cross).
[[nodiscard]] double distance(const box& b, point p, point q);
[[nodiscard]] bool overlap(const box& a, const box& b, double padding);

/// A polyline of a curve that lies inside the plot (a curve leaving the plot and coming back is two).
using piece = std::vector<point>;

struct label_request {
    std::vector<piece> curve; ///< in SVG units, clipped to the plot
    std::size_t chars = 0;
    /// A series' label names its curve: it must be nearer to it than to any other, and other labels treat
    /// the curve as one. A callout's label names a point that may lie on a curve: it only keeps clear of
    /// the curves, and the others treat its point as an obstacle.
    bool names_curve = true;
};

/// The parts of the polyline through `points` inside `clip` (Liang-Barsky on each segment); a single
/// point inside gives one piece of one point.
[[nodiscard]] std::vector<piece> clip_polyline(std::span<const point> points, const box& clip);

/// Chooses, series by series, the point of its curve and the side (above or below, right or left) where
/// its label is farthest from the other curves and `obstacles`, never overlapping another label and
/// never closer to another curve than to its own; a label with no such place goes into the right margin
/// beside its curve's last point, with a leader line. `area` is where labels may go (the plot, and the
/// margin to its right). Returns the boxes in request order (an empty box for a curve with nothing
/// visible); baseline = bottom - 0.25 em.
[[nodiscard]] std::vector<placed_label> place_labels(std::span<const label_request> requests,
                                                     std::span<const piece> obstacles, std::span<const box> taken,
                                                     box plot, box area, double font_size);

} // namespace remat::report::detail
