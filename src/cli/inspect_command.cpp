#include "inspect_command.hpp"

#include "parse.hpp"

#include "remat/error.hpp"
#include "remat/hdf5/inspect.hpp"
#include "remat/report/json.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <memory>
#include <ostream>
#include <string>

namespace remat::cli {
namespace {

std::string hex(std::uint64_t v)
{
    return fmt::format("0x{:016x}", v);
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
    if (c.snapshots.empty())
        return;
    out << fmt::format("{:>8} {:>12} {:>14} {:>8}  {:<18}  {}\n", "slot", "step", "bytes", "element", "checksum",
                       "state");
    for (const hdf5_snapshot_info& s : c.snapshots) {
        const std::string slot = s.slot >= 0 ? std::to_string(s.slot) : "-";
        const std::string step = s.step >= 0 ? std::to_string(s.step) : "-";
        out << fmt::format("{:>8} {:>12} {:>14} {:>8}  {:<18}  {}  ({})\n", slot, step, s.bytes,
                           s.element_type.empty() ? "-" : s.element_type, hex(s.checksum), state_text(s), s.dataset);
    }
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
    j["snapshots"] = std::move(snapshots);
    return j;
}

} // namespace

void add_inspect_command(CLI::App& app, std::ostream& out)
{
    auto* command = app.add_subcommand("inspect", "list the snapshots of a remat HDF5 snapshot file (step, bytes, "
                                                  "checksum, state); --verify re-reads and checks them all");
    auto file = std::make_shared<std::string>();
    auto verify = std::make_shared<bool>(false);
    auto format = std::make_shared<std::string>("text");
    command->add_option("file", *file, "the snapshot file")->required();
    command->add_flag(
        "--verify", *verify,
        "re-read every snapshot through HDF5 and check its checksum; exit 1 naming the first damaged one");
    command->add_option("--format", *format, "text or json")->capture_default_str();
    command->callback([file, verify, format, &out] {
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
