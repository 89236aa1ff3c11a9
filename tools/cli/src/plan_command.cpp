#include "plan_command.hpp"

#include "plan_report.hpp"
#include "plan_request.hpp"
#include "remat/cli/parse.hpp"

#include "remat/report/json.hpp"

#include <memory>
#include <ostream>

namespace remat::cli {

void add_plan_command(CLI::App& app, std::ostream& out)
{
    auto* command = app.add_subcommand("plan", "plan a checkpointing schedule and print its cost or its actions");
    auto request = std::make_shared<plan_request>();
    auto format = std::make_shared<std::string>("text");
    add_plan_options(*command, *request);
    command->add_option("--format", *format, "text, json, or actions (one action per line)")->capture_default_str();
    command->callback([request, format, &out] {
        if (*format != "text" && *format != "json" && *format != "actions")
            throw usage_error("--format: expected text, json or actions, got \"" + *format + "\"");
        const plan_choice choice = choose_plan(*request);
        if (*format == "json")
            report::write_json(out, plan_json(choice));
        else if (*format == "actions")
            write_actions(out, choice.plan);
        else
            write_plan_text(out, choice);
    });
}

} // namespace remat::cli
