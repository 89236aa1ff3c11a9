// `remat tradeoff`: the memory–recomputation trade-off of every schedule over a range of slot counts,
// and the inverse questions (docs/tradeoff.md).
#pragma once

#include <CLI/CLI.hpp>

#include <iosfwd>

namespace remat::cli {

/// Registers the command; its report goes to `out`, progress of long work to `err`.
void add_tradeoff_command(CLI::App& app, std::ostream& out, std::ostream& err);

} // namespace remat::cli
