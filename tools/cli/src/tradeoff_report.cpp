#include "tradeoff_report.hpp"

#include "remat/cli/parse.hpp"
#include "snapshot_bytes.hpp"

#include "remat/error.hpp"
#include "remat/report/line_chart.hpp"
#include "remat/report/progress.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <ostream>
#include <string>

namespace remat::cli {
namespace {

// A row's snapshot bytes with --state-bytes: its peak slots times them, or, where that passes 64 bits, none (the
// row's counts stand; only its bytes do not fit, and the report says so: a report of T near 2^63 has rows of
// every size).
struct row_bytes {
    bool asked = false;                 // --state-bytes given
    std::optional<std::uint64_t> bytes; // nullopt where asked and past 64 bits
};

row_bytes row_snapshot_bytes(const tradeoff& t, const tradeoff_row& r)
{
    if (!t.setup().state_bytes)
        return {};
    return {.asked = true, .bytes = snapshot_bytes_within_64_bits(r.cost.peak_slots, *t.setup().state_bytes)};
}

// What the text prints for a row's bytes where they do not fit.
constexpr const char* beyond_64_bits = "beyond 64 bits";

nlohmann::ordered_json row_json(const tradeoff& t, const tradeoff_row& r)
{
    nlohmann::ordered_json j;
    j["schedule"] = std::string(schedule_name(r.schedule));
    j["slots"] = r.slots;
    j["peak_slots"] = r.cost.peak_slots;
    if (r.every)
        j["every"] = *r.every;
    j["forward_steps"] = r.cost.forward_steps;
    j["recompute_ratio"] = r.recompute_ratio;
    j["overhead"] = r.overhead;
    if (const row_bytes b = row_snapshot_bytes(t, r); b.bytes)
        j["snapshot_bytes"] = *b.bytes;
    else if (b.asked)
        j["snapshot_bytes_beyond_64_bits"] = true;
    return j;
}

nlohmann::ordered_json omitted_json(const std::vector<omitted_row>& omitted)
{
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const omitted_row& o : omitted)
        list.push_back(
            {{"schedule", std::string(schedule_name(o.schedule))}, {"slots", o.slots}, {"reason", o.reason}});
    return list;
}

// Every schedule has a key: its answer, or null where none reaches the question or the library refused to
// answer it (the reason listed beside, in `not_answered`).
nlohmann::ordered_json answers_json(const tradeoff& t,
                                    const std::vector<std::pair<tradeoff_schedule, std::optional<tradeoff_row>>>& list)
{
    nlohmann::ordered_json j = nlohmann::ordered_json::object();
    for (const tradeoff_schedule schedule : t.schedules()) {
        const auto found = std::find_if(list.begin(), list.end(), [&](const auto& a) { return a.first == schedule; });
        j[std::string(schedule_name(schedule))] =
            found != list.end() && found->second ? row_json(t, *found->second) : nlohmann::ordered_json(nullptr);
    }
    return j;
}

// Asks one inverse question of every schedule; a refusal (a work limit) is reported, not fatal.
template <class Ask>
void ask_each(const tradeoff& t, Ask&& ask, std::vector<std::pair<tradeoff_schedule, std::optional<tradeoff_row>>>& out,
              std::vector<omitted_row>& omitted, slot_t slots)
{
    for (const tradeoff_schedule s : t.schedules()) {
        try {
            out.emplace_back(s, ask(s));
        } catch (const remat::error& e) {
            omitted.push_back({s, slots, e.what()});
        }
    }
}

// With --state-bytes: the bytes, or beyond_64_bits.
std::string bytes_column(const tradeoff& t, const tradeoff_row& r)
{
    const row_bytes b = row_snapshot_bytes(t, r);
    return b.bytes ? format_bytes(*b.bytes) : std::string(beyond_64_bits);
}

std::string bytes_text(const tradeoff& t, const tradeoff_row& r)
{
    return t.setup().state_bytes ? " (" + bytes_column(t, r) + ")" : std::string();
}

std::string answer_text(const tradeoff& t, const tradeoff_row& r)
{
    return fmt::format("{} slots{}, overhead {:.4f}, {} forward steps{}", r.slots, bytes_text(t, r), r.overhead,
                       r.cost.forward_steps, r.every ? fmt::format(", every {} steps", *r.every) : std::string());
}

} // namespace

