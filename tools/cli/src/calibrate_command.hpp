// `remat calibrate --disk DIR`: what a snapshot costs on this machine's disk level and in host memory.
#pragma once

#include <CLI/CLI.hpp>

#include <iosfwd>

namespace remat::cli {

/// Registers the subcommand; its callback writes to `out`. In a build without HDF5 the command exists
/// but says it is unavailable (exit 1).
void add_calibrate_command(CLI::App& app, std::ostream& out);

} // namespace remat::cli
