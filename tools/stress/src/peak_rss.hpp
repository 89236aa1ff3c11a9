// The process's peak resident set size (VmHWM), and resetting it so that a phase can be measured alone.
#pragma once

#include <cstdint>

namespace remat::stress {

/// Peak RSS in bytes since the start or the last reset (Linux /proc/self/status VmHWM); 0 when unknown.
std::uint64_t peak_rss_bytes();
/// Current RSS in bytes (VmRSS); 0 when unknown.
std::uint64_t current_rss_bytes();
/// Resets the peak to the current RSS (writes 5 to /proc/self/clear_refs); false where not allowed.
bool reset_peak_rss();

} // namespace remat::stress
