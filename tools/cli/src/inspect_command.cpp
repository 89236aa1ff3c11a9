#include "inspect_command.hpp"

#include "quiet_hdf5.hpp"
#include "remat/cli/parse.hpp"

#include "remat/error.hpp"
#include "remat/hdf5/inspect.hpp"
#include "remat/report/json.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace remat::cli {
namespace {

std::string hex(std::uint64_t v)
{
    return fmt::format("0x{:016x}", v);
}

// Each rank's part sizes in a parallel file (its whole hyperslab when its state is one part).
std::vector<std::vector<std::uint64_t>> parts_per_rank(const hdf5_snapshot_info& s, const hdf5_file_contents& c)
{
    std::vector<std::vector<std::uint64_t>> out;
    std::size_t next = 0;
    for (std::size_t r = 0; r < c.decomposition.size(); ++r) {
        if (s.rank_part_counts.size() != c.decomposition.size()) {
            out.push_back({c.decomposition[r].second});
            continue;
        }
        const auto n = static_cast<std::size_t>(s.rank_part_counts[r]);
        const std::size_t end = std::min(s.part_bytes.size(), next + n);
        out.emplace_back(s.part_bytes.begin() + static_cast<std::ptrdiff_t>(next),
                         s.part_bytes.begin() + static_cast<std::ptrdiff_t>(end));
        next = end;
    }
    return out;
}

// The part sizes joined by '+' ("1024+8+8"), or "-" for a snapshot of one part (no part_bytes attribute);
// in a parallel file each rank's, rank 0's first, separated by '|' when a rank's state has several parts.
std::string parts_text(const hdf5_snapshot_info& s, const hdf5_file_contents& c)
{
    if (s.part_bytes.empty())
        return "-";
    if (c.decomposition.empty())
        return fmt::format("{}", fmt::join(s.part_bytes, "+"));
    std::string text;
    for (const std::vector<std::uint64_t>& rank : parts_per_rank(s, c))
        text += (text.empty() ? "" : "|") + fmt::format("{}", fmt::join(rank, "+"));
    return text;
}

std::string state_text(const hdf5_snapshot_info& s)
{
    if (s.status == hdf5_snapshot_status::complete)
        return s.verified ? "complete, verified" : "complete";
    return std::string(to_string(s.status)) + ": " + s.problem;
}

void write_text(std::ostream& out, const hdf5_file_contents& c)
{
    out << fmt::format("{}: {}, schema {}, checksum {}, {} snapshot{}\n", c.path.string(), c.format, c.schema,
                       c.checksum_algorithm, c.snapshots.size(), c.snapshots.size() == 1 ? "" : "s");
    if (!c.decomposition.empty()) {
        // A parallel file: each rank's part, and (below) rank 0's checksum standing for the record's.
        std::string parts;
        for (std::size_t r = 0; r < c.decomposition.size(); ++r)
            parts +=
                fmt::format("{}{}: {}+{}", r == 0 ? "" : ", ", r, c.decomposition[r].first, c.decomposition[r].second);
        out << fmt::format("{} ranks, each rank's bytes (offset+size): {}; checksum below: rank 0's of {}\n",
                           c.decomposition.size(), parts, c.decomposition.size());
    }
    if (!c.slots_in_writing.empty())
        out << fmt::format("a write was in progress in slot{} {} when the writer stopped (the file's write intent)\n",
                           c.slots_in_writing.size() == 1 ? "" : "s", fmt::join(c.slots_in_writing, ", "));
    if (c.snapshots.empty())
        return;
    // Columns as wide as their widest value: a step of 19 digits (T up to 2^63-1) pushed its line right.
    const auto text_of = [](std::int64_t v) { return v >= 0 ? std::to_string(v) : std::string("-"); };
    std::size_t slot_width = 8;
    std::size_t step_width = 12;
    std::size_t bytes_width = 14;
    for (const hdf5_snapshot_info& s : c.snapshots) {
        slot_width = std::max(slot_width, text_of(s.slot).size());
        step_width = std::max(step_width, text_of(s.step).size());
        bytes_width = std::max(bytes_width, std::to_string(s.bytes).size());
    }
    out << fmt::format("{:>{}} {:>{}} {:>{}}  {:<16} {:>8}  {:<18}  {}\n", "slot", slot_width, "step", step_width,
                       "bytes", bytes_width, "parts", "element", "checksum", "state");
    for (const hdf5_snapshot_info& s : c.snapshots)
        out << fmt::format("{:>{}} {:>{}} {:>{}}  {:<16} {:>8}  {:<18}  {}  ({})\n", text_of(s.slot), slot_width,
                           text_of(s.step), step_width, s.bytes, bytes_width, parts_text(s, c),
                           s.element_type.empty() ? "-" : s.element_type, hex(s.checksum), state_text(s), s.dataset);
}

nlohmann::ordered_json to_json(const hdf5_file_contents& c, bool verify)
{
    nlohmann::ordered_json snapshots = nlohmann::ordered_json::array();
    bool ok = true;
    for (const hdf5_snapshot_info& s : c.snapshots) {
        ok = ok && s.status != hdf5_snapshot_status::damaged;
        nlohmann::ordered_json rank_checksums = nlohmann::ordered_json::array();
        for (const std::uint64_t sum : s.rank_checksums)
            rank_checksums.push_back(hex(sum));
        snapshots.push_back({{"dataset", s.dataset},
                             {"slot", s.slot},
                             {"step", s.step},
                             {"bytes", s.bytes},
                             {"part_bytes", c.decomposition.empty() ? nlohmann::ordered_json(s.part_bytes)
                                                                    : nlohmann::ordered_json(parts_per_rank(s, c))},
                             {"element_type", s.element_type},
                             {"schema", s.schema},
                             {"checksum", hex(s.checksum)},
                             {"status", to_string(s.status)},
                             {"verified", s.verified},
                             {"problem", s.problem}});
        if (!c.decomposition.empty())
            snapshots.back()["rank_checksums"] = std::move(rank_checksums);
    }
    nlohmann::ordered_json j{{"file", c.path.string()}, {"format", c.format},
                             {"schema", c.schema},      {"checksum_algorithm", c.checksum_algorithm},
                             {"verify", verify},        {"ok", ok}};
    if (!c.decomposition.empty()) {
        nlohmann::ordered_json parts = nlohmann::ordered_json::array();
        for (const auto& [offset, bytes] : c.decomposition)
            parts.push_back({{"offset", offset}, {"bytes", bytes}});
        j["ranks"] = c.decomposition.size();
        j["decomposition"] = std::move(parts);
    }
    j["slots_in_writing"] = c.slots_in_writing;
    j["snapshots"] = std::move(snapshots);
    return j;
}

} // namespace

