// Writing an output file all or nothing: into a temporary beside it, renamed when complete.
#pragma once

#include <functional>
#include <iosfwd>
#include <string>

namespace remat::cli {

/// Calls `write` with a stream to a temporary file beside `path`, then renames it to `path`.
/// On any failure the temporary is removed, `path` is untouched, and remat::io_error names the path.
void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write);

} // namespace remat::cli
