// remat/report/output_file.hpp — writing an output file so that a failure never leaves half of it.
//
// Part of remat_report (internal, not installed).
//
//     remat::report::write_file_safely("schedule.svg", [&](std::ostream& out) { write_svg(out, chart); });
#pragma once

#include <filesystem>
#include <functional>
#include <iosfwd>

namespace remat::report {

/// Calls `write` with a stream to the file `path` and completes it, by kind of `path`:
/// - absent, or a regular file: the bytes go to a new file beside it, which then replaces `path` in one
///   rename (an existing file keeps its permission bits); on any failure the new file is removed and
///   `path` is as it was;
/// - a symlink: the same for the file it points to, so the link itself stays (a dangling link is
///   written through, creating its target);
/// - anything else that can be opened for writing (a device such as /dev/null or /dev/stdout, a FIFO):
///   written through, never replaced.
/// Throws remat::argument_error for an empty path, remat::io_error naming `path` as given when it is a
/// directory or cannot be written; exceptions from `write` propagate (after the clean-up).
void write_file_safely(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write);

} // namespace remat::report
