#include "draw_command.hpp"

#include "plan_request.hpp"
#include "svg_diagram.hpp"

#include "remat/report/output_file.hpp"

#include <fmt/format.h>

#include <memory>
#include <ostream>

namespace remat::cli {

void add_draw_command(CLI::App& app, std::ostream& out)
{
    auto* command = app.add_subcommand("draw", "draw a schedule's diagram (step index against work) as SVG");
    auto request = std::make_shared<plan_request>();
    auto path = std::make_shared<std::string>();
    add_plan_options(*command, *request);
    command->add_option("-o,--output", *path, "the SVG file to write")->required();
    command->callback([request, path, &out] {
        const plan_choice choice = choose_plan(*request);
        report::write_file_safely(*path, [&](std::ostream& file) { write_schedule_svg(file, choice); });
        out << fmt::format("wrote {}\n", *path);
    });
}

} // namespace remat::cli
