// remat-stress with GPU slots above RAM (label gpu; skipped without a device): `--small --device-slots 4`
// with every fault, the device level really used (stores and restores), no wrong gradient, the peak RSS
// under the cap, and the report naming the level. The cap is 512 MiB rather than --small's 128: the CUDA
// context alone takes a good part of 128 MiB of host memory (so --steps 800, which keeps store-all above it).
#define BOOST_TEST_MODULE stress_device_gpu
#define BOOST_TEST_NO_MAIN
#include <boost/test/unit_test.hpp>

#include "command.hpp"
#include "scratch_dir.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

BOOST_AUTO_TEST_CASE(small_run_through_gpu_memory_ram_and_disk)
{
    remat::test::scratch_dir dir;
    const std::string command = std::string(REMAT_STRESS_TOOL) +
                                " --small --device-slots 4 --rss-cap 512MiB --steps 800 --format json --dir " +
                                dir.path().string();
    const remat::test::tool_result r = remat::test::run_command(command);
    BOOST_TEST_MESSAGE(r.err);
    BOOST_TEST_REQUIRE(r.status == 0, command << " exited " << r.status << ": " << r.err << r.out);
    const nlohmann::json j = nlohmann::json::parse(r.out);
    BOOST_TEST(j.at("ok").get<bool>());
    BOOST_TEST(j.at("wrong_gradients").get<std::uint64_t>() == 0u);
    BOOST_TEST(j.at("faults_survived").get<std::uint64_t>() == j.at("faults_injected").get<std::uint64_t>());
    BOOST_TEST(j.at("peak_rss_bytes").get<std::uint64_t>() <= j.at("rss_cap_bytes").get<std::uint64_t>());
    BOOST_TEST(j.at("device_level").get<std::string>() == "4 GPU slots above RAM");
    const auto& levels = j.at("levels");
    BOOST_TEST_REQUIRE(levels.size() == 3u);
    BOOST_TEST(levels[0].at("name").get<std::string>() == "device");
    for (const auto& l : levels) {
        BOOST_TEST(l.at("stores").get<std::uint64_t>() > 0u, l.at("name"));
        BOOST_TEST(l.at("restores").get<std::uint64_t>() > 0u, l.at("name"));
        BOOST_TEST(l.at("bytes_written").get<std::uint64_t>() >= l.at("stores").get<std::uint64_t>() << 20);
    }
    BOOST_TEST(std::filesystem::is_empty(dir.path()));
}
