#include "remat/hdf5/inspect.hpp"

#include "snapshot_format.hpp"

#include "hdf5_handle.hpp"
#include "remat/detail/xxh64.hpp"
#include "remat/error.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <vector>

namespace remat {
namespace {

using detail::hdf5_dataset;
using detail::hdf5_dataspace;

hdf5_snapshot_info damaged(std::string dataset, slot_t slot, std::string problem)
{
    hdf5_snapshot_info info;
    info.dataset = std::move(dataset);
    info.slot = slot;
    info.status = hdf5_snapshot_status::damaged;
    info.problem = std::move(problem);
    return info;
}

// XXH64 of a dataset's bytes as HDF5 itself reads them (through its filters, if any), in pieces of
// about 8 MiB so that verification needs little memory. Empty optional and `problem` set on failure.
std::optional<std::uint64_t> hash_through_hdf5(hid_t dataset, const detail::snapshot_record& r, std::string& problem)
{
    const std::size_t element = element_bytes(r.element);
    const hsize_t count = r.bytes / element;
    const hsize_t per_piece = std::max<hsize_t>(1, (hsize_t{8} << 20) / element);
    std::vector<std::byte> buffer(static_cast<std::size_t>(std::min(count, per_piece) * element));
    hdf5_dataspace file_space(H5Dget_space(dataset));
    if (!file_space) {
        problem = "its dataspace cannot be read (" + detail::hdf5_error_text() + ")";
        return std::nullopt;
    }
    detail::xxh64_state h;
    for (hsize_t start = 0; start < count; start += per_piece) {
        const hsize_t n = std::min(per_piece, count - start);
        const hsize_t offset[1] = {start};
        const hsize_t size[1] = {n};
        hdf5_dataspace memory(H5Screate_simple(1, size, nullptr));
        if (!memory || H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, offset, nullptr, size, nullptr) < 0 ||
            H5Dread(dataset, detail::element_memory_type(r.element), memory.get(), file_space.get(), H5P_DEFAULT,
                    buffer.data()) < 0) {
            problem =
                "its data cannot be read at element " + std::to_string(start) + " (" + detail::hdf5_error_text() + ")";
            return std::nullopt;
        }
        h.update(buffer.data(), static_cast<std::size_t>(n * element));
    }
    return h.digest();
}

// The current snapshot dataset of a slot, `relative` below /snapshots.
hdf5_snapshot_info inspect_dataset(hid_t snapshots, slot_t slot, const std::string& relative, bool verify)
{
    hdf5_snapshot_info info = damaged(std::string("/") + detail::snapshots_group_name + "/" + relative, slot, "");
    hdf5_dataset d(H5Dopen2(snapshots, relative.c_str(), H5P_DEFAULT));
    if (!d) {
        info.problem = "the dataset cannot be opened (" + detail::hdf5_error_text() + ")";
        return info;
    }
    const detail::record_reading rr = detail::read_record(d.get());
    const detail::snapshot_record& r = rr.record;
    info.step = r.step;
    info.bytes = r.bytes;
    info.element_type = std::string(to_string(r.element));
    info.schema = r.schema;
    info.checksum = r.checksum;
    if (!rr.problem.empty()) {
        info.problem = rr.problem;
        return info;
    }
    if (r.slot != slot) {
        info.problem = "its record belongs to slot " + std::to_string(r.slot);
        return info;
    }
    if (r.state != detail::slot_state::complete) {
        info.status = hdf5_snapshot_status::interrupted;
        info.problem = "its write of x_" + std::to_string(r.step) + " was interrupted (state is \"writing\")";
        return info;
    }
    info.status = hdf5_snapshot_status::complete;
    if (!verify)
        return info;
    std::string problem;
    const std::optional<std::uint64_t> sum = hash_through_hdf5(d.get(), r, problem);
    if (!sum) {
        info.status = hdf5_snapshot_status::damaged;
        info.problem = problem;
    } else if (*sum != r.checksum) {
        info.status = hdf5_snapshot_status::damaged;
        info.problem = "checksum mismatch: the data hashes to " + detail::hex(*sum) + " but the record says " +
                       detail::hex(r.checksum);
    } else {
        info.verified = true;
    }
    return info;
}

} // namespace

const char* to_string(hdf5_snapshot_status s) noexcept
{
    switch (s) {
    case hdf5_snapshot_status::complete:
        return "complete";
    case hdf5_snapshot_status::interrupted:
        return "interrupted";
    case hdf5_snapshot_status::superseded:
        return "superseded";
    default:
        return "damaged";
    }
}

hdf5_file_contents hdf5_inspect(const std::filesystem::path& file, bool verify)
{
    detail::hdf5_scope scope;
    const detail::snapshot_file f = detail::open_snapshot_file(file, false);
    hdf5_file_contents contents;
    contents.path = file;
    contents.schema = detail::snapshot_schema;
    contents.checksum_algorithm = detail::checksum_algorithm_name;
    const detail::snapshot_layout layout = detail::locate_snapshots(f.snapshots.get(), file.string());
    const std::string root = std::string("/") + detail::snapshots_group_name + "/";
    for (const auto& [slot, place] : layout.slots) {
        if (!place.dataset.empty())
            contents.snapshots.push_back(
                inspect_dataset(f.snapshots.get(), slot, place.group + "/" + place.dataset, verify));
        for (const auto& [path, why] : place.leftovers) {
            // Set aside and replaced: harmless. Unreadable with nothing replacing it: damage.
            hdf5_snapshot_info left = damaged(root + path, slot, why);
            if (!place.dataset.empty())
                left.status = hdf5_snapshot_status::superseded;
            contents.snapshots.push_back(std::move(left));
        }
    }
    for (const std::string& name : layout.unexpected)
        contents.snapshots.push_back(damaged(root + name, -1, "not a slot group (unexpected name)"));
    std::stable_sort(contents.snapshots.begin(), contents.snapshots.end(),
                     [](const hdf5_snapshot_info& a, const hdf5_snapshot_info& b) {
                         return (a.slot < 0 ? INT64_MAX : a.slot) < (b.slot < 0 ? INT64_MAX : b.slot);
                     });
    return contents;
}

} // namespace remat