tradeoff_answers answer(const tradeoff& t, const std::optional<overhead_limit>& max_overhead,
                        std::optional<std::uint64_t> budget, std::ostream& progress_out)
{
    tradeoff_answers a;
    // Shown only once the work has lasted half a second: quick trade-offs print nothing extra.
    const auto start = std::chrono::steady_clock::now();
    std::unique_ptr<report::progress> bar;
    a.rows = t.rows(a.omitted, [&](std::size_t done, std::size_t total) {
        if (!bar && std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > 0.5)
            bar = std::make_unique<report::progress>(
                progress_out, report::progress_options{.label = "tradeoff rows", .total = total});
        if (bar)
            bar->update(done);
    });
    if (bar)
        bar->finish();
    if (max_overhead) {
        a.max_overhead = max_overhead->value();
        ask_each(t, [&](tradeoff_schedule s) { return t.least_slots(s, *max_overhead); }, a.least, a.least_omitted, 0);
    }
    if (budget) {
        a.budget_bytes = budget;
        const std::uint64_t fitting = *budget / *t.setup().state_bytes;
        a.budget_slots = static_cast<slot_t>(std::min<std::uint64_t>(fitting, INT64_MAX));
        ask_each(
            t, [&](tradeoff_schedule s) { return t.within(s, a.budget_slots); }, a.within, a.within_omitted,
            a.budget_slots);
    }
    return a;
}

nlohmann::ordered_json tradeoff_json(const tradeoff& t, const tradeoff_answers& a)
{
    nlohmann::ordered_json j;
    j["steps"] = t.setup().steps;
    j["reverse_cost"] = t.setup().reverse_cost;
    if (t.setup().state_bytes)
        j["state_bytes"] = *t.setup().state_bytes;
    j["store_all_slots"] = t.store_all_slots();
    j["store_all_forward_steps"] = t.baseline_forward_steps();
    j["sqrt_rule"] = {{"every", t.sqrt_every()}, {"slots", t.sqrt_rule().slots}, {"overhead", t.sqrt_rule().overhead}};
    j["one_extra_sweep_slots"] = t.one_extra_sweep_slots();
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const tradeoff_row& r : a.rows)
        rows.push_back(row_json(t, r));
    j["rows"] = rows;
    if (!a.omitted.empty())
        j["omitted_rows"] = omitted_json(a.omitted);
    if (a.max_overhead) {
        j["max_overhead"] = *a.max_overhead;
        j["least_slots"] = answers_json(t, a.least);
        if (!a.least_omitted.empty())
            j["least_slots_not_answered"] = omitted_json(a.least_omitted);
    }
    if (a.budget_bytes) {
        nlohmann::ordered_json w;
        w["budget_bytes"] = *a.budget_bytes;
        w["slots"] = a.budget_slots;
        w["schedules"] = answers_json(t, a.within);
        if (!a.within_omitted.empty())
            w["not_answered"] = omitted_json(a.within_omitted);
        j["within_budget"] = w;
    }
    return j;
}

