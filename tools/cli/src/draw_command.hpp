// `remat draw`: writes a schedule's diagram as SVG.
#pragma once

#include <CLI/CLI.hpp>

#include <iosfwd>

namespace remat::cli {

void add_draw_command(CLI::App& app, std::ostream& out);

} // namespace remat::cli
