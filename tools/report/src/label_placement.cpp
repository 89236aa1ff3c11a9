#include "label_placement.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <utility>

namespace remat::report::detail {
namespace {

constexpr double gap = 4;            // between an anchor point and its label's corner
constexpr double far_gap = 10;       // ... when the near places are taken
constexpr double sample_spacing = 6; // candidate anchors along a curve, in SVG units
constexpr std::size_t max_anchors = 600;
constexpr double enough_clearance = 24;
constexpr double label_padding = 2;

double point_distance(point a, point b)
{
    const double dx = a.x - b.x, dy = a.y - b.y;
    return std::sqrt(dx * dx + dy * dy); // not hypot: no overflow to guard against, and 5x faster
}

double distance_to_segment(point p, point a, point b)
{
    const double dx = b.x - a.x, dy = b.y - a.y;
    const double length2 = dx * dx + dy * dy;
    if (length2 == 0)
        return point_distance(p, a);
    const double t = std::clamp(((p.x - a.x) * dx + (p.y - a.y) * dy) / length2, 0.0, 1.0);
    return point_distance(p, {a.x + t * dx, a.y + t * dy});
}

bool contains(const box& b, point p)
{
    return p.x >= b.left && p.x <= b.right && p.y >= b.top && p.y <= b.bottom;
}

// Whether segments pq and rs cross (including touching).
bool segments_cross(point p, point q, point r, point s)
{
    auto orient = [](point a, point b, point c) { return (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x); };
    const double d1 = orient(r, s, p), d2 = orient(r, s, q), d3 = orient(p, q, r), d4 = orient(p, q, s);
    return ((d1 > 0) != (d2 > 0) || d1 == 0 || d2 == 0) && ((d3 > 0) != (d4 > 0) || d3 == 0 || d4 == 0) &&
           std::min(p.x, q.x) <= std::max(r.x, s.x) && std::min(r.x, s.x) <= std::max(p.x, q.x) &&
           std::min(p.y, q.y) <= std::max(r.y, s.y) && std::min(r.y, s.y) <= std::max(p.y, q.y);
}

bool inside(const box& inner, const box& outer)
{
    return inner.left >= outer.left && inner.right <= outer.right && inner.top >= outer.top &&
           inner.bottom <= outer.bottom;
}

// Candidate anchors: points spaced evenly along the curve's pieces (every sample_spacing units, fewer on
// very long curves), their ends included.
std::vector<point> anchors(std::span<const piece> curve)
{
    double length = 0;
    for (const piece& p : curve)
        for (std::size_t i = 0; i + 1 < p.size(); ++i)
            length += point_distance(p[i], p[i + 1]);
    const double spacing = std::max(sample_spacing, length / static_cast<double>(max_anchors));
    std::vector<point> result;
    for (const piece& p : curve) {
        if (p.empty())
            continue;
        result.push_back(p.front());
        double until_next = spacing;
        for (std::size_t i = 0; i + 1 < p.size(); ++i) {
            const point a = p[i], b = p[i + 1];
            const double segment = point_distance(a, b);
            double at = until_next;
            for (; at < segment; at += spacing) {
                const double t = at / segment;
                result.push_back({a.x + t * (b.x - a.x), a.y + t * (b.y - a.y)});
            }
            until_next = at - segment;
        }
        if (p.size() > 1)
            result.push_back(p.back());
    }
    return result;
}

// Liang-Barsky: the part of segment ab inside `clip`, if any.
std::optional<std::pair<point, point>> clip_segment(point a, point b, const box& clip)
{
    double t0 = 0, t1 = 1;
    const double dx = b.x - a.x, dy = b.y - a.y;
    const double p[] = {-dx, dx, -dy, dy};
    const double q[] = {a.x - clip.left, clip.right - a.x, a.y - clip.top, clip.bottom - a.y};
    for (int i = 0; i < 4; ++i) {
        if (p[i] == 0) {
            if (q[i] < 0)
                return std::nullopt;
            continue;
        }
        const double t = q[i] / p[i];
        if (p[i] < 0)
            t0 = std::max(t0, t);
        else
            t1 = std::min(t1, t);
        if (t0 > t1)
            return std::nullopt;
    }
    return std::pair{point{a.x + t0 * dx, a.y + t0 * dy}, point{a.x + t1 * dx, a.y + t1 * dy}};
}

} // namespace

box text_box(double x, double baseline, std::size_t chars, double font_size, bool anchor_end)
{
    const double width = 0.6 * font_size * static_cast<double>(chars);
    const double left = anchor_end ? x - width : x;
    return {left, baseline - 0.8 * font_size, left + width, baseline + 0.25 * font_size};
}

std::size_t utf8_length(std::string_view text)
{
    return static_cast<std::size_t>(
        std::count_if(text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

double distance(const box& b, point p, point q)
{
    if (contains(b, p) || contains(b, q))
        return 0;
    const point corners[] = {{b.left, b.top}, {b.right, b.top}, {b.right, b.bottom}, {b.left, b.bottom}};
    double best = std::numeric_limits<double>::infinity();
    for (int i = 0; i < 4; ++i) {
        const point r = corners[i], s = corners[(i + 1) % 4];
        if (segments_cross(p, q, r, s))
            return 0;
        best =
            std::min({best, distance_to_segment(r, p, q), distance_to_segment(p, r, s), distance_to_segment(q, r, s)});
    }
    return best;
}

std::vector<piece> clip_polyline(std::span<const point> points, const box& clip)
{
    std::vector<piece> pieces;
    if (points.size() == 1) {
        if (contains(clip, points[0]))
            pieces.push_back({points[0]});
        return pieces;
    }
    bool continues = false; // the last piece ends at points[i], which is inside
    for (std::size_t i = 0; i + 1 < points.size(); ++i) {
        auto part = clip_segment(points[i], points[i + 1], clip);
        if (!part) {
            continues = false;
            continue;
        }
        // Points inside are kept exactly (the clip's arithmetic may round them).
        if (contains(clip, points[i]))
            part->first = points[i];
        const bool ends_inside = contains(clip, points[i + 1]);
        if (ends_inside)
            part->second = points[i + 1];
        if (continues)
            pieces.back().push_back(part->second);
        else
            pieces.push_back({part->first, part->second});
        continues = ends_inside;
    }
    return pieces;
}

bool overlap(const box& a, const box& b, double padding)
{
    return a.left < b.right + padding && b.left < a.right + padding && a.top < b.bottom + padding &&
           b.top < a.bottom + padding;
}

namespace {

// The curves' segments bucketed by grid cell, so that a candidate label looks only at the segments near
// it (a loss curve may have 10^5 points).
class segment_grid {
public:
    struct owned_piece {
        std::size_t owner; // the label request it belongs to, or obstacle_owner
        bool curve;        // a series' curve (not a reference line or a callout's point)
        std::span<const point> points;
    };
    static constexpr std::size_t obstacle_owner = std::numeric_limits<std::size_t>::max();

    segment_grid(const box& extent, std::vector<owned_piece> curves) : extent_(extent), curves_(std::move(curves))
    {
        columns_ = static_cast<std::size_t>(std::ceil(extent.width() / cell)) + 1;
        rows_ = static_cast<std::size_t>(std::ceil(extent.height() / cell)) + 1;
        cells_.resize(columns_ * rows_);
        for (std::size_t c = 0; c < curves_.size(); ++c) {
            const std::span<const point> curve = curves_[c].points;
            // A single point is a segment of length 0.
            for (std::size_t k = 0; k == 0 ? !curve.empty() : k + 1 < curve.size(); ++k) {
                const point a = curve[k], b = k + 1 < curve.size() ? curve[k + 1] : a;
                const box bounds{std::min(a.x, b.x), std::min(a.y, b.y), std::max(a.x, b.x), std::max(a.y, b.y)};
                for (std::size_t cell_index : cells_of(bounds))
                    cells_[cell_index].push_back({c, k});
            }
        }
    }

    struct clearance {
        double own;       // to the label's own curve
        double curves;    // to the nearest other curve
        double obstacles; // to the nearest obstacle (reference lines)
    };

    /// The distances from `b` to curve `own`, to the nearest other curve and to the nearest obstacle, each
    /// capped at `radius`.
    [[nodiscard]] clearance distances(const box& b, std::size_t own, double radius) const
    {
        clearance c{radius, radius, radius};
        for (const std::size_t cell_index :
             cells_of({b.left - radius, b.top - radius, b.right + radius, b.bottom + radius}))
            for (const entry& e : cells_[cell_index]) {
                const std::span<const point> curve = curves_[e.curve].points;
                const point p = curve[e.segment];
                const point q = e.segment + 1 < curve.size() ? curve[e.segment + 1] : p;
                const std::size_t owner = curves_[e.curve].owner;
                double& target = owner == own ? c.own : curves_[e.curve].curve ? c.curves : c.obstacles;
                // The segment's bounding box is never nearer than the segment: skip what cannot be closer.
                const double gap_x = std::max({b.left - std::max(p.x, q.x), 0.0, std::min(p.x, q.x) - b.right});
                const double gap_y = std::max({b.top - std::max(p.y, q.y), 0.0, std::min(p.y, q.y) - b.bottom});
                if (gap_x >= target || gap_y >= target)
                    continue;
                target = std::min(target, distance(b, p, q));
            }
        return c;
    }

private:
    struct entry {
        std::size_t curve;
        std::size_t segment;
    };
    static constexpr double cell = 16;

    // Indices of the cells a box covers (none when it misses the grid).
    [[nodiscard]] std::vector<std::size_t> cells_of(const box& b) const
    {
        std::vector<std::size_t> result;
        if (b.right < extent_.left || b.left > extent_.right || b.bottom < extent_.top || b.top > extent_.bottom)
            return result;
        auto index = [&](double v, double origin, std::size_t count) {
            return static_cast<std::size_t>(std::clamp((v - origin) / cell, 0.0, static_cast<double>(count - 1)));
        };
        for (std::size_t row = index(b.top, extent_.top, rows_); row <= index(b.bottom, extent_.top, rows_); ++row)
            for (std::size_t col = index(b.left, extent_.left, columns_); col <= index(b.right, extent_.left, columns_);
                 ++col)
                result.push_back(row * columns_ + col);
        return result;
    }

    box extent_;
    std::vector<owned_piece> curves_;
    std::size_t columns_ = 0, rows_ = 0;
    std::vector<std::vector<entry>> cells_;
};

// The box of `width` x `height` inside `area` nearest to `anchor` (scanned every 2 units) that overlaps no
// label and, preferably, touches no curve or obstacle.
template <class FreeOfLabels>
std::optional<box> nearest_free_box(const segment_grid& grid, const box& area, double width, double height,
                                    point anchor, const FreeOfLabels& free_of_labels)
{
    constexpr double step = 2;
    std::optional<box> clear, free;
    double clear_distance = std::numeric_limits<double>::infinity(), free_distance = clear_distance;
    for (double top = area.top; top + height <= area.bottom; top += step)
        for (double left = area.left; left + width <= area.right; left += step) {
            const box b{left, top, left + width, top + height};
            const double d =
                point_distance(anchor, {std::clamp(anchor.x, b.left, b.right), std::clamp(anchor.y, b.top, b.bottom)});
            if (d >= clear_distance || !free_of_labels(b))
                continue;
            if (d < free_distance) {
                free = b;
                free_distance = d;
            }
            const auto c = grid.distances(b, segment_grid::obstacle_owner, 1.5);
            if (c.own >= 1.5 && c.curves >= 1.5 && c.obstacles >= 1.5) {
                clear = b;
                clear_distance = d;
            }
        }
    return clear ? clear : free;
}

} // namespace

std::vector<placed_label> place_labels(std::span<const label_request> requests, std::span<const piece> obstacles,
                                       std::span<const box> taken, box plot, box area, double font_size)
{
    std::vector<segment_grid::owned_piece> curves;
    for (std::size_t i = 0; i < requests.size(); ++i)
        for (const piece& p : requests[i].curve)
            curves.push_back({i, requests[i].names_curve, p});
    for (const piece& o : obstacles)
        curves.push_back({segment_grid::obstacle_owner, false, o});
    const segment_grid grid(area, std::move(curves));

    std::vector<box> placed(taken.begin(), taken.end());
    std::vector<placed_label> result(requests.size());
    std::vector<std::size_t> margin; // requests that found no place beside their curve
    auto free_of_labels = [&](const box& b) {
        return std::none_of(placed.begin(), placed.end(),
                            [&](const box& other) { return overlap(b, other, label_padding); });
    };
    const double height = 1.05 * font_size;
    for (std::size_t i = 0; i < requests.size(); ++i) {
        if (requests[i].curve.empty())
            continue; // nothing visible to name
        const double width = 0.6 * font_size * static_cast<double>(requests[i].chars);
        double best_score = -1;
        box best_box;
        point best_anchor;
        // Beside a point of the curve on either side, close by; where nothing close is free, a little farther
        // (clear of a callout's ring).
        for (const double g : {gap, far_gap}) {
            if (best_score >= 0)
                break;
            for (const point p : anchors(requests[i].curve)) {
                const box options[] = {
                    {p.x + g, p.y - g - height, p.x + g + width, p.y - g},                  // above right
                    {p.x + g, p.y + g, p.x + g + width, p.y + g + height},                  // below right
                    {p.x + g + 4, p.y - height / 2, p.x + g + 4 + width, p.y + height / 2}, // right
                    {p.x - g - width, p.y - g - height, p.x - g, p.y - g},                  // above left
                    {p.x - g - width, p.y + g, p.x - g, p.y + g + height},                  // below left
                };
                for (const box& b : options) {
                    if (!inside(b, area) || !free_of_labels(b))
                        continue;
                    const auto c = grid.distances(b, i, enough_clearance);
                    if (c.own < 1.5 || c.obstacles < 1.5 || c.curves < 1.5)
                        continue; // the label would sit on its own curve, a reference line or another curve
                    if (requests[i].names_curve && c.curves < c.own + 3)
                        continue; // nearer another curve than its own: it would name the wrong one
                    // Clear of the others first; among clear places, the right end of the curve.
                    const double score = std::min(c.curves, c.obstacles) + 4 * (p.x - plot.left) / plot.width();
                    if (score > best_score) {
                        best_score = score;
                        best_box = b;
                        best_anchor = p;
                    }
                }
            }
        }
        if (best_score < 0) {
            margin.push_back(i);
            continue;
        }
        placed.push_back(best_box);
        result[i] = {best_box.left, best_box.top, best_box.right, best_box.bottom, best_anchor, false};
    }
    // The rest beside the plot's right edge, at the height of their curve's last visible point, moved
    // up or down to the nearest free place.
    for (const std::size_t i : margin) {
        const label_request& request = requests[i];
        // The visible point farthest right (the curve's end when x grows along it).
        point end{plot.right, plot.top};
        bool found = false;
        for (const piece& p : request.curve)
            for (const point q : p)
                if (!found || q.x >= end.x) {
                    end = q;
                    found = true;
                }
        const double width = 0.6 * font_size * static_cast<double>(request.chars);
        const double left = plot.right + 8;
        const box start{left, end.y - height / 2, left + width, end.y + height / 2};
        std::optional<box> chosen;
        for (double shift = 0; shift < area.height() && !chosen; shift += 1) {
            const box down{left, start.top + shift, left + width, start.bottom + shift};
            const box up{left, start.top - shift, left + width, start.bottom - shift};
            if (inside(down, area) && free_of_labels(down))
                chosen = down;
            else if (inside(up, area) && free_of_labels(up))
                chosen = up;
        }
        // Too wide for the margin, or the margin is full: the free place in the area nearest to the point,
        // clear of every curve and obstacle where there is one, else clear of the labels only.
        if (!chosen)
            chosen = nearest_free_box(grid, area, width, height, end, free_of_labels);
        if (!chosen)
            chosen = start; // nowhere at all: the chart is too small for its labels
        placed.push_back(*chosen);
        result[i] = {chosen->left, chosen->top, chosen->right, chosen->bottom, end, true};
    }
    return result;
}

} // namespace remat::report::detail
