// remat/report/json.hpp — JSON reports (`--format json`, trainers' report files), written one way.
//
// Part of remat_report (internal, not installed).
//
//     nlohmann::ordered_json j{{"steps", 1000}, {"forward_steps", 2000}};
//     remat::report::write_json(std::cout, j);                 // indented by 2, a final newline
//     remat::report::write_json_file("report.json", j);        // all or nothing (write_file_safely)
#pragma once

#include "remat/report/output_file.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <ostream>

namespace remat::report {

/// Writes `j` indented by two spaces, with a final newline. A string that is not valid UTF-8 (a file
/// name in another encoding) is written with U+FFFD in place of the bad bytes instead of failing.
template <class Json>
void write_json(std::ostream& out, const Json& j)
{
    out << j.dump(2, ' ', false, Json::error_handler_t::replace) << '\n';
}

/// write_json into `path` with write_file_safely (same errors).
template <class Json>
void write_json_file(const std::filesystem::path& path, const Json& j)
{
    write_file_safely(path, [&](std::ostream& out) { write_json(out, j); });
}

} // namespace remat::report
