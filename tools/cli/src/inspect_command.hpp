// `remat inspect FILE [--verify] [--format text|json]`: the snapshots of a remat HDF5 snapshot file.
#pragma once

#include <CLI/CLI.hpp>

#include <iosfwd>

namespace remat::cli {

/// Registers the subcommand; its callback writes to `out`. In a build without HDF5 the command exists
/// but says it is unavailable (exit 1).
void add_inspect_command(CLI::App& app, std::ostream& out);

} // namespace remat::cli
