// Running a shell command from a test: its exit status, stdout and stderr.
#pragma once

#include <string>

namespace remat::test {

struct tool_result {
    int status = -1;
    std::string out;
    std::string err;
};

/// A shell command's exit status, stdout and stderr (captured through files in $TMPDIR).
tool_result run_command(const std::string& command);

} // namespace remat::test
