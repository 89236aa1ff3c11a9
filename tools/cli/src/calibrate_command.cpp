#include "calibrate_command.hpp"

#include "quiet_hdf5.hpp"
#include "remat/cli/parse.hpp"

#include "remat/error.hpp"
#include "remat/hdf5/calibrate.hpp"
#include "remat/report/json.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <memory>
#include <optional>
#include <ostream>
#include <string>

namespace remat::cli {
namespace {

struct calibrate_request {
    std::string dir;
    std::string snapshot_bytes = "64MiB";
    std::string repeats = "5";
    std::string step_seconds;
    std::string format = "text";
};

std::optional<double> parse_seconds(const std::string& text)
{
    if (text.empty())
        return std::nullopt;
    std::size_t used = 0;
    double value = 0;
    try {
        value = std::stod(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != text.size() || !std::isfinite(value) || value <= 0)
        throw usage_error("--step-seconds: expected a positive number of seconds such as 0.002, got \"" + text + "\"");
    return value;
}

// Costs in forward steps, as `remat plan --level NAME:SLOTS:WRITE:READ` takes them.
std::string steps(double seconds, double step_seconds)
{
    return fmt::format("{:.3g}", seconds / step_seconds);
}

std::string rate(double bytes_per_s)
{
    return fmt::format("{:.2f} GB/s", bytes_per_s / 1e9);
}

void write_text(std::ostream& out, const std::string& dir, const disk_calibration& c, std::optional<double> step)
{
    out << fmt::format("disk level in {}: {} snapshots, median of {} (store O_DIRECT: {}, baseline O_DIRECT: {})\n",
                       dir, format_bytes(c.snapshot_bytes), c.repeats, c.direct_io ? "yes" : "no",
                       c.raw_direct_io ? "yes" : "no");
    out << fmt::format("  write  {:.6f} s per snapshot  {}  (raw disk {}: {:.0f}%), durable\n", c.write_seconds,
                       rate(c.write_bytes_per_s()), rate(c.raw_write_bytes_per_s()),
                       100 * c.write_bytes_per_s() / c.raw_write_bytes_per_s());
    out << fmt::format("  read   {:.6f} s per snapshot  {}  (raw disk {}: {:.0f}%), page cache dropped\n",
                       c.read_seconds, rate(c.read_bytes_per_s()), rate(c.raw_read_bytes_per_s()),
                       100 * c.read_bytes_per_s() / c.raw_read_bytes_per_s());
    out << fmt::format("host memory copy  {:.6f} s per snapshot  {}\n", c.host_copy_seconds,
                       rate(c.host_copy_bytes_per_s()));
    if (step) {
        out << fmt::format("with {} s per forward step, in forward steps per snapshot (write:read):\n", *step);
        out << fmt::format("  --level host:SLOTS:{}:{}\n", steps(c.host_copy_seconds, *step),
                           steps(c.host_copy_seconds, *step));
        out << fmt::format("  --level disk:inf:{}:{}\n", steps(c.write_seconds, *step), steps(c.read_seconds, *step));
    } else {
        out << "`remat plan --level NAME:SLOTS:WRITE:READ` takes WRITE and READ in forward steps: divide the seconds\n"
               "above by the seconds of one forward step of your loop, or give --step-seconds to have it done.\n";
    }
}

nlohmann::ordered_json to_json(const std::string& dir, const disk_calibration& c, std::optional<double> step)
{
    nlohmann::ordered_json j = {{"dir", dir},
                                {"snapshot_bytes", c.snapshot_bytes},
                                {"repeats", c.repeats},
                                {"direct_io", c.direct_io},
                                {"raw_direct_io", c.raw_direct_io},
                                {"write_seconds", c.write_seconds},
                                {"read_seconds", c.read_seconds},
                                {"raw_write_seconds", c.raw_write_seconds},
                                {"raw_read_seconds", c.raw_read_seconds},
                                {"host_copy_seconds", c.host_copy_seconds},
                                {"write_bytes_per_s", c.write_bytes_per_s()},
                                {"read_bytes_per_s", c.read_bytes_per_s()},
                                {"raw_write_bytes_per_s", c.raw_write_bytes_per_s()},
                                {"raw_read_bytes_per_s", c.raw_read_bytes_per_s()},
                                {"host_copy_bytes_per_s", c.host_copy_bytes_per_s()},
                                {"write_vs_raw", c.write_bytes_per_s() / c.raw_write_bytes_per_s()},
                                {"read_vs_raw", c.read_bytes_per_s() / c.raw_read_bytes_per_s()}};
    if (step) {
        j["step_seconds"] = *step;
        j["disk_write_steps"] = c.write_seconds / *step;
        j["disk_read_steps"] = c.read_seconds / *step;
        j["host_copy_steps"] = c.host_copy_seconds / *step;
        j["disk_level"] = fmt::format("disk:inf:{}:{}", steps(c.write_seconds, *step), steps(c.read_seconds, *step));
    }
    return j;
}

} // namespace

void add_calibrate_command(CLI::App& app, std::ostream& out)
{
    auto* command = app.add_subcommand("calibrate", "measure this machine's cost per snapshot: HDF5 disk level write "
                                                    "and read against raw O_DIRECT I/O, and host memory copies");
    auto request = std::make_shared<calibrate_request>();
    command->add_option("--disk", request->dir, "directory on the disk to measure (a scratch file is made and removed)")
        ->required();
    command->add_option("--snapshot-bytes", request->snapshot_bytes, "bytes of one snapshot, such as 64MiB")
        ->capture_default_str();
    command->add_option("--repeats", request->repeats, "measurements of each kind (the median is reported)")
        ->capture_default_str();
    command->add_option(
        "--step-seconds", request->step_seconds,
        "seconds of one forward step of your loop: prints the costs in forward steps, as --level takes");
    command->add_option("--format", request->format, "text or json")->capture_default_str();
    command->callback([request, &out] {
        quiet_hdf5();
        if (request->format != "text" && request->format != "json")
            throw usage_error("--format: expected text or json, got \"" + request->format + "\"");
        const std::uint64_t bytes = *parse_bytes("--snapshot-bytes", request->snapshot_bytes);
        if (bytes == 0)
            throw usage_error("--snapshot-bytes: expected at least 1 byte, got \"" + request->snapshot_bytes + "\"");
        const auto repeats = static_cast<int>(parse_count("--repeats", request->repeats, 1, 1000));
        const std::optional<double> step = parse_seconds(request->step_seconds);
        const disk_calibration c = [&] {
            try {
                return calibrate_disk(request->dir, bytes, repeats);
            } catch (const capacity_error& e) {
                throw usage_error("--snapshot-bytes " + request->snapshot_bytes + ": " + e.what());
            }
        }();
        if (request->format == "json")
            report::write_json(out, to_json(request->dir, c, step));
        else
            write_text(out, request->dir, c, step);
    });
}

} // namespace remat::cli
