#include "peak_rss.hpp"

#include <fstream>
#include <string>

namespace remat::stress {
namespace {

std::uint64_t status_kib(const std::string& key)
{
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind(key + ":", 0) == 0)
            return std::stoull(line.substr(key.size() + 1)); // "VmHWM:    12345 kB"
    return 0;
}

} // namespace

std::uint64_t peak_rss_bytes()
{
    return status_kib("VmHWM") * 1024;
}

std::uint64_t current_rss_bytes()
{
    return status_kib("VmRSS") * 1024;
}

bool reset_peak_rss()
{
    std::ofstream out("/proc/self/clear_refs");
    out << "5";
    out.flush();
    return static_cast<bool>(out);
}

} // namespace remat::stress
