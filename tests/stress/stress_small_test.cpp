// remat-stress --small --format json, as CI runs it: every fault injected and survived, no wrong gradient,
// the peak RSS under the cap, the disk level really used, and a resumed run that saved forward steps.
// The tool's own checks compare gradients between two schedules; this test checks that the report says
// what the run must have done, and that the files it made are gone.
#define BOOST_TEST_MODULE stress_small
#include <boost/test/unit_test.hpp>

#include "command.hpp"
#include "scratch_dir.hpp"

#include <nlohmann/json.hpp>

#if REMAT_STRESS_DEVICE_BUILT
#include "remat/cuda/device_missing.hpp"
#endif

#include <filesystem>
#include <set>
#include <string>

#ifndef REMAT_STRESS_TOOL
#error "REMAT_STRESS_TOOL must name the remat-stress executable"
#endif
#ifndef REMAT_STRESS_EXTRA_ARGS
#define REMAT_STRESS_EXTRA_ARGS ""
#endif

BOOST_AUTO_TEST_CASE(small_run_with_faults)
{
    remat::test::scratch_dir dir;
    const std::string command = std::string(REMAT_STRESS_TOOL) + " --small --format json --dir " + dir.path().string() +
                                " " + REMAT_STRESS_EXTRA_ARGS;
    const remat::test::tool_result r = remat::test::run_command(command);
    BOOST_TEST_MESSAGE(r.err);
    BOOST_TEST_REQUIRE(r.status == 0, command << " exited " << r.status << ": " << r.err << r.out);
    const nlohmann::json j = nlohmann::json::parse(r.out);
    BOOST_TEST(j.at("ok").get<bool>());
    BOOST_TEST(j.at("transfers").get<std::uint64_t>() >= j.at("transfers_goal").get<std::uint64_t>());
    BOOST_TEST(j.at("wrong_gradients").get<std::uint64_t>() == 0u);
    BOOST_TEST(j.at("peak_rss_bytes").get<std::uint64_t>() > 0u);
    // Under a sanitizer the tool says it cannot hold its resident set (mostly the sanitizer's) to the cap.
    if (j.at("rss_cap_checked").get<bool>())
        BOOST_TEST(j.at("peak_rss_bytes").get<std::uint64_t>() <= j.at("rss_cap_bytes").get<std::uint64_t>());
    else
        BOOST_TEST_MESSAGE("peak RSS not held against the cap in a sanitizer build");

    // Every kind of fault, each injected and survived, each in a round of the smallest state size (whose plan
    // uses the disk most; the full run's fault rounds once all fell on its largest size and missed the disk).
    std::set<std::string> kinds;
    for (const auto& f : j.at("faults")) {
        kinds.insert(f.at("kind").get<std::string>());
        BOOST_TEST(f.at("state_bytes").get<std::uint64_t>() == 1u << 20, f.at("kind"));
        BOOST_TEST(f.at("injected").get<bool>(), f.at("kind") << ": " << f.at("outcome"));
        BOOST_TEST(f.at("survived").get<bool>(), f.at("kind") << ": " << f.at("problem"));
    }
    const std::set<std::string> expected{"disk_full",    "corrupt_snapshot", "read_eio",     "kill_forward",
                                         "kill_reverse", "user_exception",   "out_of_memory"};
    BOOST_TEST((kinds == expected));
    BOOST_TEST(j.at("faults_injected").get<std::uint64_t>() == expected.size());
    BOOST_TEST(j.at("faults_survived").get<std::uint64_t>() == expected.size());
    BOOST_TEST(j.at("resume_forward_steps_saved").get<std::uint64_t>() > 0u);

    // Both levels carried snapshots, and the bytes add up to the transfers' sizes.
    const auto& levels = j.at("levels");
    BOOST_TEST_REQUIRE(levels.size() == 2u);
    for (const auto& l : levels) {
        BOOST_TEST(l.at("stores").get<std::uint64_t>() > 0u, l.at("name"));
        BOOST_TEST(l.at("restores").get<std::uint64_t>() > 0u, l.at("name"));
        BOOST_TEST(l.at("bytes_written").get<std::uint64_t>() >= l.at("stores").get<std::uint64_t>() << 20);
        // Throughput is what the level's own calls moved over their time (behind the asynchronous engine a
        // restore served from staging moves nothing, and a snapshot freed before its write is never written).
        BOOST_TEST(l.at("level_bytes_written").get<std::uint64_t>() > 0u, l.at("name"));
        BOOST_TEST(l.at("level_bytes_written").get<std::uint64_t>() <= l.at("bytes_written").get<std::uint64_t>());
        BOOST_TEST(l.at("level_bytes_read").get<std::uint64_t>() > 0u, l.at("name"));
        BOOST_TEST(l.at("write_vs_calibrated").get<double>() > 0, l.at("name"));
        BOOST_TEST(l.at("read_vs_calibrated").get<double>() > 0, l.at("name"));
    }
    // The disk is held against calibrate's store transfers timed again between the rounds.
    std::uint64_t samples = 0;
    for (const auto& size : j.at("state_sizes")) {
        const auto n = size.at("during_run_samples").get<std::uint64_t>();
        samples += n;
        if (n > 0) {
            BOOST_TEST(size.at("during_run_write_bytes_per_s").get<double>() > 0);
            BOOST_TEST(size.at("during_run_read_bytes_per_s").get<double>() > 0);
        }
    }
    BOOST_TEST(samples > 0u);

    // Nothing left behind in the directory it was given.
    BOOST_TEST(std::filesystem::is_empty(dir.path()));
}

BOOST_AUTO_TEST_CASE(bad_usage_names_the_value)
{
    const remat::test::tool_result r =
        remat::test::run_command(std::string(REMAT_STRESS_TOOL) + " --state-bytes 1000x --format json");
    BOOST_TEST(r.status == 2);
    BOOST_TEST(r.err.find("1000x") != std::string::npos, r.err);
    const remat::test::tool_result cap =
        remat::test::run_command(std::string(REMAT_STRESS_TOOL) + " --small --rss-cap 8MiB --dir /tmp");
    BOOST_TEST(cap.status == 2);
    BOOST_TEST(cap.err.find("8.00 MiB") != std::string::npos, cap.err);
}

// GPU slots where there is no GPU (or no remat::cuda): refused before anything runs, naming why. With a
// device, stress_device_gpu_test runs them.
BOOST_AUTO_TEST_CASE(device_slots_without_a_device_are_refused)
{
#if REMAT_STRESS_DEVICE_BUILT
    if (remat::cuda::device_missing().empty()) {
        BOOST_TEST_MESSAGE("a CUDA device is present: stress_device_gpu_test covers --device-slots");
        return;
    }
    const char* expected = "no CUDA device";
#else
    const char* expected = "this build has no device level";
#endif
    const remat::test::tool_result r =
        remat::test::run_command(std::string(REMAT_STRESS_TOOL) + " --small --device-slots 2 --dir /tmp");
    BOOST_TEST(r.status == 2);
    BOOST_TEST(r.err.find("--device-slots 2") != std::string::npos, r.err);
    BOOST_TEST(r.err.find(expected) != std::string::npos, r.err);
    BOOST_TEST(r.out.empty(), r.out);
}
