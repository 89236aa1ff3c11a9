#include "tool_runner.hpp"

#include "app.hpp"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <sstream>

namespace remat::test {

tool_result run_tool(std::vector<std::string> args)
{
    args.insert(args.begin(), "remat");
    std::vector<const char*> argv;
    for (const auto& a : args)
        argv.push_back(a.c_str());
    std::ostringstream out, err;
    const int status = cli::run(static_cast<int>(argv.size()), argv.data(), out, err);
    return {status, out.str(), err.str()};
}

nlohmann::json plan_json(std::vector<std::string> args)
{
    args.insert(args.begin(), "plan");
    args.push_back("--format");
    args.push_back("json");
    const tool_result r = run_tool(args);
    BOOST_TEST_REQUIRE(r.status == 0, r.err);
    return nlohmann::json::parse(r.out);
}

void check_usage_error(const std::vector<std::string>& args, const std::string& mentions)
{
    const tool_result r = run_tool(args);
    std::string joined;
    for (const auto& a : args)
        joined += a + " ";
    BOOST_TEST(r.status == 2, joined << "-> " << r.status << " " << r.err);
    BOOST_TEST(r.out.empty(), joined);
    BOOST_TEST(r.err.find(mentions) != std::string::npos, joined << "-> " << r.err);
    BOOST_TEST(std::count(r.err.begin(), r.err.end(), '\n') == 1, joined << "-> " << r.err);
}

} // namespace remat::test
