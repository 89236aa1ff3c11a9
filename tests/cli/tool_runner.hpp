// Running the remat tool from tests: in-process (remat::cli::run, for its outputs) and as a real
// process (for exit codes and what reaches stdout and stderr).
#pragma once

#include "command.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace remat::test {

/// `remat <args...>` through remat::cli::run, with its output captured.
tool_result run_tool(std::vector<std::string> args);

/// `remat plan <args...> --format json`, which must succeed; its JSON.
nlohmann::json plan_json(std::vector<std::string> args);

/// Asserts that `remat <args...>` exits 2 with nothing on stdout and one line on stderr that contains
/// `mentions` (the option or text at fault).
void check_usage_error(const std::vector<std::string>& args, const std::string& mentions);

} // namespace remat::test
