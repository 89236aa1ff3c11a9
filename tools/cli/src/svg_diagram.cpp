#include "svg_diagram.hpp"

#include "remat/cli/parse.hpp"

#include "remat/report/svg.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

namespace remat::cli {
namespace {

using report::svg_document;

constexpr double plot_left = 70;
constexpr double plot_top = 70;
constexpr double plot_width = 1000;
constexpr double plot_height = 560;
constexpr const char* reverse_color = "#d62728";
constexpr const char* restore_color = "#2ca02c";
constexpr const char* taped_color = "#9467bd"; // a step run keeping its tape

struct mapping {
    double units; // total work: forward steps + reverse steps
    double steps;
    [[nodiscard]] double x(double t) const { return plot_left + plot_width * t / units; }
    [[nodiscard]] double y(double k) const { return plot_top + plot_height * k / steps; }
};

struct held_snapshot {
    step_t step;
    double since;
    level_t level;
};

// Snapshots are coloured by storage level (level 0 the classic blue).
const char* level_color(level_t level)
{
    static constexpr const char* palette[] = {"#1f77b4", "#ff7f0e", "#9467bd", "#8c564b",
                                              "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"};
    return palette[static_cast<std::size_t>(level) % (sizeof palette / sizeof palette[0])];
}

// "60 slots", or for several levels "host:3, disk:inf".
std::string storage_text(const plan_choice& choice)
{
    if (choice.chain)
        return fmt::format("budget {}, peak {}", format_bytes(choice.chain->budget_bytes()),
                           format_bytes(choice.chain->peak_bytes()));
    if (choice.model.levels.size() <= 1)
        return fmt::format("{} slots", choice.slots);
    std::string text;
    for (const level_spec& l : choice.model.levels) {
        if (!text.empty())
            text += ", ";
        text +=
            l.slots == level_spec::unlimited ? fmt::format("{}:inf", l.name) : fmt::format("{}:{}", l.name, l.slots);
    }
    return text;
}

// One pixel column of the summary: the span of steps touched by advances and by reverses.
struct column_span {
    double advance_lo = std::numeric_limits<double>::max(), advance_hi = -1;
    double reverse_lo = std::numeric_limits<double>::max(), reverse_hi = -1;
};

void write_header(svg_document& svg, const plan_choice& choice, const schedule_cost& c, bool summarised)
{
    svg.open("g", {{"font-family", "sans-serif"}, {"font-size", 12}});
    svg.text(plot_left, 24, fmt::format("{}: T = {}, {}", choice.name, c.steps, storage_text(choice)),
             {{"font-size", 16}});
    svg.text(plot_left, 46,
             fmt::format("forward steps {} (store-all {}), reverse steps {}, stores {}, restores {}, peak slots {}{}",
                         c.forward_steps, store_all_forward_steps(c.steps), c.reverse_steps, c.stores, c.restores,
                         c.peak_slots, summarised ? " (summarised: span per pixel column)" : ""),
             {{"font-size", 13}, {"fill", "#444"}});
    // Axes and labels.
    svg.line(plot_left, plot_top, plot_left, plot_top + plot_height, {{"stroke", "#999"}});
    svg.line(plot_left, plot_top + plot_height, plot_left + plot_width, plot_top + plot_height, {{"stroke", "#999"}});
    svg.text(plot_left - 20, plot_top + 4, "0");
    svg.text(plot_left - 60, plot_top + plot_height, std::to_string(c.steps));
    const double middle = plot_top + plot_height / 2;
    svg.text(12, middle, "step index", {{"transform", fmt::format("rotate(-90 12 {})", report::svg_number(middle))}});
    svg.text(plot_left + plot_width / 2 - 120, plot_top + plot_height + 30,
             choice.chain ? "time (forward and adjoint costs; each step as wide as it costs) →"
                          : "work (forward + reverse steps) →");
    // Legend: a diagram of several kinds of marks, not curves to label.
    const double lx = plot_left + plot_width + 20;
    auto legend_line = [&](double y, const char* color, double width, const char* name, double opacity = 1) {
        svg.line(lx, y, lx + 30, y, {{"stroke", color}, {"stroke-width", width}, {"opacity", opacity}});
        svg.text(lx + 38, y + 4, name);
    };
    legend_line(plot_top + 10, "black", 2, "advance");
    legend_line(plot_top + 30, reverse_color, 2, "reverse");
    if (c.taped_steps > 0) // plans that keep steps' tapes (taped, checkpoint-sequential)
        legend_line(plot_top + 110, taped_color, 2.5, "taped advance");
    legend_line(plot_top + 50, level_color(0), 4, "snapshot held", 0.5);
    svg.circle(lx + 15, plot_top + 70, 3, {{"fill", level_color(0)}});
    svg.text(lx + 38, plot_top + 74, "store");
    svg.circle(lx + 15, plot_top + 90, 3, {{"fill", "none"}, {"stroke", restore_color}});
    svg.text(lx + 38, plot_top + 94, "restore");
    if (choice.model.levels.size() > 1) // one colour per storage level
        for (std::size_t i = 0; i < choice.model.levels.size(); ++i) {
            const double y = plot_top + 120 + 20 * static_cast<double>(i);
            svg.line(lx, y, lx + 30, y,
                     {{"stroke", level_color(static_cast<level_t>(i))}, {"stroke-width", 4}, {"opacity", 0.6}});
            svg.text(lx + 38, y + 4, fmt::format("level {}: {}", i, choice.model.levels[i].name));
        }
    svg.close();
}

} // namespace

void write_schedule_svg(std::ostream& out, const plan_choice& choice)
{
    const schedule_cost c = choice.plan.cost();
    if (c.steps > svg_max_steps)
        throw usage_error(
            fmt::format("draw: {} steps is too many to draw (at most {}); plan it instead", c.steps, svg_max_steps));
    const bool summarised = c.steps > svg_detail_steps;
    // A chain's steps take their own time (f_k forward, b_k adjoint); every other schedule's take one unit.
    const chain_model* costs = choice.chain ? &choice.chain->model() : nullptr;
    std::vector<double> before(costs ? static_cast<std::size_t>(c.steps) + 1 : 0, 0.0); // forward time of steps < k
    for (std::size_t k = 0; k + 1 < before.size(); ++k)
        before[k + 1] = before[k] + costs->steps[k].forward;
    const auto advance_time = [&](step_t from, step_t to) {
        return costs ? before[static_cast<std::size_t>(to)] - before[static_cast<std::size_t>(from)]
                     : static_cast<double>(to - from);
    };
    const auto reverse_time = [&](step_t k) { return costs ? costs->steps[static_cast<std::size_t>(k)].adjoint : 1.0; };
    const double total =
        costs ? std::max(c.predicted_cost, 1e-300) : static_cast<double>(c.forward_steps + c.reverse_steps);
    const mapping map{total, static_cast<double>(c.steps)};
    svg_document svg(out, plot_left + plot_width + 200, plot_top + plot_height + 60);
    write_header(svg, choice, c, summarised);

    // Snapshots are keyed by (level, slot); bars shorter than a pixel are left out of summaries.
    std::unordered_map<std::uint64_t, held_snapshot> held;
    auto key = [](level_t level, slot_t slot) {
        return (static_cast<std::uint64_t>(level) << 48) ^ static_cast<std::uint64_t>(slot);
    };
    std::vector<column_span> columns(summarised ? static_cast<std::size_t>(plot_width) + 1 : 0);
    auto column_index = [&](double t) {
        const auto i = static_cast<std::size_t>(plot_width * t / map.units);
        return std::min(i, columns.size() - 1);
    };
    auto column_time = [&](std::size_t i) { return static_cast<double>(i) * map.units / plot_width; };
    const double min_bar = summarised ? map.units / plot_width : 0;
    double now = 0;
    svg.open("g", {{"class", "schedule"}});
    for (const action& a : choice.plan) {
        std::visit(overloaded{
                       [&](const advance& x) {
                           const double end = now + advance_time(x.from, x.to);
                           if (summarised) {
                               // A diagonal: in each pixel column it crosses, the steps it covers there (a
                               // chain's steps are taken as equally long within one advance, for the summary).
                               const double from = static_cast<double>(x.from);
                               const double speed = end > now ? static_cast<double>(x.to - x.from) / (end - now) : 0;
                               for (std::size_t i = column_index(now); i <= column_index(end); ++i) {
                                   const double t0 = std::max(now, column_time(i));
                                   const double t1 = std::min(end, column_time(i + 1));
                                   columns[i].advance_lo = std::min(columns[i].advance_lo, from + (t0 - now) * speed);
                                   columns[i].advance_hi = std::max(columns[i].advance_hi, from + (t1 - now) * speed);
                               }
                           } else if (costs) { // one segment per step, as wide as the step costs
                               double t = now;
                               for (step_t k = x.from; k < x.to; ++k) {
                                   const double next = t + advance_time(k, k + 1);
                                   svg.line(map.x(t), map.y(static_cast<double>(k)), map.x(next),
                                            map.y(static_cast<double>(k + 1)),
                                            {{"class", "advance"}, {"stroke", "black"}, {"stroke-width", 1.5}});
                                   t = next;
                               }
                           } else {
                               svg.line(map.x(now), map.y(static_cast<double>(x.from)), map.x(end),
                                        map.y(static_cast<double>(x.to)),
                                        {{"class", x.taped ? "advance taped" : "advance"},
                                         {"stroke", x.taped ? taped_color : "black"},
                                         {"stroke-width", x.taped ? 2.5 : 1.5}});
                           }
                           now = end;
                       },
                       [&](const store& x) {
                           held[key(x.level, x.slot)] = {x.step, now, x.level};
                           if (!summarised)
                               svg.circle(map.x(now), map.y(static_cast<double>(x.step)), 2.5,
                                          {{"class", "store"}, {"fill", level_color(x.level)}});
                       },
                       [&](const restore& x) {
                           if (!summarised)
                               svg.circle(map.x(now), map.y(static_cast<double>(x.step)), 2.5,
                                          {{"class", "restore"}, {"fill", "none"}, {"stroke", restore_color}});
                       },
                       [&](const free_slot& x) {
                           const auto found = held.find(key(x.level, x.slot));
                           if (found == held.end())
                               return;
                           const held_snapshot h = found->second;
                           held.erase(found);
                           if (now - h.since >= min_bar)
                               svg.line(map.x(h.since), map.y(static_cast<double>(h.step)), map.x(now),
                                        map.y(static_cast<double>(h.step)),
                                        {{"class", "held"},
                                         {"stroke", level_color(h.level)},
                                         {"stroke-width", 4},
                                         {"opacity", 0.35}});
                       },
                       [&](const reverse& x) {
                           const auto k = static_cast<double>(x.step);
                           if (summarised) {
                               column_span& col = columns[column_index(now)];
                               col.reverse_lo = std::min(col.reverse_lo, k);
                               col.reverse_hi = std::max(col.reverse_hi, k + 1);
                           } else {
                               svg.line(map.x(now), map.y(k + 1), map.x(now + reverse_time(x.step)), map.y(k),
                                        {{"class", "reverse"}, {"stroke", reverse_color}, {"stroke-width", 2}});
                           }
                           now += reverse_time(x.step);
                       },
                   },
                   a);
    }
    for (std::size_t i = 0; i < columns.size(); ++i) {
        const column_span& col = columns[i];
        const double x = plot_left + static_cast<double>(i) + 0.5;
        if (col.advance_hi >= 0)
            svg.line(x, map.y(col.advance_lo), x, std::max(map.y(col.advance_hi), map.y(col.advance_lo) + 0.5),
                     {{"class", "advance"}, {"stroke", "black"}, {"stroke-width", 1}});
        if (col.reverse_hi >= 0)
            svg.line(x, map.y(col.reverse_lo), x, std::max(map.y(col.reverse_hi), map.y(col.reverse_lo) + 0.5),
                     {{"class", "reverse"}, {"stroke", reverse_color}, {"stroke-width", 1}});
    }
    svg.close();
    svg.finish();
}

} // namespace remat::cli
