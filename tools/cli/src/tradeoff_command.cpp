#include "tradeoff_command.hpp"

#include "level_option.hpp"
#include "remat/cli/parse.hpp"
#include "tradeoff.hpp"
#include "tradeoff_report.hpp"

#include "remat/error.hpp"
#include "remat/report/json.hpp"
#include "remat/report/output_file.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace remat::cli {
namespace {

// Any 64-bit T: uniform's best spacing takes milliseconds, and online counts share a budget of about a quarter
// of a second (tradeoff::online_work_budget), beyond which their rows are listed as not computed.
constexpr std::int64_t tradeoff_max_steps = std::numeric_limits<std::int64_t>::max();

struct tradeoff_request {
    std::string steps;
    std::string reverse_cost;
    std::string state_bytes;
    std::vector<std::string> levels;
    std::string max_overhead;
    std::string budget;
    std::string format = "text";
    std::string output;
};

// An overhead limit: a finite number > 0 (below 1 nothing reaches it, which the answer says), read exactly.
overhead_limit parse_overhead(const std::string& text)
{
    std::size_t used = 0;
    double value = 0;
    try {
        value = std::stod(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used == 0 || used != text.size() || !std::isfinite(value) || value <= 0)
        throw usage_error("--max-overhead: expected a number > 0 such as 1.5, got \"" + text + "\"");
    return {text, value};
}

tradeoff_setup setup_from(const tradeoff_request& r)
{
    tradeoff_setup s;
    s.steps = parse_count("--steps", r.steps, 1, tradeoff_max_steps);
    if (!r.reverse_cost.empty())
        s.reverse_cost = parse_cost("--reverse-cost", r.reverse_cost, false);
    if (!r.state_bytes.empty()) {
        s.state_bytes = parse_bytes("--state-bytes", r.state_bytes);
        if (*s.state_bytes == 0)
            throw usage_error("--state-bytes: expected at least 1 byte, got \"" + r.state_bytes + "\"");
    }
    if (!r.levels.empty())
        s.levels = parse_levels(r.levels, s.state_bytes);
    return s;
}

void write_report(std::ostream& out, const std::string& format, const tradeoff& t, const tradeoff_answers& a)
{
    if (format == "json")
        report::write_json(out, tradeoff_json(t, a));
    else if (format == "svg")
        write_tradeoff_svg(out, t, a);
    else
        write_tradeoff_text(out, t, a);
}

} // namespace

void add_tradeoff_command(CLI::App& app, std::ostream& out, std::ostream& err)
{
    auto* command = app.add_subcommand(
        "tradeoff", "memory against recomputation: every schedule's cost over a range of slot counts, the fewest "
                    "slots under an overhead, the overhead a budget reaches");
    auto request = std::make_shared<tradeoff_request>();
    command->add_option("--steps,-T", request->steps, "number of steps T of the loop (1 to 2^63-1; 1e6 form allowed)")
        ->required();
    command->add_option("--reverse-cost", request->reverse_cost,
                        "cost of one adjoint step in forward steps (default 0; 2 is typical of reverse-mode AD)");
    command->add_option("--state-bytes", request->state_bytes,
                        "bytes of one snapshot, e.g. 64MiB: rows show snapshot_bytes (needed by --budget)");
    command
        ->add_option("--level", request->levels,
                     "adds multilevel rows: levels NAME:SLOTS[:WRITE:READ] as for plan, fastest first; each row "
                     "puts its slot count on the first level")
        ->expected(1)
        ->take_all();
    command->add_option("--max-overhead", request->max_overhead,
                        "prints the fewest slots with which each schedule stays at or under this overhead, e.g. 1.5");
    command->add_option("--budget", request->budget,
                        "prints the overhead each schedule reaches within this snapshot memory (with --state-bytes)");
    command->add_option("--format", request->format, "text, json or svg")->capture_default_str();
    auto* output = command->add_option("-o,--output", request->output, "write the report to this file (safely)");
    command->callback([request, output, &out, &err] {
        if (request->format != "text" && request->format != "json" && request->format != "svg")
            throw usage_error("--format: expected text, json or svg, got \"" + request->format + "\"");
        const tradeoff_setup setup = setup_from(*request);
        std::optional<overhead_limit> max_overhead;
        if (!request->max_overhead.empty())
            max_overhead = parse_overhead(request->max_overhead);
        std::optional<std::uint64_t> budget;
        if (!request->budget.empty()) {
            if (!setup.state_bytes)
                throw usage_error("--budget needs --state-bytes (the bytes of one snapshot)");
            budget = parse_bytes("--budget", request->budget);
            if (*budget / *setup.state_bytes == 0)
                throw usage_error(fmt::format("--budget {} holds no snapshot of --state-bytes {}", request->budget,
                                              request->state_bytes));
        }
        const tradeoff t = [&] {
            try {
                return tradeoff(setup);
            } catch (const argument_error& e) {
                throw usage_error(std::string("--level: ") + e.what());
            }
        }();
        const tradeoff_answers a = answer(t, max_overhead, budget, err);
        if (output->count() > 0) {
            report::write_file_safely(request->output,
                                      [&](std::ostream& file) { write_report(file, request->format, t, a); });
            out << fmt::format("wrote {}\n", request->output);
        } else {
            write_report(out, request->format, t, a);
        }
    });
}

} // namespace remat::cli
