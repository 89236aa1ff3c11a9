// Crash safety of the parallel HDF5 level, for real: a 2-rank job rewrites its slots durably in a loop and
// both ranks are killed (SIGKILL) after a random delay; a new job with the same
// decomposition then reopens the file (resume) and checks it (parallel_crash_child check): every snapshot
// the log calls done and not being overwritten reads back bit for bit, every snapshot the file calls
// complete holds exactly the bytes of its step, every slot can be written and read again; and
// `remat inspect --verify` (the serial HDF5, an independent reader) accepts the file.
#define BOOST_TEST_MODULE mpi_parallel_crash
#include "command.hpp"

#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

namespace {

std::string mpirun(const std::string& args)
{
    return std::string(REMAT_MPIEXEC) + " -np 2 --oversubscribe " + REMAT_CRASH_CHILD + " " + args;
}

int count_lines(const std::filesystem::path& log, const std::string& word)
{
    std::ifstream in(log);
    std::string what;
    long long slot = 0;
    long long step = 0;
    int n = 0;
    while (in >> what >> slot >> step)
        n += what == word ? 1 : 0;
    return n;
}

} // namespace

BOOST_AUTO_TEST_CASE(a_job_killed_at_random_times_leaves_a_file_that_verifies)
{
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / ("remat_parallel_crash_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir);
    std::mt19937 gen(20261126);
    std::uniform_int_distribution<int> delay_ms(150, 1500);
    int checked = 0;
    int done_writes = 0;
    for (int round = 0; round < 6; ++round) {
        const std::filesystem::path file = dir / ("run" + std::to_string(round) + ".h5");
        const std::filesystem::path log = dir / ("run" + std::to_string(round) + ".log");
        const double seconds = delay_ms(gen) / 1000.0;
        BOOST_TEST_CONTEXT("round " << round << ", killed after " << seconds << " s")
        {
            // Once both ranks have started (their pid files exist; waited for up to a minute), wait, then
            // SIGKILL both ranks; mpirun then ends the job. timeout is a safety net only: the job must have
            // died from the kill.
            const std::string pids = log.string() + ".pid.";
            const remat::test::tool_result killed =
                remat::test::run_command("timeout 60 " + mpirun("write " + file.string() + " " + log.string()) +
                                         " & job=$!; " + "for i in $(seq 3000); do [ -s " + pids + "0 ] && [ -s " +
                                         pids + "1 ] && break; sleep 0.02; done; sleep " + std::to_string(seconds) +
                                         "; kill -KILL $(cat " + pids + "0) $(cat " + pids + "1); wait $job");
            BOOST_TEST_REQUIRE(killed.status != 0, "the writing job was not killed");
            BOOST_TEST_REQUIRE(killed.status != 124, "the safety timeout ended the writing job: " << killed.err);
            if (count_lines(log, "start") == 0)
                continue; // killed before its first write: maybe no file yet, nothing to check
            done_writes += count_lines(log, "done");
            const remat::test::tool_result check =
                remat::test::run_command(mpirun("check " + file.string() + " " + log.string()));
            BOOST_TEST(check.status == 0, check.err);
            const remat::test::tool_result verify =
                remat::test::run_command(std::string(REMAT_TOOL) + " inspect " + file.string() + " --verify");
            BOOST_TEST(verify.status == 0, verify.out << verify.err);
            ++checked;
        }
    }
    BOOST_TEST_MESSAGE(checked << " rounds checked, " << done_writes << " snapshots written before the kills");
    // The kills landed while snapshots were being written: most rounds checked, many writes completed.
    BOOST_TEST(checked >= 4);
    BOOST_TEST(done_writes >= 20);
    std::filesystem::remove_all(dir);
}
