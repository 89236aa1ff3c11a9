// examples/neural_ode_spiral as a user runs it (a real process): its JSON report for every schedule and
// store of this build (gradients bit-identical to store-all, equal to central differences, snapshots
// within the slots), its pictures, and its errors: bad options exit 2, failures exit 1 with one line
// naming the problem and no output file left behind.
#define BOOST_TEST_MODULE spiral_example
#include <boost/test/unit_test.hpp>

#include "command.hpp"
#include "scratch_dir.hpp"

#include "remat/schedule/uniform.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

remat::test::tool_result spiral(const std::string& args)
{
    return remat::test::run_command(std::string(REMAT_SPIRAL) + " " + args);
}

// A small run: 200 steps, 4 trajectories, a narrow network, a few updates.
const std::string small = "--iterations 4 --steps 200 --starts 4 --hidden 8 --format json";

std::string read_file(const std::filesystem::path& p)
{
    std::ifstream in(p);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

} // namespace

BOOST_AUTO_TEST_CASE(every_schedule_and_store_gives_the_store_all_gradient)
{
    std::vector<std::string> stores{"host", "device"};
#if REMAT_SPIRAL_HDF5
    stores.push_back("disk");
#endif
    for (const std::string schedule : {"revolve", "uniform", "store-all"})
        for (const std::string& store : stores) {
            const remat::test::scratch_dir dir;
            const std::string what = schedule + " on " + store;
            const auto r = spiral(small + " --slots 30 --schedule " + schedule + " --store " + store +
                                  " --output-dir " + dir.path().string());
            BOOST_TEST_REQUIRE(r.status == 0, what << ": " << r.err);
            const auto j = nlohmann::json::parse(r.out);
            for (const char* key :
                 {"initial_loss", "final_loss", "iterations", "seconds", "forward_steps", "peak_snapshot_bytes",
                  "store_all_bytes", "grad_check_rel_err", "bit_identical_vs_store_all"})
                BOOST_TEST(j.contains(key), what << ": no " << key);
            BOOST_TEST(j["bit_identical_vs_store_all"].get<bool>(), what);
            BOOST_TEST(j["grad_check_rel_err"].get<double>() < 1e-5, what << ": " << j["grad_check_rel_err"]);
            BOOST_TEST(j["iterations"].get<int>() == 4);
            const auto state = j["state_bytes"].get<std::uint64_t>();
            BOOST_TEST(state == 4u * 2u * sizeof(double));
            BOOST_TEST(j["store_all_bytes"].get<std::uint64_t>() == 199u * state);
            const auto peak = j["peak_snapshot_bytes"].get<std::uint64_t>();
            const auto forward = j["forward_steps"].get<std::uint64_t>();
            if (schedule == "store-all") {
                BOOST_TEST(peak == 199u * state, what);
                BOOST_TEST(forward == 199u, what);
            } else {
                BOOST_TEST(peak <= 30u * state, what);
                BOOST_TEST(forward > 199u, what << ": checkpointing with 30 slots recomputes");
            }
            for (const char* svg : {"spiral_loss.svg", "spiral_trajectories.svg"}) {
                const std::string text = read_file(dir / svg);
                BOOST_TEST(text.find("<svg") != std::string::npos, what << ": " << svg);
            }
            BOOST_TEST(read_file(dir / "spiral_trajectories.svg").find("learned") != std::string::npos);
            BOOST_TEST(!std::filesystem::exists(dir / "spiral_snapshots.h5"), "the scratch snapshot file stays");
        }
}

BOOST_AUTO_TEST_CASE(a_budget_chooses_the_slots)
{
    // 4 trajectories x 2 doubles = 64 bytes a state: 640 bytes hold 10 snapshots.
    const auto r = spiral(small + " --budget 640 --output-dir " + remat::test::scratch_dir().path().string());
    BOOST_TEST_REQUIRE(r.status == 0, r.err);
    const auto j = nlohmann::json::parse(r.out);
    BOOST_TEST(j["slots"].get<int>() == 10);
    BOOST_TEST(j["peak_snapshot_bytes"].get<std::uint64_t>() <= 640u);
}

