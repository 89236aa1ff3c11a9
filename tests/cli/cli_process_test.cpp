// The installed-style binary itself: exit codes and the one-line error contract, through a real
// process (stdout and stderr captured separately).
#define BOOST_TEST_MODULE cli_process
#include <boost/test/unit_test.hpp>

#include "tool_runner.hpp"

#include <algorithm>
#include <string>

namespace {

using result = remat::test::tool_result;

result run_tool(const std::string& args)
{
    return remat::test::run_command(std::string(REMAT_TOOL) + " " + args);
}

} // namespace

BOOST_AUTO_TEST_CASE(success_exits_0)
{
    const result r = run_tool("plan --steps 10 --slots 3 --format json");
    BOOST_TEST(r.status == 0);
    BOOST_TEST(r.out.find("\"forward_steps\": 15") != std::string::npos, r.out);
    BOOST_TEST(r.err.empty());
    BOOST_TEST(run_tool("--help").status == 0);
    BOOST_TEST(run_tool("--version").out.find("remat") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(bad_usage_exits_2_with_one_line)
{
    for (const char* args : {"plan --steps 0 --slots 3", "plan --steps abc --slots 3", "plan --steps 10 --slots 0",
                             "plan --steps 99999999999999999999 --slots 2", "plan --steps 10 --slots 3 --format xml",
                             "plan --steps 10 --slots 3 --schedule nope", "plan --slots 3", "", "plan --steps"}) {
        const result r = run_tool(args);
        BOOST_TEST(r.status == 2, args << " -> " << r.status);
        BOOST_TEST(r.out.empty(), args);
        BOOST_TEST(std::count(r.err.begin(), r.err.end(), '\n') == 1, args << " -> " << r.err);
        BOOST_TEST(r.err.rfind("remat: ", 0) == 0u, r.err);
    }
}

BOOST_AUTO_TEST_CASE(runtime_failure_exits_1)
{
    const result r = run_tool("draw --steps 10 --slots 3 -o /nonexistent-dir/d.svg");
    BOOST_TEST(r.status == 1);
    BOOST_TEST(std::count(r.err.begin(), r.err.end(), '\n') == 1, r.err);
}

// Output that cannot be written (issue 37: `remat plan ... > /dev/full` exited 1 saying nothing): exit 1
// and one line saying why.
BOOST_AUTO_TEST_CASE(output_that_cannot_be_written_exits_1_with_one_line)
{
    for (const char* args : {"plan --steps 10 --slots 3", "plan --steps 1000 --slots 10 --format json", "--help"}) {
        // The braces give the tool its own stdout; the runner's capture applies to the group.
        const result r = remat::test::run_command(std::string("{ ") + REMAT_TOOL + " " + args + " >/dev/full; }");
        BOOST_TEST(r.status == 1, args << " -> " << r.status);
        BOOST_TEST(std::count(r.err.begin(), r.err.end(), '\n') == 1, args << " -> " << r.err);
        BOOST_TEST(r.err.rfind("remat: cannot write the output to standard output", 0) == 0u, r.err);
        BOOST_TEST(r.err.find("No space left on device") != std::string::npos, r.err);
    }
}
