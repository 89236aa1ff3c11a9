#include "svg_diagram.hpp"

#include "parse.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <ostream>
#include <string>
#include <unordered_map>
#include <vector>

namespace remat::cli {
namespace {

constexpr double plot_left = 70;
constexpr double plot_top = 70;
constexpr double plot_width = 1000;
constexpr double plot_height = 560;

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

void write_header(std::ostream& out, const plan_choice& choice, const schedule_cost& c, bool summarised)
{
    const double width = plot_left + plot_width + 200;
    const double height = plot_top + plot_height + 60;
    out << fmt::format(R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}">)"
                       "\n",
                       width, height);
    out << fmt::format(R"(<rect width="{}" height="{}" fill="white"/>)"
                       "\n",
                       width, height);
    out << fmt::format(R"(<text x="{}" y="24" font-family="sans-serif" font-size="16">{}: T = {}, {}</text>)"
                       "\n",
                       plot_left, choice.name, c.steps, storage_text(choice));
    out << fmt::format(R"(<text x="{}" y="46" font-family="sans-serif" font-size="13" fill="#444">)"
                       "forward steps {} (store-all {}), reverse steps {}, stores {}, restores {}, peak slots {}{}"
                       "</text>\n",
                       plot_left, c.forward_steps, store_all_forward_steps(c.steps), c.reverse_steps, c.stores,
                       c.restores, c.peak_slots, summarised ? " (summarised: span per pixel column)" : "");
    // Axes and labels.
    out << fmt::format(R"(<g stroke="#999" stroke-width="1"><line x1="{0}" y1="{1}" x2="{0}" y2="{2}"/>)"
                       R"(<line x1="{0}" y1="{2}" x2="{3}" y2="{2}"/></g>)"
                       "\n",
                       plot_left, plot_top, plot_top + plot_height, plot_left + plot_width);
    out << fmt::format(
        R"(<text x="{}" y="{}" font-family="sans-serif" font-size="12">0</text>)"
        R"(<text x="{}" y="{}" font-family="sans-serif" font-size="12">{}</text>)"
        R"svg(<text x="12" y="{}" font-family="sans-serif" font-size="12" transform="rotate(-90 12 {})">step index</text>)svg"
        R"(<text x="{}" y="{}" font-family="sans-serif" font-size="12">work (forward + reverse steps) →</text>)"
        "\n",
        plot_left - 20, plot_top + 4, plot_left - 60, plot_top + plot_height, c.steps, plot_top + plot_height / 2,
        plot_top + plot_height / 2, plot_left + plot_width / 2 - 120, plot_top + plot_height + 30);
    // Legend.
    const double lx = plot_left + plot_width + 20;
    out << fmt::format(
        R"(<g font-family="sans-serif" font-size="12">)"
        R"(<line x1="{0}" y1="{1}" x2="{2}" y2="{1}" stroke="black" stroke-width="2"/><text x="{3}" y="{4}">advance</text>)"
        R"(<line x1="{0}" y1="{5}" x2="{2}" y2="{5}" stroke="#d62728" stroke-width="2"/><text x="{3}" y="{6}">reverse</text>)"
        R"(<line x1="{0}" y1="{7}" x2="{2}" y2="{7}" stroke="#1f77b4" stroke-width="4" opacity="0.5"/><text x="{3}" y="{8}">snapshot held</text>)"
        R"(<circle cx="{9}" cy="{10}" r="3" fill="#1f77b4"/><text x="{3}" y="{11}">store</text>)"
        R"(<circle cx="{9}" cy="{12}" r="3" fill="none" stroke="#2ca02c"/><text x="{3}" y="{13}">restore</text></g>)"
        "\n",
        lx, plot_top + 10, lx + 30, lx + 38, plot_top + 14, plot_top + 30, plot_top + 34, plot_top + 50, plot_top + 54,
        lx + 15, plot_top + 70, plot_top + 74, plot_top + 90, plot_top + 94);
    if (choice.model.levels.size() > 1) // one colour per storage level
        for (std::size_t i = 0; i < choice.model.levels.size(); ++i) {
            const double y = plot_top + 120 + 20 * static_cast<double>(i);
            out << fmt::format(
                R"(<g font-family="sans-serif" font-size="12"><line x1="{0}" y1="{1}" x2="{2}" y2="{1}" stroke="{3}" )"
                R"(stroke-width="4" opacity="0.6"/><text x="{4}" y="{5}">level {6}: {7}</text></g>)"
                "\n",
                lx, y, lx + 30, level_color(static_cast<level_t>(i)), lx + 38, y + 4, i, choice.model.levels[i].name);
        }
}

} // namespace