BOOST_AUTO_TEST_CASE(bad_options_exit_2_naming_them)
{
    for (const auto& [args, text] : std::vector<std::pair<std::string, std::string>>{
             {"--schedule sometimes", "--schedule"},
             {"--store tape", "--store"},
             {"--method rk45", "--method"},
             {"--device gpu", "--device"},
             {"--budget lots", "--budget"},
             {"--slots 0", "--slots"},
             {"--slots 4 --budget 1MiB", "--budget"},
             {"--hidden 8,0", "--hidden"},
             {"--starts 300 --steps 200", "--starts 300"},
             {"--iterations -3", "--iterations"},
             {"--seed -1", "--seed"},
             // NaN passed CLI11's PositiveNumber; infinity was named by a range of 309 digits.
             {"--learning-rate nan", "--learning-rate: wants a finite number > 0, got nan"},
             {"--learning-rate inf", "--learning-rate: wants a finite number > 0, got inf"},
             {"--horizon nan", "--horizon: wants a finite number >= 0, got nan"},
             {"--horizon -1", "--horizon: wants a finite number >= 0, got -1"},
             // More slots than the 199 states a gradient keeps: refused, no longer capped in silence.
             {"--steps 200 --slots 500", "--slots 500"},
             {"--slots 2000", "--slots 2000"},
         }) {
        const auto r = spiral(args);
        BOOST_TEST(r.status == 2, args << ": exit " << r.status);
        BOOST_TEST(r.err.find(text) != std::string::npos, args << ": " << r.err);
        BOOST_TEST(r.out.empty(), args);
    }
}

namespace {

// The fewest slots uniform checkpointing runs in, by brute force over every spacing (not uniform::min_slots).
remat::slot_t fewest_uniform_slots(remat::step_t steps)
{
    remat::slot_t fewest = steps;
    for (remat::step_t k = 1; k <= steps; ++k)
        fewest = std::min(fewest, remat::uniform(steps, k).cost().peak_slots);
    return fewest;
}

} // namespace

BOOST_AUTO_TEST_CASE(uniform_without_slots_takes_the_fewest_it_can_run_in)
{
    // The README offers --schedule uniform as a plain option: with the default 50 slots it used to fail
    // ("needs at least 61 slots" for 1000 steps). Here 200 steps (the default's failure needs 1000).
    const remat::test::scratch_dir dir;
    const auto r = spiral(small + " --schedule uniform --output-dir " + dir.path().string());
    BOOST_TEST_REQUIRE(r.status == 0, r.err);
    const auto j = nlohmann::json::parse(r.out);
    BOOST_TEST(j["slots"].get<remat::slot_t>() == std::max<remat::slot_t>(50, fewest_uniform_slots(200)));
    BOOST_TEST(j["bit_identical_vs_store_all"].get<bool>());
    // At the default 1000 steps the 50 slots are too few: it takes the fewest that serve.
    const remat::slot_t fewest = fewest_uniform_slots(1000);
    BOOST_TEST_REQUIRE(fewest > 50);
    const auto full = spiral("--iterations 1 --starts 4 --hidden 8 --format json --schedule uniform --output-dir " +
                             dir.path().string());
    BOOST_TEST_REQUIRE(full.status == 0, full.err);
    BOOST_TEST(nlohmann::json::parse(full.out)["slots"].get<remat::slot_t>() == fewest);
    // Fewer than that is refused up front, saying how many it needs.
    const auto few = spiral("--schedule uniform --slots 32");
    BOOST_TEST(few.status == 2, few.err);
    BOOST_TEST(few.err.find("--slots 32: --schedule uniform needs at least " + std::to_string(fewest)) !=
                   std::string::npos,
               few.err);
    BOOST_TEST(few.out.empty());
}

