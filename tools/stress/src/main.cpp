// remat-stress: millions of snapshot transfers through host RAM and an HDF5 file (and GPU memory with
// --device-slots) under a host-memory cap, with the faults a long run meets injected along the way; every
// gradient checked bit for bit against another schedule's. See docs/stress.md.
//
//     remat-stress --small --format json          # the CI version: about a minute, every fault once
//     remat-stress --dir /scratch                  # the full run: >= 10^6 transfers
#include "faults.hpp"
#include "peak_rss.hpp"
#include "stress_run.hpp"

#include "remat/cli/parse.hpp"

#include "remat/detail/median_seconds.hpp"
#include "remat/error.hpp"
#include "remat/hdf5/calibrate.hpp"
#include "remat/report/json.hpp"
#include "remat/report/progress.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <malloc.h>
#include <unistd.h>

namespace {

using namespace remat;
using namespace remat::stress;
constexpr std::uint64_t mib = std::uint64_t{1} << 20;

// Under AddressSanitizer or ThreadSanitizer the resident set is mostly the sanitizer's own (shadow memory,
// quarantined frees): the peak is still reported, but not held against the cap.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool rss_is_ours = false;
#else
constexpr bool rss_is_ours = true;
#endif

// The full run's state sizes, one per round in turn: mostly 1 MiB, which makes transfers fastest, and every
// eighth round a large state, which moves the most bytes per transfer.
constexpr const char* full_run_sizes =
    "1MiB,1MiB,1MiB,1MiB,1MiB,1MiB,1MiB,16MiB,1MiB,1MiB,1MiB,1MiB,1MiB,1MiB,1MiB,64MiB";

struct settings {
    std::vector<std::uint64_t> state_bytes;
    step_t steps = 0; // per round, for 1 MiB states (fewer for larger ones)
    std::uint64_t transfers = 0;
    std::uint64_t rss_cap = 0;
    slot_t host_slots = 8;
    slot_t device_slots = 0; // GPU slots above RAM (0: none)
    double disk_cost = 4;    // forward steps per disk transfer in the plan; 0: calibrate's figures
    std::filesystem::path dir;
    bool faults = true;
    std::uint64_t fault_every = 0;
    int calibrate_repeats = 3;
    double max_seconds = 0; // 0: no limit
    bool keep = false;
    std::string format = "text";
};

// What one level did over the whole run, and what `remat calibrate` says it should do.
struct level_total {
    std::string name;
    std::uint64_t stores = 0, restores = 0, bytes_written = 0, bytes_read = 0; // as the run handed them over
    std::uint64_t level_bytes_written = 0, level_bytes_read = 0;               // what the level's own calls moved
    double write_seconds = 0, read_seconds = 0;                                // the time those calls took
    double calibrated_write_seconds = 0, calibrated_read_seconds = 0;          // the same bytes at calibrate's rates
};

struct size_plan {
    step_t steps = 0;
    slot_t host_slots = 0;
    slot_t reference_slots = 0;
    double write_cost = 1, read_cost = 1;
    disk_calibration calibration;
    // calibrate's store transfers, timed again after every round of this size: the disk as the run found it
    store_transfer_samples during_run;
    std::uint64_t disk_bytes_written = 0, disk_bytes_read = 0; // what the disk level moved in those rounds
    double step_seconds = 0;
    double device_seconds = 0; // one device-level transfer, when there is that level
};

double seconds_since(std::chrono::steady_clock::time_point t)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// Seconds of one forward step of the model at this size (median of 5).
double time_step(std::size_t bytes)
{
    const reaction_diffusion m = model_for(bytes);
    field x = m.initial(1), scratch;
    return detail::median_seconds(5, [&](int) { m.step(x, scratch); });
}

// The RAM the run needs besides its slots: the state, the adjoint and their scratch copies (5 states),
// the disk level's staging buffers, the HDF5 store's transfer pieces, and a margin for the allocator.
std::uint64_t working_bytes(std::uint64_t state, std::size_t staging)
{
    return (5 + staging) * state + 3 * std::min<std::uint64_t>(state, 4 * mib) + 16 * mib;
}

nlohmann::ordered_json level_json(const level_total& l)
{
    auto rate = [](std::uint64_t bytes, double s) { return s > 0 ? static_cast<double>(bytes) / s : 0.0; };
    auto ratio = [](double expected, double actual) { return actual > 0 ? expected / actual : 0.0; };
    return {{"name", l.name},
            {"stores", l.stores},
            {"restores", l.restores},
            {"bytes_written", l.bytes_written},
            {"bytes_read", l.bytes_read},
            {"level_bytes_written", l.level_bytes_written},
            {"level_bytes_read", l.level_bytes_read},
            {"write_seconds", l.write_seconds},
            {"read_seconds", l.read_seconds},
            {"write_bytes_per_s", rate(l.level_bytes_written, l.write_seconds)},
            {"read_bytes_per_s", rate(l.level_bytes_read, l.read_seconds)},
            {"write_vs_calibrated", ratio(l.calibrated_write_seconds, l.write_seconds)},
            {"read_vs_calibrated", ratio(l.calibrated_read_seconds, l.read_seconds)}};
}

// What the report says of the device level. Without device slots the CUDA runtime is asked only here, after
// the run and its RSS measurements: once initialised, it may hold host memory of its own.
std::string device_level_text(slot_t device_slots)
{
    if (device_slots > 0)
        return std::to_string(device_slots) + " GPU slots above RAM";
    const std::string missing = device_level_missing();
    return "none (--device-slots 0" + (missing.empty() ? std::string(")") : "; " + missing + ")");
}

int run_stress(const settings& opt, std::ostream& out, std::ostream& err)
{
    const auto start = std::chrono::steady_clock::now();
    std::filesystem::create_directories(opt.dir);
    const std::filesystem::path work = opt.dir / ("remat-stress-" + std::to_string(::getpid()));
    std::filesystem::create_directories(work);
    const std::filesystem::path file = work / "snapshots.h5";
    constexpr std::size_t staging = 4;

    // Per state size: the disk's cost per snapshot measured as `remat calibrate` does, in forward steps of
    // this model, and the RAM slots that fit under the cap.
    std::map<std::uint64_t, size_plan> plans;
    for (const std::uint64_t bytes : opt.state_bytes) {
        size_plan p;
        p.steps = std::max<step_t>(
            32, static_cast<step_t>(static_cast<double>(opt.steps) * mib / static_cast<double>(bytes)));
        p.calibration = calibrate_disk(work, bytes, opt.calibrate_repeats);
        p.step_seconds = std::max(1e-6, time_step(bytes));
        p.write_cost = std::max(0.01, p.calibration.write_seconds / p.step_seconds);
        p.read_cost = std::max(0.01, p.calibration.read_seconds / p.step_seconds);
        if (opt.disk_cost > 0)
            p.write_cost = p.read_cost = opt.disk_cost;
        if (opt.device_slots > 0)
            p.device_seconds = device_transfer_seconds(bytes);
        plans[bytes] = p;
    }
    reset_peak_rss();
    // RAM for slots: the cap less what the process holds now and the working set of the largest state.
    const std::uint64_t baseline = current_rss_bytes();
    const std::uint64_t largest = *std::max_element(opt.state_bytes.begin(), opt.state_bytes.end());
    const std::uint64_t fixed = baseline + working_bytes(largest, staging);
    if (fixed + 2 * largest > opt.rss_cap)
        throw argument_error("--rss-cap " + cli::format_bytes(opt.rss_cap) + " cannot hold two RAM slots of " +
                             cli::format_bytes(largest) + " states beside the " + cli::format_bytes(fixed) +
                             " the run needs anyway");
    const std::uint64_t slot_budget = opt.rss_cap - fixed;
    for (auto& [bytes, p] : plans) {
        p.host_slots = static_cast<slot_t>(
            std::min<std::uint64_t>(slot_budget / bytes, static_cast<std::uint64_t>(opt.host_slots)));
        p.reference_slots =
            static_cast<slot_t>(std::min<std::uint64_t>(slot_budget / bytes, static_cast<std::uint64_t>(p.steps - 1)));
        if (static_cast<std::uint64_t>(p.steps) * bytes <= opt.rss_cap)
            throw argument_error("storing all " + std::to_string(p.steps) + " states of " + cli::format_bytes(bytes) +
                                 " fits under --rss-cap " + cli::format_bytes(opt.rss_cap) + "; raise --steps");
    }
    capped_memory memory(slot_budget); // RAM slots; the whole cap is checked on the peak RSS below

    std::map<std::pair<std::uint64_t, std::uint64_t>, std::uint64_t> references; // (bytes, seed) -> hash
    std::mt19937_64 random(20261125);
    std::vector<fault_result> faults;
    std::uint64_t transfers = 0, rounds = 0, wrong = 0, steps = 0, forward_steps = 0, reverse_steps = 0;
    std::vector<std::string> wrong_rounds;
    std::vector<level_total> levels; // as the tested store has them: [device,] host, disk
    if (opt.device_slots > 0)
        levels.push_back({"device"});
    levels.push_back({"host"});
    levels.push_back({"disk"});
    std::size_t next_fault = 0;
    report::progress bar(err, {.label = "remat-stress", .total = opt.transfers, .unit = "transfers"});

    bool stopped = false; // --max-seconds ran out before the goal of transfers
    auto more_transfers = [&] {
        if (transfers >= opt.transfers)
            return false;
        stopped = opt.max_seconds > 0 && seconds_since(start) > opt.max_seconds;
        return !stopped;
    };
    // Fault rounds take the smallest state size: its plan puts the most snapshots on disk, so the disk faults
    // (a full disk, a flipped byte, EIO) meet disk traffic. Taking the size of the round's turn in the cycle
    // instead made every fault round of the full run a 64 MiB one (16 sizes, a fault every 16th round), whose
    // plan keeps everything in RAM: the disk faults never happened.
    const std::uint64_t fault_bytes = *std::min_element(opt.state_bytes.begin(), opt.state_bytes.end());
    while (more_transfers() || (opt.faults && next_fault < all_faults.size())) {
        const bool fault_round =
            opt.faults && ((opt.fault_every > 0 && rounds % opt.fault_every == opt.fault_every - 1) ||
                           transfers >= opt.transfers || stopped);
        const std::uint64_t bytes = fault_round ? fault_bytes : opt.state_bytes[rounds % opt.state_bytes.size()];
        size_plan& p = plans.at(bytes);
        round_setup setup{.state_bytes = bytes,
                          .steps = p.steps,
                          .host_slots = p.host_slots,
                          .reference_slots = p.reference_slots,
                          .disk_write_cost = p.write_cost,
                          .disk_read_cost = p.read_cost,
                          .seed = (rounds / opt.state_bytes.size()) % 3,
                          .file = fault_round ? file : work / fmt::format("snapshots-{}.h5", bytes),
                          .reuse_file = !fault_round,
                          .staging_buffers = staging,
                          .device_slots = opt.device_slots,
                          .device_cost = p.device_seconds / p.step_seconds};
        const auto key = std::make_pair(bytes, setup.seed);
        if (!references.contains(key))
            references[key] = gradient_hash(reference_gradient(setup, memory));
        const std::uint64_t reference = references[key];
        if (fault_round) {
            const fault_kind kind = all_faults[next_fault % all_faults.size()];
            ++next_fault;
            faults.push_back(run_fault(kind, setup, memory, reference, random));
            faults.back().state_bytes = bytes;
            transfers += faults.back().transfers;
        } else {
            const tested_run t = tested_gradient(setup, memory);
            if (gradient_hash(t.g) != reference) {
                ++wrong;
                wrong_rounds.push_back("round " + std::to_string(rounds) + " (" + cli::format_bytes(bytes) + ", seed " +
                                       std::to_string(setup.seed) + ")");
            }
            const run_report& r = t.report;
            transfers += r.stores + r.restores;
            steps += static_cast<std::uint64_t>(r.steps);
            forward_steps += r.forward_steps;
            reverse_steps += r.reverse_steps;
            for (std::size_t i = 0; i < levels.size(); ++i) {
                level_total& l = levels[i];
                const level_report& lr = r.levels.at(i);
                const transfer_time& moved = t.times.at(i);
                l.stores += lr.stores;
                l.restores += lr.restores;
                l.bytes_written += lr.bytes_written;
                l.bytes_read += lr.bytes_read;
                l.level_bytes_written += moved.bytes_written;
                l.level_bytes_read += moved.bytes_read;
                l.write_seconds += moved.write_seconds;
                l.read_seconds += moved.read_seconds;
                if (l.name == "disk") { // priced at the end, at the disk's rates measured through the run
                    p.disk_bytes_written += moved.bytes_written;
                    p.disk_bytes_read += moved.bytes_read;
                    continue;
                }
                const double device_rate = p.device_seconds > 0 ? static_cast<double>(bytes) / p.device_seconds : 0;
                const double copy_rate = l.name == "device" ? device_rate : p.calibration.host_copy_bytes_per_s();
                if (copy_rate > 0) {
                    l.calibrated_write_seconds += static_cast<double>(moved.bytes_written) / copy_rate;
                    l.calibrated_read_seconds += static_cast<double>(moved.bytes_read) / copy_rate;
                }
            }
            // The disk's speed drifts with what else the machine does (its cache flush took 0.1 ms in one
            // minute and 3 ms in the next on this VM): calibrate's transfers are timed again beside each round.
            p.during_run.append(time_store_transfers(work, bytes, opt.calibrate_repeats));
        }
        ++rounds;
        bar.update(std::min(transfers, opt.transfers));
    }
    bar.finish();
    const std::uint64_t peak = peak_rss_bytes();
    level_total& disk = levels.back();
    for (const auto& [bytes, p] : plans) {
        const double write_rate = p.during_run.write_bytes_per_s(), read_rate = p.during_run.read_bytes_per_s();
        if (write_rate > 0)
            disk.calibrated_write_seconds += static_cast<double>(p.disk_bytes_written) / write_rate;
        if (read_rate > 0)
            disk.calibrated_read_seconds += static_cast<double>(p.disk_bytes_read) / read_rate;
    }
    const double wall = seconds_since(start);
    std::uint64_t injected = 0, survived = 0, saved = 0;
    for (const fault_result& f : faults) {
        injected += f.injected ? 1 : 0;
        survived += f.survived ? 1 : 0;
        saved += f.forward_steps_saved;
    }
    if (!opt.keep)
        std::filesystem::remove_all(work);

    nlohmann::ordered_json sizes = nlohmann::ordered_json::array();
    for (const auto& [bytes, p] : plans)
        sizes.push_back({{"state_bytes", bytes},
                         {"steps", p.steps},
                         {"host_slots", p.host_slots},
                         {"reference_slots", p.reference_slots},
                         {"store_all_bytes", static_cast<std::uint64_t>(p.steps) * bytes},
                         {"step_seconds", p.step_seconds},
                         {"plan_disk_write_cost_steps", p.write_cost},
                         {"plan_disk_read_cost_steps", p.read_cost},
                         {"calibrated_disk_write_cost_steps", p.calibration.write_seconds / p.step_seconds},
                         {"calibrated_disk_read_cost_steps", p.calibration.read_seconds / p.step_seconds},
                         {"calibrated_write_bytes_per_s", p.calibration.write_bytes_per_s()},
                         {"calibrated_read_bytes_per_s", p.calibration.read_bytes_per_s()},
                         {"calibrated_host_copy_bytes_per_s", p.calibration.host_copy_bytes_per_s()},
                         {"during_run_write_bytes_per_s", p.during_run.write_bytes_per_s()},
                         {"during_run_read_bytes_per_s", p.during_run.read_bytes_per_s()},
                         {"during_run_samples", p.during_run.write_seconds.size()},
                         {"device_transfer_seconds", p.device_seconds}});
    nlohmann::ordered_json level_list = nlohmann::ordered_json::array();
    for (const level_total& l : levels)
        level_list.push_back(level_json(l));
    const std::string device_level = device_level_text(opt.device_slots);
    nlohmann::ordered_json fault_list = nlohmann::ordered_json::array();
    for (const fault_result& f : faults)
        fault_list.push_back({{"kind", to_string(f.kind)},
                              {"injected", f.injected},
                              {"survived", f.survived},
                              {"state_bytes", f.state_bytes},
                              {"outcome", f.outcome},
                              {"problem", f.problem},
                              {"resumed_from", f.resumed_from},
                              {"forward_steps_saved", f.forward_steps_saved},
                              {"seconds", f.seconds}});
    const bool rss_ok = !rss_is_ours || peak <= opt.rss_cap;
    const bool ok = wrong == 0 && survived == faults.size() && rss_ok && transfers >= opt.transfers;
    nlohmann::ordered_json j{{"ok", ok},
                             {"transfers", transfers},
                             {"transfers_goal", opt.transfers},
                             {"stopped_at_max_seconds", stopped},
                             {"faults_injected", injected},
                             {"faults_survived", survived},
                             {"wrong_gradients", wrong},
                             {"peak_rss_bytes", peak},
                             {"rss_cap_bytes", opt.rss_cap},
                             {"rss_cap_checked", rss_is_ours},
                             {"baseline_rss_bytes", baseline},
                             {"slot_budget_bytes", slot_budget},
                             {"rounds", rounds},
                             {"steps", steps},
                             {"forward_steps", forward_steps},
                             {"reverse_steps", reverse_steps},
                             {"resume_forward_steps_saved", saved},
                             {"wall_seconds", wall},
                             {"levels", level_list},
                             {"device_level", device_level},
                             {"state_sizes", sizes},
                             {"faults", fault_list},
                             {"wrong_rounds", wrong_rounds}};
    if (opt.format == "json") {
        report::write_json(out, j);
        return ok ? 0 : 1;
    }
    out << fmt::format("remat-stress: {} rounds, {} steps ({} forward, {} reverse), {:.1f} s\n", rounds, steps,
                       forward_steps, reverse_steps, wall);
    out << fmt::format("transfers      {} (goal {}){}\n", transfers, opt.transfers,
                       stopped ? ", stopped by --max-seconds" : "");
    for (const level_total& level : levels) {
        const level_total* l = &level;
        const auto lj = level_json(*l);
        out << fmt::format("  {:<6} {:>9} stores {:>9} restores  written {:>10}  read {:>10}  write {:.2f} GB/s "
                           "({:.0f}% of calibrate)  read {:.2f} GB/s ({:.0f}% of calibrate)\n",
                           l->name, l->stores, l->restores, cli::format_bytes(l->bytes_written),
                           cli::format_bytes(l->bytes_read), lj["write_bytes_per_s"].get<double>() / 1e9,
                           100 * lj["write_vs_calibrated"].get<double>(), lj["read_bytes_per_s"].get<double>() / 1e9,
                           100 * lj["read_vs_calibrated"].get<double>());
    }
    out << fmt::format("peak RSS       {} (cap {}){}\n", cli::format_bytes(peak), cli::format_bytes(opt.rss_cap),
                       !rss_is_ours          ? "  (not checked: a sanitizer's memory)"
                       : peak <= opt.rss_cap ? ""
                                             : "  OVER THE CAP");
    out << fmt::format("wrong gradients {}\n", wrong);
    out << fmt::format("faults         {} injected, {} survived\n", injected, survived);
    for (const fault_result& f : faults)
        out << fmt::format("  {:<17} {:<9} {}{}\n", to_string(f.kind), f.survived ? "survived" : "FAILED", f.outcome,
                           f.problem.empty() ? "" : "  -- " + f.problem);
    if (saved > 0)
        out << fmt::format("resume         {} forward steps saved\n", saved);
    out << (ok ? "all goals met\n" : "GOALS MISSED\n");
    return ok ? 0 : 1;
}

} // namespace

