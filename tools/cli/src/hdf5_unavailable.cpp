// The HDF5 commands of a `remat` built without HDF5: they exist, and say so (exit 1).
#include "calibrate_command.hpp"
#include "inspect_command.hpp"

#include "remat/error.hpp"

#include <string>

namespace remat::cli {
namespace {

void add_unavailable(CLI::App& app, const std::string& name, const std::string& description)
{
    auto* command = app.add_subcommand(name, description + " (unavailable: built without HDF5)");
    command->allow_extras();
    command->callback([name] {
        throw remat::error("remat " + name +
                           " is unavailable: this remat was built without HDF5 (install libhdf5-dev and rebuild)");
    });
}

} // namespace

void add_inspect_command(CLI::App& app, std::ostream&)
{
    add_unavailable(app, "inspect", "list the snapshots of a remat HDF5 snapshot file");
}

void add_calibrate_command(CLI::App& app, std::ostream&)
{
    add_unavailable(app, "calibrate", "measure the disk level's cost per snapshot");
}

} // namespace remat::cli