BOOST_AUTO_TEST_CASE(failures_exit_1_with_the_cause_and_leave_no_output)
{
    {
        const remat::test::scratch_dir dir;
        const auto r = spiral(small + " --budget 40 --output-dir " + dir.path().string()); // a state is 64 bytes
        BOOST_TEST(r.status == 1, r.err);
        BOOST_TEST(r.err.find("budget") != std::string::npos, r.err);
        BOOST_TEST(!std::filesystem::exists(dir / "spiral_loss.svg"));
    }
    {
        // store-all keeps all 199 states (12,736 bytes): a budget that holds fewer is refused, not exceeded
        // in silence (it ran with 199 slots and reported a peak of 20x the budget); one that holds them runs.
        const remat::test::scratch_dir dir;
        const auto r = spiral(small + " --schedule store-all --budget 640 --output-dir " + dir.path().string());
        BOOST_TEST(r.status == 1, r.err);
        BOOST_TEST(r.err.find("--schedule store-all keeps 199 states of 64 bytes (12736 bytes); a budget of 640 "
                              "bytes holds 10") != std::string::npos,
                   r.err);
        BOOST_TEST(!std::filesystem::exists(dir / "spiral_loss.svg"));
        const auto fits = spiral(small + " --schedule store-all --budget 12736 --output-dir " + dir.path().string());
        BOOST_TEST_REQUIRE(fits.status == 0, fits.err);
        BOOST_TEST(nlohmann::json::parse(fits.out)["peak_snapshot_bytes"].get<std::uint64_t>() == 12736u);
    }
    {
        // Absurd steps blow the parameters up: the states overflow, the run stops naming where.
        const remat::test::scratch_dir dir;
        const auto r = spiral(small + " --learning-rate 1e200 --output-dir " + dir.path().string());
        BOOST_TEST(r.status == 1, r.err);
        BOOST_TEST(r.err.find("not finite") != std::string::npos, r.err);
        BOOST_TEST(!std::filesystem::exists(dir / "spiral_loss.svg"));
        BOOST_TEST(!std::filesystem::exists(dir / "spiral_trajectories.svg"));
    }
    {
        // A loss that explodes but stays finite (Adam at 100x the default rate and more) used to exit 0; the
        // report still comes, then one line saying the training diverged, and exit 1. How far it explodes at a
        // given rate is chaotic, and differs between CPUs (rate 3: 1.25 to ~9e4 on one, 7x on an AMD EPYC whose
        // rates 10 and 20 went 2e6x and 4e7x): each run is judged by its own report, and one must diverge.
        int diverged = 0;
        for (const char* rate : {"3", "10", "20"}) {
            const remat::test::scratch_dir dir;
            const auto r = spiral(std::string("--iterations 30 --steps 200 --starts 4 --hidden 8 --format json "
                                              "--learning-rate ") +
                                  rate + " --output-dir " + dir.path().string());
            BOOST_TEST_INFO("learning rate " << rate);
            const auto j = nlohmann::json::parse(r.out);
            const bool exploded = j["final_loss"].get<double>() > 100 * j["initial_loss"].get<double>();
            BOOST_TEST(j["diverged"].get<bool>() == exploded);
            BOOST_TEST(r.status == (exploded ? 1 : 0), r.err);
            BOOST_TEST((r.err.find("neural_ode_spiral: training diverged: the loss went from") != std::string::npos) ==
                           exploded,
                       r.err);
            diverged += exploded ? 1 : 0;
        }
        BOOST_TEST(diverged >= 1);
    }
    {
        // An output directory that cannot be made (a file stands in its way).
        const remat::test::scratch_dir dir;
        std::ofstream(dir / "taken") << "x";
        const auto r = spiral(small + " --output-dir " + (dir / "taken").string());
        BOOST_TEST(r.status == 1, r.err);
        BOOST_TEST(r.err.find("taken") != std::string::npos, r.err);
    }
}

BOOST_AUTO_TEST_CASE(cuda_runs_or_says_why_not)
{
    const remat::test::scratch_dir dir;
    const auto r = spiral(small + " --device cuda --store device --output-dir " + dir.path().string());
#if REMAT_SPIRAL_CUDA
    if (r.status == 0) { // a GPU is there: the same guarantees as on the CPU
        const auto j = nlohmann::json::parse(r.out);
        BOOST_TEST(j["bit_identical_vs_store_all"].get<bool>());
        BOOST_TEST(j["grad_check_rel_err"].get<double>() < 1e-5);
    } else {
        BOOST_TEST(r.status == 1, r.err);
        BOOST_TEST(r.err.find("CUDA device") != std::string::npos, r.err);
    }
#else
    BOOST_TEST(r.status == 2, r.err);
    BOOST_TEST(r.err.find("no CUDA back end") != std::string::npos, r.err);
#endif
}
