// --help for the example and benchmark programs that parse their own command line: the usage on stdout and
// exit 0, before anything else runs (no file created, no MPI or CUDA started). Programs on CLI11 get the
// same from CLI11. tests/programs checks every program of the build.
#pragma once

#include <cstdio>
#include <string_view>

namespace remat::examples {

/// True, after printing `usage` (which starts "usage: NAME ...") on stdout, when an argument is --help or
/// -h; the caller then returns 0.
///
///     if (remat::examples::answered_help(argc, argv, "usage: burgers_budget [steps] [points] [percent]\n"))
///         return 0;
inline bool answered_help(int argc, char** argv, std::string_view usage)
{
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "--help" || a == "-h") {
            std::fwrite(usage.data(), 1, usage.size(), stdout);
            return std::fflush(stdout) == 0;
        }
    }
    return false;
}

} // namespace remat::examples