void add_inspect_command(CLI::App& app, std::ostream& out)
{
    auto* command =
        app.add_subcommand("inspect", "list the snapshots of a remat HDF5 snapshot file (step, bytes, "
                                      "part sizes, checksum, state); --verify re-reads and checks them all");
    auto file = std::make_shared<std::string>();
    auto verify = std::make_shared<bool>(false);
    auto format = std::make_shared<std::string>("text");
    command->add_option("file", *file, "the snapshot file")->required();
    command->add_flag(
        "--verify", *verify,
        "re-read every snapshot through HDF5 and check its checksum; exit 1 naming the first damaged one");
    command->add_option("--format", *format, "text or json")->capture_default_str();
    command->callback([file, verify, format, &out] {
        quiet_hdf5();
        if (*format != "text" && *format != "json")
            throw usage_error("--format: expected text or json, got \"" + *format + "\"");
        const hdf5_file_contents c = hdf5_inspect(*file, *verify);
        if (*format == "json")
            report::write_json(out, to_json(c, *verify));
        else
            write_text(out, c);
        // Interrupted writes are what a crash leaves; damage is what makes the file untrustworthy.
        for (const hdf5_snapshot_info& s : c.snapshots)
            if (s.status == hdf5_snapshot_status::damaged)
                throw integrity_error(*file + ": " + s.dataset + " is damaged: " + s.problem);
    });
}

} // namespace remat::cli