void write_schedule_svg(std::ostream& out, const plan_choice& choice)
{
    const schedule_cost c = choice.plan.cost();
    if (c.steps > svg_max_steps)
        throw usage_error(
            fmt::format("draw: {} steps is too many to draw (at most {}); plan it instead", c.steps, svg_max_steps));
    const bool summarised = c.steps > svg_detail_steps;
    const mapping map{static_cast<double>(c.forward_steps + c.reverse_steps), static_cast<double>(c.steps)};
    write_header(out, choice, c, summarised);

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
    fmt::memory_buffer buf;
    auto it = std::back_inserter(buf);
    auto flush = [&] {
        out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
        buf.clear();
    };
    for (const action& a : choice.plan) {
        std::visit(
            overloaded{
                [&](const advance& x) {
                    const double end = now + static_cast<double>(x.to - x.from);
                    if (summarised) {
                        // A diagonal: in each pixel column it crosses, the steps it covers there.
                        const double from = static_cast<double>(x.from);
                        for (std::size_t i = column_index(now); i <= column_index(end); ++i) {
                            const double t0 = std::max(now, column_time(i));
                            const double t1 = std::min(end, column_time(i + 1));
                            columns[i].advance_lo = std::min(columns[i].advance_lo, from + (t0 - now));
                            columns[i].advance_hi = std::max(columns[i].advance_hi, from + (t1 - now));
                        }
                    } else {
                        fmt::format_to(
                            it,
                            R"(<line x1="{:.2f}" y1="{:.2f}" x2="{:.2f}" y2="{:.2f}" stroke="black" stroke-width="1.5"/>)"
                            "\n",
                            map.x(now), map.y(static_cast<double>(x.from)), map.x(end),
                            map.y(static_cast<double>(x.to)));
                    }
                    now = end;
                },
                [&](const store& x) {
                    held[key(x.level, x.slot)] = {x.step, now, x.level};
                    if (!summarised)
                        fmt::format_to(it,
                                       R"(<circle cx="{:.2f}" cy="{:.2f}" r="2.5" fill="{}"/>)"
                                       "\n",
                                       map.x(now), map.y(static_cast<double>(x.step)), level_color(x.level));
                },
                [&](const restore& x) {
                    if (!summarised)
                        fmt::format_to(it,
                                       R"(<circle cx="{:.2f}" cy="{:.2f}" r="2.5" fill="none" stroke="#2ca02c"/>)"
                                       "\n",
                                       map.x(now), map.y(static_cast<double>(x.step)));
                },
                [&](const free_slot& x) {
                    const auto found = held.find(key(x.level, x.slot));
                    if (found == held.end())
                        return;
                    const held_snapshot h = found->second;
                    held.erase(found);
                    if (now - h.since >= min_bar)
                        fmt::format_to(
                            it,
                            R"(<line x1="{:.2f}" y1="{:.2f}" x2="{:.2f}" y2="{:.2f}" stroke="{}" stroke-width="4" opacity="0.35"/>)"
                            "\n",
                            map.x(h.since), map.y(static_cast<double>(h.step)), map.x(now),
                            map.y(static_cast<double>(h.step)), level_color(h.level));
                },
                [&](const reverse& x) {
                    const auto k = static_cast<double>(x.step);
                    if (summarised) {
                        column_span& col = columns[column_index(now)];
                        col.reverse_lo = std::min(col.reverse_lo, k);
                        col.reverse_hi = std::max(col.reverse_hi, k + 1);
                    } else {
                        fmt::format_to(
                            it,
                            R"(<line x1="{:.2f}" y1="{:.2f}" x2="{:.2f}" y2="{:.2f}" stroke="#d62728" stroke-width="2"/>)"
                            "\n",
                            map.x(now), map.y(k + 1), map.x(now + 1), map.y(k));
                    }
                    now += 1;
                },
            },
            a);
        if (buf.size() > (1u << 16))
            flush();
    }
    for (std::size_t i = 0; i < columns.size(); ++i) {
        const column_span& col = columns[i];
        const double x = plot_left + static_cast<double>(i) + 0.5;
        if (col.advance_hi >= 0)
            fmt::format_to(
                it,
                R"(<line x1="{0:.1f}" y1="{1:.2f}" x2="{0:.1f}" y2="{2:.2f}" stroke="black" stroke-width="1"/>)"
                "\n",
                x, map.y(col.advance_lo), std::max(map.y(col.advance_hi), map.y(col.advance_lo) + 0.5));
        if (col.reverse_hi >= 0)
            fmt::format_to(
                it,
                R"(<line x1="{0:.1f}" y1="{1:.2f}" x2="{0:.1f}" y2="{2:.2f}" stroke="#d62728" stroke-width="1"/>)"
                "\n",
                x, map.y(col.reverse_lo), std::max(map.y(col.reverse_hi), map.y(col.reverse_lo) + 0.5));
    }
    fmt::format_to(it, "</svg>\n");
    flush();
}

} // namespace remat::cli
