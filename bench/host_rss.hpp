// The process's resident set on Linux, for benchmarks that report measured host memory: the current RSS
// (VmRSS), its peak (VmHWM), and resetting the peak to the current RSS (5 written to /proc/self/clear_refs),
// so that the growth of the peak over one phase is that phase's own. Elsewhere every figure is 0.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>

namespace remat::bench {

/// "VmRSS" or "VmHWM" of /proc/self/status in bytes; 0 where unknown.
inline std::uint64_t proc_status_bytes(const std::string& key)
{
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind(key + ":", 0) == 0)
            return std::stoull(line.substr(key.size() + 1)) * 1024; // "VmHWM:    12345 kB"
    return 0;
}

/// Resets VmHWM to VmRSS; false where the kernel does not allow it.
inline bool reset_peak_rss()
{
    std::ofstream out("/proc/self/clear_refs");
    out << "5";
    out.flush();
    return static_cast<bool>(out);
}

} // namespace remat::bench
