#include "remat/hdf5/inspect.hpp"

#include "remat/hdf5_internal/parallel_format.hpp"
#include "snapshot_format.hpp"
#include "write_intent.hpp"

#include "remat/detail/xxh64.hpp"
#include "remat/error.hpp"
#include "remat/hdf5_internal/hdf5_handle.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
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

// XXH64 of a contiguous, unfiltered dataset's bytes read straight from the file at the dataset's offset, as
// the store reads them; nothing when the dataset is stored otherwise or its bytes are not all in the file.
// Why: a writer killed part way through a flush can leave metadata on disk that refers to space beyond the
// end of file its superblock records (HDF5 writes the superblock last). A writer reopening the file moves
// that end up (open_snapshot_file); a read-only HDF5 refuses to read past it, though the bytes are there
// (the store reserves a snapshot's blocks before any metadata refers to them).
std::optional<std::uint64_t> hash_from_file(hid_t dataset, const detail::snapshot_record& r)
{
    const std::optional<std::uint64_t> offset = detail::dataset_offset(dataset);
    if (!offset)
        return std::nullopt;
    const ssize_t length = H5Fget_name(dataset, nullptr, 0);
    if (length <= 0) {
        H5Eclear2(H5E_DEFAULT);
        return std::nullopt;
    }
    std::string name(static_cast<std::size_t>(length), '\0');
    if (H5Fget_name(dataset, name.data(), name.size() + 1) != length) {
        H5Eclear2(H5E_DEFAULT);
        return std::nullopt;
    }
    std::ifstream in(name, std::ios::binary);
    in.seekg(static_cast<std::streamoff>(*offset));
    detail::xxh64_state h;
    std::vector<char> buffer(std::size_t{8} << 20);
    for (std::uint64_t left = r.bytes; left > 0;) {
        const auto n = static_cast<std::streamsize>(std::min<std::uint64_t>(left, buffer.size()));
        if (!in.read(buffer.data(), n))
            return std::nullopt; // the file ends before the dataset does
        h.update(buffer.data(), static_cast<std::size_t>(n));
        left -= static_cast<std::uint64_t>(n);
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
    info.part_bytes = r.parts;
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
    std::optional<std::uint64_t> sum = hash_through_hdf5(d.get(), r, problem);
    if (!sum)
        if ((sum = hash_from_file(d.get(), r)))
            problem.clear(); // the superblock's end of file lagged behind bytes that are in the file
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

// A u64 attribute's values, or nullopt (with `problem` set).
std::optional<std::vector<std::uint64_t>> u64s(hid_t object, const char* name, std::string& problem)
{
    if (H5Aexists(object, name) <= 0) {
        problem = std::string("attribute ") + name + " is missing";
        return std::nullopt;
    }
    detail::hdf5_attribute a(H5Aopen(object, name, H5P_DEFAULT));
    hdf5_dataspace space(a ? H5Aget_space(a.get()) : H5I_INVALID_HID);
    const hssize_t n = space ? H5Sget_simple_extent_npoints(space.get()) : -1;
    if (n < 1) {
        problem = std::string("attribute ") + name + " cannot be read (" + detail::hdf5_error_text() + ")";
        return std::nullopt;
    }
    std::vector<std::uint64_t> v(static_cast<std::size_t>(n));
    if (H5Aread(a.get(), H5T_NATIVE_UINT64, v.data()) < 0) {
        problem = std::string("attribute ") + name + " cannot be read (" + detail::hdf5_error_text() + ")";
        return std::nullopt;
    }
    return v;
}

// A fixed-length string attribute, or "" (with `problem` set).
std::string text(hid_t object, const char* name, std::string& problem)
{
    if (H5Aexists(object, name) <= 0) {
        problem = std::string("attribute ") + name + " is missing";
        return {};
    }
    detail::hdf5_attribute a(H5Aopen(object, name, H5P_DEFAULT));
    detail::hdf5_type type(a ? H5Aget_type(a.get()) : H5I_INVALID_HID);
    const std::size_t n = type ? H5Tget_size(type.get()) : 0;
    if (!type || H5Tget_class(type.get()) != H5T_STRING || H5Tis_variable_str(type.get()) > 0 || n == 0 || n > 4096) {
        problem = std::string("attribute ") + name + " is not a fixed-length string";
        return {};
    }
    detail::hdf5_type memory(H5Tcopy(H5T_C_S1));
    std::string s(n, '\0');
    if (H5Tset_size(memory.get(), n) < 0 || H5Aread(a.get(), memory.get(), s.data()) < 0) {
        problem = std::string("attribute ") + name + " cannot be read (" + detail::hdf5_error_text() + ")";
        return {};
    }
    s.resize(std::strlen(s.c_str()));
    return s;
}

// One slot of a parallel snapshot file; with `verify`, each rank's hyperslab re-read and hashed.
hdf5_snapshot_info inspect_parallel_slot(hid_t file, slot_t slot,
                                         const std::vector<std::pair<std::uint64_t, std::uint64_t>>& parts, bool verify)
{
    namespace pf = detail::parallel_format;
    hdf5_snapshot_info info = damaged(pf::slot_dataset(slot), slot, "");
    info.element_type = "uint8";
    hdf5_dataset d(H5Dopen2(file, info.dataset.c_str(), H5P_DEFAULT));
    if (!d) {
        info.problem = "the dataset cannot be opened (" + detail::hdf5_error_text() + ")";
        return info;
    }
    pf::record r;
    std::string problem;
    const auto schema = u64s(d.get(), "schema", problem);
    const auto rslot = u64s(d.get(), "slot", problem);
    const auto step = u64s(d.get(), "step", problem);
    const auto bytes = u64s(d.get(), "bytes", problem);
    const auto sums = u64s(d.get(), "checksums", problem);
    const std::string state = text(d.get(), "state", problem);
    const auto stored = u64s(d.get(), "record_checksum", problem);
    if (H5Aexists(d.get(), "part_counts") > 0 || H5Aexists(d.get(), "part_bytes") > 0) {
        const auto counts = u64s(d.get(), "part_counts", problem);
        const auto sizes = u64s(d.get(), "part_bytes", problem);
        if (counts && sizes) {
            r.part_counts = *counts;
            r.part_bytes = *sizes;
        }
    }
    if (!problem.empty()) {
        info.problem = problem;
        return info;
    }
    info.schema = static_cast<std::uint32_t>((*schema)[0]);
    r.slot = static_cast<slot_t>((*rslot)[0]);
    r.step = static_cast<step_t>((*step)[0]);
    r.bytes = (*bytes)[0];
    r.checksums = *sums;
    info.step = r.step;
    info.bytes = r.bytes;
    info.rank_checksums = r.checksums;
    info.part_bytes = r.part_bytes;
    info.rank_part_counts = r.part_counts;
    info.checksum = r.checksums.empty() ? 0 : r.checksums[0];
    const std::optional<pf::record_state> parsed = pf::parse_state(state);
    if (!parsed) {
        info.problem = "unknown state \"" + state + "\"";
        return info;
    }
    r.state = *parsed;
    if (info.schema != pf::schema || r.checksums.size() != parts.size() || (*stored)[0] != r.record_checksum()) {
        info.problem = "its attributes are inconsistent: record_checksum is " + detail::hex((*stored)[0]) +
                       " but the attributes hash to " + detail::hex(r.record_checksum());
        return info;
    }
    if (r.slot != slot) {
        info.problem = "its record belongs to slot " + std::to_string(r.slot);
        return info;
    }
    if (r.state != pf::record_state::complete) {
        // A slot never written is not worth listing as a problem; the caller drops it.
        info.status = hdf5_snapshot_status::interrupted;
        info.problem = r.state == pf::record_state::empty
                           ? "empty"
                           : "its write of x_" + std::to_string(r.step) + " was interrupted (state is \"writing\")";
        return info;
    }
    // Only a complete record's parts describe its data.
    for (std::size_t rank = 0; rank < parts.size(); ++rank) {
        const std::vector<std::uint64_t> sizes = r.parts_of(rank, parts.size(), parts[rank].second);
        std::uint64_t sum = 0;
        for (const std::uint64_t n : sizes)
            sum += n;
        if (sizes.empty() || sum != parts[rank].second) {
            info.problem = "its part_bytes do not add up to rank " + std::to_string(rank) + "'s " +
                           std::to_string(parts[rank].second) + " bytes";
            return info;
        }
    }
    info.status = hdf5_snapshot_status::complete;
    if (!verify)
        return info;
    hdf5_dataspace file_space(H5Dget_space(d.get()));
    std::vector<std::byte> buffer;
    for (std::size_t rank = 0; rank < parts.size(); ++rank) {
        const auto [offset, count] = parts[rank];
        detail::xxh64_state h;
        const hsize_t piece = hsize_t{8} << 20;
        buffer.resize(static_cast<std::size_t>(std::min<hsize_t>(count, piece)));
        for (hsize_t start = 0; start < count; start += piece) {
            const hsize_t n = std::min<hsize_t>(piece, count - start);
            const hsize_t at[1] = {offset + start};
            const hsize_t size[1] = {n};
            hdf5_dataspace memory(H5Screate_simple(1, size, nullptr));
            if (!file_space || !memory ||
                H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, at, nullptr, size, nullptr) < 0 ||
                H5Dread(d.get(), H5T_NATIVE_UINT8, memory.get(), file_space.get(), H5P_DEFAULT, buffer.data()) < 0) {
                info.status = hdf5_snapshot_status::damaged;
                info.problem =
                    "rank " + std::to_string(rank) + "'s part cannot be read (" + detail::hdf5_error_text() + ")";
                return info;
            }
            h.update(buffer.data(), static_cast<std::size_t>(n));
        }
        const std::uint64_t sum = h.digest();
        if (sum != r.checksums[rank]) {
            info.status = hdf5_snapshot_status::damaged;
            info.problem = "checksum mismatch in rank " + std::to_string(rank) + "'s part (bytes " +
                           std::to_string(offset) + "+" + std::to_string(count) + "): the data hashes to " +
                           detail::hex(sum) + " but the record says " + detail::hex(r.checksums[rank]);
            return info;
        }
    }
    info.verified = true;
    return info;
}

// A parallel snapshot file (remat::mpi::parallel_hdf5_store's), or nullopt when `file` is something else.
std::optional<hdf5_file_contents> inspect_parallel(const std::filesystem::path& file, bool verify)
{
    namespace pf = detail::parallel_format;
    if (H5Fis_hdf5(file.c_str()) <= 0) {
        detail::hdf5_error_text();
        return std::nullopt;
    }
    detail::hdf5_file f(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
    std::string problem;
    if (!f || text(f.get(), "remat_format", problem) != pf::format_name) {
        detail::hdf5_error_text();
        return std::nullopt; // the serial path says what it is
    }
    hdf5_file_contents c;
    c.path = file;
    c.format = pf::format_name;
    const auto schema = u64s(f.get(), "remat_schema", problem);
    const auto slots = u64s(f.get(), "slots", problem);
    c.checksum_algorithm = text(f.get(), "checksum_algorithm", problem);
    if (!problem.empty())
        throw integrity_error(file.string() + ": a remat parallel snapshot file whose root " + problem);
    c.schema = static_cast<std::uint32_t>((*schema)[0]);
    if (c.schema != pf::schema)
        throw integrity_error(file.string() + ": a remat parallel snapshot file of schema " + std::to_string(c.schema) +
                              ", which this remat does not know (it reads schema " + std::to_string(pf::schema) + ")");
    hdf5_dataset d(H5Dopen2(f.get(), "/decomposition", H5P_DEFAULT));
    hdf5_dataspace space(d ? H5Dget_space(d.get()) : H5I_INVALID_HID);
    const hssize_t n = space ? H5Sget_simple_extent_npoints(space.get()) : -1;
    std::vector<std::uint64_t> table(n > 0 ? static_cast<std::size_t>(n) : 0);
    if (n < 2 || n % 2 != 0 || H5Dread(d.get(), H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, table.data()) < 0)
        throw integrity_error(file.string() + ": /decomposition cannot be read (" + detail::hdf5_error_text() + ")");
    for (std::size_t i = 0; i + 1 < table.size(); i += 2)
        c.decomposition.emplace_back(table[i], table[i + 1]);
    for (slot_t s = 0; s < static_cast<slot_t>((*slots)[0]); ++s) {
        hdf5_snapshot_info info = inspect_parallel_slot(f.get(), s, c.decomposition, verify);
        if (info.status == hdf5_snapshot_status::interrupted && info.problem == "empty")
            continue;
        c.snapshots.push_back(std::move(info));
    }
    return c;
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
    if (std::optional<hdf5_file_contents> parallel = inspect_parallel(file, verify))
        return std::move(*parallel);
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
    // A slot the write intent names held no committed snapshot when the writer stopped: what is torn there is
    // a write cut short (by a kill inside an HDF5 flush), not a lost snapshot.
    if (const std::optional<detail::write_intent_place> intent = detail::read_write_intent(f.file.get())) {
        for (const auto& [slot, place] : layout.slots)
            if (intent->latest.names(slot))
                contents.slots_in_writing.push_back(slot);
        for (hdf5_snapshot_info& s : contents.snapshots)
            if (s.status == hdf5_snapshot_status::damaged && intent->latest.names(s.slot)) {
                s.status = hdf5_snapshot_status::interrupted;
                s.problem += "; the file's write intent names slot " + std::to_string(s.slot) +
                             ": a write into it was cut short";
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
