// `remat plan`: a schedule's cost summary (text or JSON) or its actions, one per line.
#pragma once

#include <CLI/CLI.hpp>

#include <iosfwd>

namespace remat::cli {

/// Registers the subcommand; its callback writes to `out`.
void add_plan_command(CLI::App& app, std::ostream& out);

} // namespace remat::cli
