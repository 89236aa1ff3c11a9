#include "command.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sys/wait.h>
#include <unistd.h>

namespace remat::test {
namespace {

std::string slurp(const std::filesystem::path& p)
{
    std::ifstream in(p);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

} // namespace

tool_result run_command(const std::string& command)
{
    static int serial = 0;
    const auto dir = std::filesystem::temp_directory_path();
    const std::string tag = std::to_string(::getpid()) + "-" + std::to_string(++serial);
    const auto out = dir / ("remat-test-out-" + tag);
    const auto err = dir / ("remat-test-err-" + tag);
    const int raw = std::system((command + " >" + out.string() + " 2>" + err.string()).c_str());
    tool_result r{WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, slurp(out), slurp(err)};
    std::filesystem::remove(out);
    std::filesystem::remove(err);
    return r;
}

} // namespace remat::test