void write_tradeoff_text(std::ostream& out, const tradeoff& t, const tradeoff_answers& a)
{
    const tradeoff_setup& s = t.setup();
    out << fmt::format("steps          {}\n", s.steps);
    out << fmt::format("reverse cost   {:g} (one adjoint step, in forward steps)\n", s.reverse_cost);
    out << fmt::format("store-all      {} slots, {} forward steps: the baseline of each ratio\n", t.store_all_slots(),
                       t.baseline_forward_steps());
    out << fmt::format("sqrt(T) rule   a snapshot every {} steps: {} slots, overhead {:.4f}\n", t.sqrt_every(),
                       t.sqrt_rule().slots, t.sqrt_rule().overhead);
    out << fmt::format("extra sweep    revolve needs {} slots for one extra forward sweep (at most twice "
                       "store-all's forward steps)\n\n",
                       t.one_extra_sweep_slots());
    const bool bytes = s.state_bytes.has_value();
    out << fmt::format("{:<11} {:>12} {:>8} {:>20} {:>12} {:>10}{}\n", "schedule", "slots", "every", "forward_steps",
                       "recompute", "overhead", bytes ? "  snapshot_bytes" : "");
    for (const tradeoff_row& r : a.rows)
        out << fmt::format("{:<11} {:>12} {:>8} {:>20} {:>11.3f}x {:>10.4f}{}\n", schedule_name(r.schedule), r.slots,
                           r.every ? std::to_string(*r.every) : "-", r.cost.forward_steps, r.recompute_ratio,
                           r.overhead, bytes ? "  " + bytes_column(t, r) : "");
    for (const omitted_row& o : a.omitted)
        out << fmt::format("{:<11} {:>12}  not computed: {}\n", schedule_name(o.schedule), o.slots, o.reason);
    if (a.max_overhead) {
        out << fmt::format("\nfewest slots for an overhead of at most {:g}:\n", *a.max_overhead);
        for (const auto& [schedule, r] : a.least)
            out << fmt::format("  {:<11} {}\n", schedule_name(schedule), r ? answer_text(t, *r) : "none reaches it");
        for (const omitted_row& o : a.least_omitted)
            out << fmt::format("  {:<11} not answered: {}\n", schedule_name(o.schedule), o.reason);
    }
    if (a.budget_bytes) {
        out << fmt::format("\nwithin a budget of {} ({} snapshots of {}):\n", format_bytes(*a.budget_bytes),
                           a.budget_slots, format_bytes(*s.state_bytes));
        for (const auto& [schedule, r] : a.within)
            out << fmt::format("  {:<11} {}\n", schedule_name(schedule), r ? answer_text(t, *r) : "does not fit");
        for (const omitted_row& o : a.within_omitted)
            out << fmt::format("  {:<11} not answered: {}\n", schedule_name(o.schedule), o.reason);
    }
}

void write_tradeoff_svg(std::ostream& out, const tradeoff& t, const tradeoff_answers& a)
{
    report::line_chart chart;
    chart.title = fmt::format("Memory against recomputation: T = {} steps", t.setup().steps);
    chart.subtitle = fmt::format("overhead = predicted time over store-all's ({} slots); one adjoint step costs {:g} "
                                 "forward steps",
                                 t.store_all_slots(), t.setup().reverse_cost);
    chart.x = {.label = "snapshot slots", .kind = report::scale::log};
    // The overheads anyone chooses, linear from 1 to 3 (more where the limit asked for or a schedule's best
    // lies above): a log axis up to 1000x or 10^6x would squeeze them into its bottom tenth. Points above
    // are marked at the top edge, with a note saying how many and how far.
    double top = 3;
    if (a.max_overhead)
        top = std::max(top, std::ceil(*a.max_overhead * 1.2 * 2) / 2);
    for (const tradeoff_schedule schedule : t.schedules()) {
        double best = std::numeric_limits<double>::infinity();
        for (const tradeoff_row& r : a.rows)
            if (r.schedule == schedule)
                best = std::min(best, r.overhead);
        if (std::isfinite(best))
            top = std::max(top, std::ceil(best * 1.2 * 2) / 2);
    }
    chart.y = {.label = "overhead (time over store-all's)", .kind = report::scale::linear, .min = 1.0, .max = top};
    for (const tradeoff_schedule schedule : t.schedules()) {
        report::data_series series{.name = std::string(schedule_name(schedule))};
        for (const tradeoff_row& r : a.rows)
            if (r.schedule == schedule)
                series.points.push_back({static_cast<double>(r.slots), r.overhead});
        series.dashed = schedule == tradeoff_schedule::uniform || schedule == tradeoff_schedule::online;
        if (!series.points.empty())
            chart.series.push_back(std::move(series));
    }
    const tradeoff_row& root = t.sqrt_rule();
    chart.callouts.push_back({.at = {static_cast<double>(root.slots), root.overhead},
                              .label = fmt::format("√T rule: every {} steps, {} slots, {:.2f}×", t.sqrt_every(),
                                                   root.slots, root.overhead)});
    chart.references.push_back(
        {.direction = report::reference_line::vertical,
         .value = std::round(std::sqrt(static_cast<double>(t.setup().steps))),
         .label = fmt::format("√T = {:g}", std::round(std::sqrt(static_cast<double>(t.setup().steps))))});
    if (a.max_overhead)
        chart.references.push_back({.direction = report::reference_line::horizontal,
                                    .value = *a.max_overhead,
                                    .label = fmt::format("max overhead {:g}", *a.max_overhead)});
    (void)report::write_svg(out, chart);
}

} // namespace remat::cli
