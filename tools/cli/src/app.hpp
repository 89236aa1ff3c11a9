// The `remat` command-line tool as a function, so that tests can run it in-process.
#pragma once

#include <iosfwd>

namespace remat::cli {

/// Runs the tool. Returns 0 on success, 2 on bad usage, 1 on a runtime failure; every error is one
/// line on `err`.
int run(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

} // namespace remat::cli