int main(int argc, char** argv)
{
    // States and slots of a megabyte and more come from mmap and go back to the system when freed. glibc
    // would otherwise raise its mmap threshold after the first such free and serve them from its heap,
    // which keeps freed memory resident: the RSS would creep over the cap with nothing in use.
    mallopt(M_MMAP_THRESHOLD, 256 * 1024);
    mallopt(M_TRIM_THRESHOLD, 1 << 20);
    CLI::App app("remat-stress: snapshot transfers through host RAM and an HDF5 file under a memory cap, with "
                 "faults injected; gradients checked bit for bit (docs/stress.md)");
    bool small = false;
    bool no_faults = false;
    std::string sizes_text, cap_text, steps_text, transfers_text, fault_every_text = "16", dir = ".";
    settings opt;
    app.add_flag("--small", small, "the CI version: small states, a few thousand transfers, every fault once");
    app.add_option(
        "--state-bytes", sizes_text,
        "state sizes, comma-separated, one per round in turn (1 MiB, with 16 MiB and 64 MiB every 8th round)");
    app.add_option("--steps", steps_text, "steps per round for 1 MiB states; larger states get fewer (4000)");
    app.add_option("--transfers", transfers_text, "snapshot transfers to make (1e6)");
    app.add_option("--rss-cap", cap_text, "host memory cap for the whole process (1GiB)");
    std::string host_slots_text = "8";
    app.add_option("--host-slots", host_slots_text, "RAM slots at most (fewer when the cap holds fewer) (8)");
    std::string device_slots_text = "0";
    app.add_option("--device-slots", device_slots_text,
                   "GPU slots above RAM (a CUDA build on a machine with a GPU); 0: host RAM and the file only (0)");
    app.add_option("--dir", dir, "where the snapshot file goes (a directory of its own is made there)");
    std::string disk_cost_text = "4";
    app.add_option("--disk-cost", disk_cost_text,
                   "forward steps per disk transfer the plan assumes (4: the disk carries much of the traffic); 0: "
                   "what calibration measured, as a user would plan");
    app.add_flag("--no-faults", no_faults, "no fault injection");
    app.add_option("--fault-every", fault_every_text, "a fault round every N rounds (16)");
    app.add_flag("--keep", opt.keep, "keep the snapshot file");
    std::string max_seconds_text = "0";
    app.add_option("--max-seconds", max_seconds_text,
                   "start no round after this many seconds (the faults not yet run still run); 0: no limit");
    app.add_option("--format", opt.format, "text or json")->check(CLI::IsMember({"text", "json"}));
    try {
        app.parse(argc, argv);
        if (sizes_text.empty())
            sizes_text = small ? "1MiB,2MiB" : full_run_sizes;
        std::stringstream list(sizes_text);
        for (std::string item; std::getline(list, item, ',');) {
            const std::uint64_t b = *cli::parse_bytes("--state-bytes", item);
            if (b == 0 || b % 8 != 0)
                throw cli::usage_error("--state-bytes: " + item + " is not a positive multiple of 8 bytes");
            opt.state_bytes.push_back(b);
        }
        opt.steps = cli::parse_count("--steps", steps_text.empty() ? (small ? "400" : "4000") : steps_text, 8);
        opt.transfers = static_cast<std::uint64_t>(
            cli::parse_count("--transfers", transfers_text.empty() ? (small ? "5000" : "1e6") : transfers_text, 0));
        opt.rss_cap = *cli::parse_bytes("--rss-cap", cap_text.empty() ? (small ? "128MiB" : "1GiB") : cap_text);
        opt.fault_every = static_cast<std::uint64_t>(cli::parse_count("--fault-every", fault_every_text, 1));
        opt.faults = !no_faults;
        try {
            std::size_t used = 0;
            opt.disk_cost = std::stod(disk_cost_text, &used);
            if (used != disk_cost_text.size() || !(opt.disk_cost >= 0) || opt.disk_cost > 1e9)
                throw std::invalid_argument(disk_cost_text);
        } catch (const std::logic_error&) {
            throw cli::usage_error("--disk-cost: \"" + disk_cost_text + "\" is not a number of steps >= 0");
        }
        opt.host_slots = cli::parse_count("--host-slots", host_slots_text, 2);
        opt.device_slots = cli::parse_count("--device-slots", device_slots_text, 0);
        const std::string missing = opt.device_slots > 0 ? device_level_missing() : std::string();
        if (!missing.empty())
            throw cli::usage_error("--device-slots " + device_slots_text + ": " + missing);
        opt.max_seconds = static_cast<double>(cli::parse_count("--max-seconds", max_seconds_text, 0));
        opt.dir = dir;
        opt.calibrate_repeats = small ? 2 : 3;
    } catch (const CLI::ParseError& e) {
        return app.exit(e);
    } catch (const cli::usage_error& e) {
        std::cerr << "remat-stress: " << e.what() << '\n';
        return 2;
    }
    try {
        return run_stress(opt, std::cout, std::cerr);
    } catch (const remat::argument_error& e) {
        std::cerr << "remat-stress: " << e.what() << '\n';
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "remat-stress: " << e.what() << '\n';
        return 1;
    }
}
