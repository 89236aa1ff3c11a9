// The parallel HDF5 level. Layout (schema 1, docs/mpi.md):
//
//   /                        remat_format = "remat parallel snapshot file", remat_schema = 1,
//                            checksum_algorithm = "xxh64", ranks, slots
//   /decomposition           uint64 [ranks][2]: each rank's offset and bytes in every snapshot dataset
//   /snapshots/slot_NNNNNN   uint8 [sum of the parts], contiguous, allocated when the file is made; attributes
//                            schema, slot, step, bytes, state ("empty", "writing", "complete"), checksums
//                            (uint64 [ranks]: XXH64 of each rank's hyperslab), record_checksum; part_counts
//                            and part_bytes when a rank's state has several parts (parallel_format.hpp)
//
// The file is made complete (every slot's dataset allocated) under a temporary name and renamed into place,
// so a write changes only its own slot's data and attributes. A write marks the record "writing" (flushed)
// before the data moves and "complete" (flushed) after: an interrupted write never reads as valid.
#include "remat/mpi/parallel_hdf5_store.hpp"

#include "remat/hdf5_internal/hdf5_handle.hpp" // shared with remat::hdf5, compiled here against the MPI build of HDF5
#include "remat/hdf5_internal/parallel_format.hpp"
#include "remat/mpi/communicator.hpp"

#include <remat/detail/xxh64.hpp>
#include <remat/error.hpp>
#include <remat/store/detail/part_layout.hpp>
#include <remat/store/level_accounting.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <system_error>

namespace remat::mpi {

namespace {

namespace parallel_format = remat::detail::parallel_format;

using remat::detail::check_id;
using remat::detail::check_status;
using remat::detail::hdf5_attribute;
using remat::detail::hdf5_dataset;
using remat::detail::hdf5_dataspace;
using remat::detail::hdf5_file;
using remat::detail::hdf5_group;
using remat::detail::hdf5_plist;
using remat::detail::hdf5_scope;
using remat::detail::hdf5_type;

using parallel_format::format_name;
using parallel_format::record;
using parallel_format::record_state;
using parallel_format::schema;
using parallel_format::state_name;

std::string slot_name(slot_t slot)
{
    return parallel_format::slot_dataset(slot);
}

std::string hex(std::uint64_t v)
{
    char s[24];
    std::snprintf(s, sizeof s, "0x%016llx", static_cast<unsigned long long>(v));
    return s;
}

// Every rank's verdict on one phase of a collective operation: empty when it went well, else why not.
// All ranks get every rank's text, so they throw the same exception.
std::vector<std::string> agree(MPI_Comm comm, const std::string& mine)
{
    const int ranks = size(comm);
    constexpr int width = 400;
    std::array<char, width> text{};
    std::memcpy(text.data(), mine.data(), std::min<std::size_t>(mine.size(), width - 1));
    std::vector<char> all(static_cast<std::size_t>(ranks) * width);
    check(MPI_Allgather(text.data(), width, MPI_CHAR, all.data(), width, MPI_CHAR, comm), "MPI_Allgather");
    std::vector<std::string> out(static_cast<std::size_t>(ranks));
    for (int r = 0; r < ranks; ++r)
        out[static_cast<std::size_t>(r)] = std::string(&all[static_cast<std::size_t>(r) * width]);
    return out;
}

// Throws Error on every rank when any rank reported a problem: "what: rank 1: why; rank 3: why".
template <class Error>
void throw_if_any(const std::vector<std::string>& verdicts, const std::string& what)
{
    std::string message;
    for (std::size_t r = 0; r < verdicts.size(); ++r)
        if (!verdicts[r].empty())
            message += (message.empty() ? "" : "; ") + std::string("rank ") + std::to_string(r) + ": " + verdicts[r];
    if (!message.empty())
        throw Error(what + ": " + message);
}

// Runs `f` and returns "" or the message of what it threw (for agree()).
template <class F>
std::string attempt(F&& f)
{
    try {
        f();
        return {};
    } catch (const std::exception& e) {
        return e.what();
    }
}

void put_u64s(hid_t object, const char* name, const std::uint64_t* values, std::size_t count, const std::string& ctx)
{
    const hsize_t dims[1] = {count};
    hdf5_dataspace space(
        check_id(count == 1 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, dims, nullptr), ctx + ": dataspace"));
    hdf5_attribute a;
    if (H5Aexists(object, name) > 0)
        a = hdf5_attribute(check_id(H5Aopen(object, name, H5P_DEFAULT), ctx + ": cannot open attribute " + name));
    else
        a = hdf5_attribute(check_id(H5Acreate2(object, name, H5T_STD_U64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT),
                                    ctx + ": cannot create attribute " + name));
    check_status(H5Awrite(a.get(), H5T_NATIVE_UINT64, values), ctx + ": cannot write attribute " + name);
}

void put_text(hid_t object, const char* name, const std::string& value, const std::string& ctx)
{
    hdf5_type type(check_id(H5Tcopy(H5T_C_S1), ctx + ": string type"));
    // A fixed width (the longest state name), so that rewriting a state keeps the attribute's size.
    check_status(H5Tset_size(type.get(), parallel_format::state_width), ctx + ": string size");
    std::array<char, parallel_format::state_width> buffer{};
    std::memcpy(buffer.data(), value.data(), std::min(value.size(), buffer.size() - 1));
    hdf5_dataspace space(check_id(H5Screate(H5S_SCALAR), ctx + ": dataspace"));
    hdf5_attribute a;
    if (H5Aexists(object, name) > 0)
        a = hdf5_attribute(check_id(H5Aopen(object, name, H5P_DEFAULT), ctx + ": cannot open attribute " + name));
    else
        a = hdf5_attribute(check_id(H5Acreate2(object, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
                                    ctx + ": cannot create attribute " + name));
    check_status(H5Awrite(a.get(), type.get(), buffer.data()), ctx + ": cannot write attribute " + name);
}

std::vector<std::uint64_t> get_u64s(hid_t object, const char* name, std::size_t count, const std::string& ctx)
{
    if (H5Aexists(object, name) <= 0)
        throw integrity_error(ctx + ": attribute " + name + " is missing");
    hdf5_attribute a(check_id(H5Aopen(object, name, H5P_DEFAULT), ctx + ": cannot open attribute " + name));
    hdf5_dataspace space(check_id(H5Aget_space(a.get()), ctx + ": attribute space"));
    const hssize_t n = H5Sget_simple_extent_npoints(space.get());
    if (n != static_cast<hssize_t>(count))
        throw integrity_error(ctx + ": attribute " + name + " has " + std::to_string(n) + " values, expected " +
                              std::to_string(count));
    std::vector<std::uint64_t> v(count);
    check_status(H5Aread(a.get(), H5T_NATIVE_UINT64, v.data()), ctx + ": cannot read attribute " + name);
    return v;
}

std::string get_text(hid_t object, const char* name, const std::string& ctx)
{
    if (H5Aexists(object, name) <= 0)
        throw integrity_error(ctx + ": attribute " + name + " is missing");
    hdf5_attribute a(check_id(H5Aopen(object, name, H5P_DEFAULT), ctx + ": cannot open attribute " + name));
    hdf5_type type(check_id(H5Aget_type(a.get()), ctx + ": attribute type"));
    const std::size_t n = H5Tget_size(type.get());
    if (H5Tget_class(type.get()) != H5T_STRING || H5Tis_variable_str(type.get()) > 0 || n == 0 || n > 4096)
        throw integrity_error(ctx + ": attribute " + name + " is not a fixed-length string");
    hdf5_type memory(check_id(H5Tcopy(H5T_C_S1), ctx + ": string type"));
    check_status(H5Tset_size(memory.get(), n), ctx + ": string size");
    std::string s(n, '\0');
    check_status(H5Aread(a.get(), memory.get(), s.data()), ctx + ": cannot read attribute " + name);
    s.resize(std::strlen(s.c_str()));
    return s;
}

void put_record(hid_t dataset, const record& r, const std::string& ctx)
{
    const std::uint64_t numbers[] = {schema, static_cast<std::uint64_t>(r.slot), static_cast<std::uint64_t>(r.step),
                                     r.bytes};
    put_u64s(dataset, "schema", &numbers[0], 1, ctx);
    put_u64s(dataset, "slot", &numbers[1], 1, ctx);
    put_u64s(dataset, "step", &numbers[2], 1, ctx);
    put_u64s(dataset, "bytes", &numbers[3], 1, ctx);
    put_u64s(dataset, "checksums", r.checksums.data(), r.checksums.size(), ctx);
    // The part attributes change length from one snapshot to the next: made anew, or removed for
    // single-part states (so that such a record is what it always was).
    for (const char* name : {"part_counts", "part_bytes"}) {
        const htri_t exists = H5Aexists(dataset, name);
        check_status(exists < 0 ? -1 : 0, ctx + ": cannot look up attribute " + name);
        if (exists > 0)
            check_status(H5Adelete(dataset, name), ctx + ": cannot remove attribute " + name);
    }
    if (!r.part_counts.empty()) {
        put_u64s(dataset, "part_counts", r.part_counts.data(), r.part_counts.size(), ctx);
        put_u64s(dataset, "part_bytes", r.part_bytes.data(), r.part_bytes.size(), ctx);
    }
    put_text(dataset, "state", state_name(r.state), ctx);
    const std::uint64_t sum = r.record_checksum();
    put_u64s(dataset, "record_checksum", &sum, 1, ctx);
}

// The record of a slot's dataset, checked against its own record_checksum.
record get_record(hid_t dataset, std::size_t ranks, const std::string& ctx)
{
    record r;
    if (get_u64s(dataset, "schema", 1, ctx)[0] != schema)
        throw integrity_error(ctx + ": unknown record schema");
    r.slot = static_cast<slot_t>(get_u64s(dataset, "slot", 1, ctx)[0]);
    r.step = static_cast<step_t>(get_u64s(dataset, "step", 1, ctx)[0]);
    r.bytes = get_u64s(dataset, "bytes", 1, ctx)[0];
    r.checksums = get_u64s(dataset, "checksums", ranks, ctx);
    if (H5Aexists(dataset, "part_counts") > 0 || H5Aexists(dataset, "part_bytes") > 0) {
        r.part_counts = get_u64s(dataset, "part_counts", ranks, ctx);
        std::uint64_t parts = 0;
        for (const std::uint64_t n : r.part_counts)
            parts += n;
        if (parts == 0 || parts > (std::uint64_t{1} << 24))
            throw integrity_error(ctx + ": attribute part_counts adds up to " + std::to_string(parts) + " parts");
        r.part_bytes = get_u64s(dataset, "part_bytes", static_cast<std::size_t>(parts), ctx);
    }
    const std::string state = get_text(dataset, "state", ctx);
    const std::optional<record_state> parsed = parallel_format::parse_state(state);
    if (!parsed)
        throw integrity_error(ctx + ": unknown state \"" + state + "\"");
    r.state = *parsed;
    const std::uint64_t stored = get_u64s(dataset, "record_checksum", 1, ctx)[0];
    if (stored != r.record_checksum())
        throw integrity_error(ctx + ": its attributes are inconsistent: record_checksum is " + hex(stored) +
                              " but the attributes hash to " + hex(r.record_checksum()));
    return r;
}

// Moves this rank's parts between memory and its hyperslab of a slot dataset, from byte `at` on, in
// `rounds` collective transfers: part i in round i. A round past this rank's parts, or an empty part,
// selects nothing but still takes part, so that every rank makes the same collective calls (write and read
// alike). move(memory space, file space, data, round) makes the round's H5Dwrite or H5Dread. Returns the
// XXH64 of the parts one after the other.
template <class Parts, class Move>
std::uint64_t transfer_rounds(hid_t dataset, Parts parts, std::uint64_t rounds, std::uint64_t at,
                              const std::string& ctx, Move&& move)
{
    remat::detail::xxh64_state h;
    std::byte nothing{};
    for (std::uint64_t i = 0; i < rounds; ++i) {
        const bool has = i < parts.size() && parts[static_cast<std::size_t>(i)].size > 0;
        const hsize_t n[1] = {has ? parts[static_cast<std::size_t>(i)].size : 1};
        hdf5_dataspace file_space(check_id(H5Dget_space(dataset), ctx + ": dataspace"));
        hdf5_dataspace memory(check_id(H5Screate_simple(1, n, nullptr), ctx));
        if (has) {
            const hsize_t first[1] = {at};
            check_status(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, first, nullptr, n, nullptr),
                         ctx + ": hyperslab");
        } else {
            check_status(H5Sselect_none(file_space.get()), ctx + ": hyperslab");
            check_status(H5Sselect_none(memory.get()), ctx + ": hyperslab");
        }
        move(memory.get(), file_space.get(), has ? parts[static_cast<std::size_t>(i)].data : &nothing, i);
        if (has) {
            h.update(parts[static_cast<std::size_t>(i)].data, parts[static_cast<std::size_t>(i)].size);
            at += parts[static_cast<std::size_t>(i)].size;
        }
    }
    return h.digest();
}

hdf5_plist file_access(MPI_Comm comm, const std::string& ctx)
{
    hdf5_plist fapl(check_id(H5Pcreate(H5P_FILE_ACCESS), ctx + ": property list"));
    check_status(H5Pset_fapl_mpio(fapl.get(), comm, MPI_INFO_NULL), ctx + ": cannot use MPI-IO");
    // The 1.8 format: checksummed object headers, and no "open for writing" mark left by a dead writer.
    check_status(H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_V18, H5F_LIBVER_V18), ctx + ": format bounds");
    check_status(H5Pset_all_coll_metadata_ops(fapl.get(), true), ctx + ": collective metadata reads");
    check_status(H5Pset_coll_metadata_write(fapl.get(), true), ctx + ": collective metadata writes");
    return fapl;
}

} // namespace

struct parallel_hdf5_store::impl {
    MPI_Comm comm = MPI_COMM_NULL;
    std::filesystem::path path;
    slot_t slots = 0;
    int rank = 0;
    int ranks = 1;
    std::vector<part_extent> parts;
    std::uint64_t total_bytes = 0;
    options opts;
    hdf5_file file;
    hdf5_plist transfer;          // collective MPI-IO data transfers
    std::vector<step_t> held;     // the step each slot holds for the schedule (-1: free)
    std::vector<step_t> complete; // the step whose complete snapshot each slot has in the file (-1: none)
    std::vector<std::vector<std::size_t>> layouts; // this rank's part sizes in each complete slot
    std::vector<std::string> damaged; // why a resumed file's slot holds no valid snapshot ("" when it is empty)
    std::vector<std::uint64_t> gathered_counts; // every rank's part count and sizes in a write (kept, so
    std::vector<std::uint64_t> gathered_bytes;  //   that a write allocates nothing once they are large enough)
    level_accounting counts;

    [[nodiscard]] const part_extent& mine() const { return parts[static_cast<std::size_t>(rank)]; }
    [[nodiscard]] std::string where(slot_t slot) const { return path.string() + ": " + slot_name(slot); }

    void check_open(const char* what) const
    {
        if (!file)
            throw argument_error(std::string("parallel_hdf5_store: ") + what + " after close() on " + path.string());
    }

    void flush_file(const std::string& ctx)
    {
        check_status(H5Fflush(file.get(), H5F_SCOPE_GLOBAL), ctx + ": flush failed");
    }

    hdf5_dataset open_slot(slot_t slot)
    {
        return hdf5_dataset(check_id(H5Dopen2(file.get(), slot_name(slot).c_str(), H5P_DEFAULT),
                                     where(slot) + ": cannot open the dataset"));
    }

    // Selects this rank's hyperslab in a slot dataset's file space.
    hdf5_dataspace my_hyperslab(hid_t dataset, const std::string& ctx) const
    {
        hdf5_dataspace space(check_id(H5Dget_space(dataset), ctx + ": dataspace"));
        const hsize_t start[1] = {mine().offset};
        const hsize_t count[1] = {mine().bytes};
        check_status(H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr),
                     ctx + ": hyperslab");
        return space;
    }

    void create(const std::filesystem::path& temporary);
    void open_existing(bool resume);
};

void parallel_hdf5_store::impl::create(const std::filesystem::path& temporary)
{
    const std::string ctx = temporary.string();
    hdf5_plist fapl = file_access(comm, ctx);
    hdf5_file f(check_id(H5Fcreate(temporary.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()), "cannot create " + ctx));
    {
        // The format name, in a string type of its own width (the states' width is 16).
        hdf5_type type(check_id(H5Tcopy(H5T_C_S1), ctx + ": string type"));
        const std::string name = format_name;
        check_status(H5Tset_size(type.get(), name.size() + 1), ctx + ": string size");
        hdf5_dataspace scalar(check_id(H5Screate(H5S_SCALAR), ctx + ": dataspace"));
        hdf5_attribute a(check_id(
            H5Acreate2(f.get(), "remat_format", type.get(), scalar.get(), H5P_DEFAULT, H5P_DEFAULT), ctx + ": format"));
        check_status(H5Awrite(a.get(), type.get(), name.c_str()), ctx + ": format");
    }
    const std::uint64_t header[] = {schema, static_cast<std::uint64_t>(ranks), static_cast<std::uint64_t>(slots)};
    put_u64s(f.get(), "remat_schema", &header[0], 1, ctx);
    put_u64s(f.get(), "ranks", &header[1], 1, ctx);
    put_u64s(f.get(), "slots", &header[2], 1, ctx);
    put_text(f.get(), "checksum_algorithm", "xxh64", ctx);

    // The decomposition: every rank writes the same values (metadata writes are collective).
    {
        std::vector<std::uint64_t> table;
        for (const part_extent& p : parts) {
            table.push_back(p.offset);
            table.push_back(p.bytes);
        }
        const hsize_t dims[2] = {static_cast<hsize_t>(ranks), 2};
        hdf5_dataspace space(check_id(H5Screate_simple(2, dims, nullptr), ctx + ": dataspace"));
        hdf5_dataset d(check_id(
            H5Dcreate2(f.get(), "decomposition", H5T_STD_U64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
            ctx + ": cannot create /decomposition"));
        // Only rank 0 contributes the data; the others select nothing.
        hdf5_dataspace file_space(check_id(H5Dget_space(d.get()), ctx + ": dataspace"));
        hdf5_dataspace memory(check_id(H5Screate_simple(2, dims, nullptr), ctx + ": dataspace"));
        if (rank != 0) {
            H5Sselect_none(file_space.get());
            H5Sselect_none(memory.get());
        }
        check_status(H5Dwrite(d.get(), H5T_NATIVE_UINT64, memory.get(), file_space.get(), transfer.get(), table.data()),
                     ctx + ": cannot write /decomposition");
    }

    {
        hdf5_group group(check_id(H5Gcreate2(f.get(), "snapshots", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                                  ctx + ": cannot create /snapshots"));
        hdf5_plist dcpl(check_id(H5Pcreate(H5P_DATASET_CREATE), ctx + ": property list"));
        check_status(H5Pset_layout(dcpl.get(), H5D_CONTIGUOUS), ctx + ": layout");
        check_status(H5Pset_alloc_time(dcpl.get(), H5D_ALLOC_TIME_EARLY), ctx + ": allocation time");
        check_status(H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER), ctx + ": fill time");
        const hsize_t dims[1] = {total_bytes};
        hdf5_dataspace space(check_id(H5Screate_simple(1, dims, nullptr), ctx + ": dataspace"));
        for (slot_t s = 0; s < slots; ++s) {
            hdf5_dataset d(check_id(H5Dcreate2(f.get(), slot_name(s).c_str(), H5T_NATIVE_UINT8, space.get(),
                                               H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
                                    ctx + ": cannot create " + slot_name(s)));
            record r;
            r.slot = s;
            r.checksums.assign(static_cast<std::size_t>(ranks), 0);
            put_record(d.get(), r, ctx + ": " + slot_name(s));
        }
    } // every object closed before the file: parallel HDF5 refuses to close a file with objects open
    check_status(H5Fflush(f.get(), H5F_SCOPE_GLOBAL), ctx + ": flush failed");
    if (!f.reset())
        throw io_error("closing " + ctx + " failed (HDF5: " + remat::detail::hdf5_error_text() + ")");
}

void parallel_hdf5_store::impl::open_existing(bool resume)
{
    const std::string ctx = path.string();
    hdf5_plist fapl = file_access(comm, ctx);
    file = hdf5_file(H5Fopen(path.c_str(), H5F_ACC_RDWR, fapl.get()));
    if (!file)
        remat::detail::throw_hdf5<io_error>("cannot open " + ctx);
    if (!resume)
        return;
    if (H5Aexists(file.get(), "remat_format") <= 0)
        throw integrity_error(ctx + ": not a remat parallel snapshot file (no remat_format)");
    {
        hdf5_attribute a(check_id(H5Aopen(file.get(), "remat_format", H5P_DEFAULT), ctx + ": remat_format"));
        hdf5_type type(check_id(H5Aget_type(a.get()), ctx + ": remat_format type"));
        std::string s(H5Tget_size(type.get()), '\0');
        hdf5_type memory(check_id(H5Tcopy(H5T_C_S1), ctx));
        check_status(H5Tset_size(memory.get(), s.size()), ctx);
        check_status(H5Aread(a.get(), memory.get(), s.data()), ctx + ": remat_format");
        s.resize(std::strlen(s.c_str()));
        if (s != format_name)
            throw integrity_error(ctx + ": not a remat parallel snapshot file (remat_format is \"" + s + "\")");
    }
    if (get_u64s(file.get(), "remat_schema", 1, ctx)[0] != schema)
        throw integrity_error(ctx + ": unknown remat_schema");
    const auto file_ranks = get_u64s(file.get(), "ranks", 1, ctx)[0];
    const auto file_slots = static_cast<slot_t>(get_u64s(file.get(), "slots", 1, ctx)[0]);
    // The decomposition as the file records it (every rank reads the whole table).
    hdf5_dataset d(check_id(H5Dopen2(file.get(), "decomposition", H5P_DEFAULT), ctx + ": cannot open /decomposition"));
    hdf5_dataspace space(check_id(H5Dget_space(d.get()), ctx + ": /decomposition"));
    if (H5Sget_simple_extent_npoints(space.get()) != static_cast<hssize_t>(2 * file_ranks))
        throw integrity_error(ctx + ": /decomposition does not have one row per rank");
    std::vector<std::uint64_t> table(2 * file_ranks);
    check_status(H5Dread(d.get(), H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, transfer.get(), table.data()),
                 ctx + ": cannot read /decomposition");
    std::string differs;
    if (file_ranks != static_cast<std::uint64_t>(ranks))
        differs = "it was written by " + std::to_string(file_ranks) + " ranks, this job has " + std::to_string(ranks);
    else
        for (int r = 0; r < ranks; ++r) {
            const part_extent was{table[2 * static_cast<std::size_t>(r)], table[2 * static_cast<std::size_t>(r) + 1]};
            if (was != parts[static_cast<std::size_t>(r)])
                differs += (differs.empty() ? "" : "; ") + std::string("rank ") + std::to_string(r) +
                           "'s part is bytes " + std::to_string(parts[static_cast<std::size_t>(r)].offset) + "+" +
                           std::to_string(parts[static_cast<std::size_t>(r)].bytes) + " here but " +
                           std::to_string(was.offset) + "+" + std::to_string(was.bytes) + " in the file";
        }
    if (!differs.empty())
        throw argument_error(ctx + " was written by another decomposition: " + differs);
    if (file_slots < slots)
        throw argument_error(ctx + " has " + std::to_string(file_slots) + " slots, fewer than the " +
                             std::to_string(slots) + " asked for");
    for (slot_t s = 0; s < slots; ++s) {
        const auto i = static_cast<std::size_t>(s);
        hdf5_dataset ds = open_slot(s);
        try {
            const record r = get_record(ds.get(), static_cast<std::size_t>(ranks), where(s));
            const std::vector<std::uint64_t> sizes =
                r.parts_of(static_cast<std::size_t>(rank), static_cast<std::size_t>(ranks), mine().bytes);
            std::uint64_t sum = 0;
            for (const std::uint64_t n : sizes)
                sum += n;
            if (r.state == record_state::empty)
                continue;
            if (r.state == record_state::writing)
                damaged[i] = where(s) + ": its write of x_" + std::to_string(r.step) + " was interrupted";
            else if (r.slot != s || r.bytes != total_bytes)
                damaged[i] = where(s) + ": its record holds slot " + std::to_string(r.slot) + " of " +
                             std::to_string(r.bytes) + " bytes, not slot " + std::to_string(s) + " of " +
                             std::to_string(total_bytes);
            else if (sizes.empty() || sum != mine().bytes)
                damaged[i] = where(s) + ": its part_bytes do not add up to this rank's " +
                             std::to_string(mine().bytes) + " bytes";
            else {
                complete[i] = r.step;
                layouts[i].assign(sizes.begin(), sizes.end());
            }
        } catch (const integrity_error& e) {
            // A damaged record holds no snapshot; reading the slot says why, as hdf5_store does.
            damaged[i] = e.what();
        }
    }
}

parallel_hdf5_store::parallel_hdf5_store(MPI_Comm comm, std::filesystem::path file, slot_t slots,
                                         std::uint64_t part_bytes, options opts)
    : impl_(std::make_unique<impl>())
{
    impl& m = *impl_;
    m.comm = comm;
    m.path = std::move(file);
    m.slots = slots;
    m.opts = opts;
    m.rank = rank(comm);
    m.ranks = size(comm);
    m.counts = level_accounting(opts.name);

    // What every rank was asked, gathered first: the same verdict everywhere.
    const std::array<std::uint64_t, 3> asked{static_cast<std::uint64_t>(slots), part_bytes,
                                             remat::detail::xxh64(m.path.c_str(), std::strlen(m.path.c_str()))};
    std::vector<std::uint64_t> all(3 * static_cast<std::size_t>(m.ranks));
    check(MPI_Allgather(asked.data(), 3, MPI_UINT64_T, all.data(), 3, MPI_UINT64_T, comm), "MPI_Allgather");
    std::string bad;
    for (int r = 0; r < m.ranks; ++r) {
        const std::uint64_t* a = &all[3 * static_cast<std::size_t>(r)];
        std::string why;
        if (static_cast<slot_t>(a[0]) < 1)
            why = "needs at least one slot, got " + std::to_string(static_cast<slot_t>(a[0]));
        else if (a[0] != all[0])
            why = "asked for " + std::to_string(a[0]) + " slots, rank 0 for " + std::to_string(all[0]);
        else if (a[1] == 0)
            why = "gave a part of 0 bytes";
        else if (a[2] != all[2])
            why = "named another file than rank 0";
        if (!why.empty())
            bad += (bad.empty() ? "" : "; ") + std::string("rank ") + std::to_string(r) + " " + why;
    }
    if (!bad.empty())
        throw argument_error("parallel_hdf5_store(" + m.path.string() + "): " + bad);
    for (int r = 0; r < m.ranks; ++r) {
        m.parts.push_back({m.total_bytes, all[3 * static_cast<std::size_t>(r) + 1]});
        m.total_bytes += all[3 * static_cast<std::size_t>(r) + 1];
    }
    m.held.assign(static_cast<std::size_t>(slots), -1);
    m.complete.assign(static_cast<std::size_t>(slots), -1);
    m.layouts.assign(static_cast<std::size_t>(slots), {});
    m.damaged.assign(static_cast<std::size_t>(slots), {});
    m.gathered_counts.assign(static_cast<std::size_t>(m.ranks), 0);

    hdf5_scope scope;
    m.transfer = hdf5_plist(check_id(H5Pcreate(H5P_DATASET_XFER), "property list"));
    check_status(H5Pset_dxpl_mpio(m.transfer.get(), H5FD_MPIO_COLLECTIVE), "collective transfers");

    const bool resume = opts.mode == open_mode::resume;
    if (!resume) {
        // Never replace something that is not ours; rank 0 looks, everyone hears its verdict.
        std::string refusal;
        if (m.rank == 0) {
            std::error_code ec;
            if (std::filesystem::exists(m.path, ec) && std::filesystem::file_size(m.path, ec) > 0) {
                const htri_t h5 = H5Fis_hdf5(m.path.c_str());
                bool ours = false;
                if (h5 > 0) {
                    hdf5_file f(H5Fopen(m.path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
                    ours = f && H5Aexists(f.get(), "remat_format") > 0; // checked by name below
                    if (ours) {
                        hdf5_attribute a(H5Aopen(f.get(), "remat_format", H5P_DEFAULT));
                        hdf5_type t(H5Aget_type(a.get()));
                        std::string s(t ? H5Tget_size(t.get()) : 0, '\0');
                        hdf5_type memory(H5Tcopy(H5T_C_S1));
                        ours = !s.empty() && H5Tset_size(memory.get(), s.size()) >= 0 &&
                               H5Aread(a.get(), memory.get(), s.data()) >= 0 && std::string(s.c_str()) == format_name;
                    }
                }
                remat::detail::hdf5_error_text(); // clears what the probing left
                if (!ours)
                    refusal = "refusing to replace " + m.path.string() +
                              ": it is not a remat parallel snapshot file (remove it or choose another path)";
            }
        }
        const std::vector<std::string> verdicts = agree(comm, refusal);
        if (!verdicts[0].empty())
            throw io_error(verdicts[0]);
        const std::filesystem::path temporary = m.path.string() + ".creating";
        throw_if_any<io_error>(agree(comm, attempt([&] { m.create(temporary); })),
                               "parallel_hdf5_store: creating " + m.path.string() + " failed");
        // Renamed into place complete; then every rank opens it.
        std::string renamed;
        if (m.rank == 0) {
            std::error_code ec;
            std::filesystem::rename(temporary, m.path, ec);
            if (ec)
                renamed = "cannot rename " + temporary.string() + " to " + m.path.string() + ": " + ec.message();
            else if (const int fd = ::open(m.path.parent_path().empty() ? "." : m.path.parent_path().c_str(),
                                           O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                     fd >= 0) {
                (void)::fsync(fd);
                ::close(fd);
            }
        }
        throw_if_any<io_error>(agree(comm, renamed), "parallel_hdf5_store");
    }
    const std::vector<std::string> opened = agree(comm, attempt([&] { m.open_existing(resume); }));
    // The same verdict on every rank; the kind of error of the first rank that failed.
    for (std::size_t r = 0; r < opened.size(); ++r)
        if (!opened[r].empty()) {
            m.file.reset();
            const std::string& why = opened[r];
            if (why.find("another decomposition") != std::string::npos || why.find("slots, fewer") != std::string::npos)
                throw argument_error(why);
            if (why.find("not a remat parallel") != std::string::npos ||
                why.find("inconsistent") != std::string::npos || why.find("unknown") != std::string::npos ||
                why.find("missing") != std::string::npos)
                throw integrity_error(why);
            throw io_error("rank " + std::to_string(r) + ": " + why);
        }
}

parallel_hdf5_store::parallel_hdf5_store(MPI_Comm comm, std::filesystem::path file, slot_t slots,
                                         std::uint64_t part_bytes)
    : parallel_hdf5_store(comm, std::move(file), slots, part_bytes, options{})
{
}

parallel_hdf5_store::~parallel_hdf5_store()
{
    if (impl_ && impl_->file) {
        hdf5_scope scope;
        impl_->file.reset();
    }
}

level_capacity parallel_hdf5_store::capacity() const noexcept
{
    level_capacity c;
    c.slots = impl_->slots;
    c.bytes = static_cast<std::uint64_t>(impl_->slots) * impl_->mine().bytes;
    return c;
}

void parallel_hdf5_store::write(slot_t slot, step_t step, const_parts src)
{
    impl& m = *impl_;
    m.check_open("write");
    const auto start = std::chrono::steady_clock::now();
    const std::uint64_t size = total_bytes(src);
    std::string local;
    if (slot < 0 || slot >= m.slots)
        local = "slot " + std::to_string(slot) + " is outside the capacity of " + std::to_string(m.slots) + " slots";
    else if (m.held[static_cast<std::size_t>(slot)] >= 0)
        local =
            "slot " + std::to_string(slot) + " still holds x_" + std::to_string(m.held[static_cast<std::size_t>(slot)]);
    else if (size != m.mine().bytes)
        local = "x_" + std::to_string(step) + " has " + std::to_string(size) + " bytes, this rank's part " +
                std::to_string(m.mine().bytes);
    else if (std::any_of(src.begin(), src.end(), [](const const_bytes& p) { return p.space != memory_space::host; }))
        local = "x_" + std::to_string(step) + " is in device memory; the parallel HDF5 level takes host memory";
    const std::vector<std::string> asked = agree(m.comm, local);
    const std::string what = "writing x_" + std::to_string(step) + " into parallel disk slot " + std::to_string(slot) +
                             " of " + m.path.string() + " failed";
    for (const std::string& v : asked) // a slot the level lacks or one still held: the schedule's error
        if (v.find("outside the capacity") != std::string::npos || v.find("still holds") != std::string::npos)
            throw_if_any<schedule_error>(asked, what);
    throw_if_any<argument_error>(asked, what);

    // Every rank's part sizes, so that every rank writes the same record (attribute writes are collective).
    const std::uint64_t count = src.size();
    check(MPI_Allgather(&count, 1, MPI_UINT64_T, m.gathered_counts.data(), 1, MPI_UINT64_T, m.comm), "MPI_Allgather");
    std::uint64_t rounds = 0;
    for (const std::uint64_t n : m.gathered_counts)
        rounds = std::max(rounds, n);
    const bool single = rounds == 1;
    // Then each rank's sizes in a block of `rounds` (zeros after its own), rank 0's first.
    m.gathered_bytes.assign(static_cast<std::size_t>(rounds) * static_cast<std::size_t>(m.ranks + 1), 0);
    std::uint64_t* block =
        m.gathered_bytes.data() + static_cast<std::size_t>(rounds) * static_cast<std::size_t>(m.ranks);
    for (std::size_t i = 0; i < src.size(); ++i)
        block[i] = src[i].size;
    check(MPI_Allgather(block, static_cast<int>(rounds), MPI_UINT64_T, m.gathered_bytes.data(),
                        static_cast<int>(rounds), MPI_UINT64_T, m.comm),
          "MPI_Allgather");

    hdf5_scope scope;
    const std::string ctx = m.where(slot);
    hdf5_dataset d;
    record r;
    r.slot = slot;
    r.step = step;
    r.bytes = m.total_bytes;
    r.checksums.assign(static_cast<std::size_t>(m.ranks), 0);
    if (!single) {
        r.part_counts = m.gathered_counts;
        for (int k = 0; k < m.ranks; ++k)
            for (std::uint64_t i = 0; i < m.gathered_counts[static_cast<std::size_t>(k)]; ++i)
                r.part_bytes.push_back(m.gathered_bytes[static_cast<std::size_t>(k) * rounds + i]);
    }
    // 1. The slot's old snapshot is no longer valid once its bytes start to change.
    throw_if_any<io_error>(agree(m.comm, attempt([&] {
                                     d = m.open_slot(slot);
                                     m.complete[static_cast<std::size_t>(slot)] = -1;
                                     m.damaged[static_cast<std::size_t>(slot)].clear();
                                     r.state = record_state::writing;
                                     put_record(d.get(), r, ctx);
                                     m.flush_file(ctx);
                                 })),
                           what);
    // 2. The bytes, each rank its hyperslab, collectively: one write per part, each part straight from the
    //    state into its place in the hyperslab (a rank with fewer parts, or an empty one, selects nothing);
    //    the checksum of this rank's parts one after the other.
    std::uint64_t sum = 0;
    throw_if_any<io_error>(
        agree(m.comm, attempt([&] {
                  sum = transfer_rounds(
                      d.get(), src, rounds, m.mine().offset, ctx,
                      [&](hid_t memory, hid_t file_space, const void* data, std::uint64_t i) {
                          check_status(H5Dwrite(d.get(), H5T_NATIVE_UINT8, memory, file_space, m.transfer.get(), data),
                                       ctx + ": writing the data failed" +
                                           (single ? "" : " (part " + std::to_string(i) + ")"));
                      });
              })),
        what);
    // 3. Every rank's checksum in the record, which now says complete.
    check(MPI_Allgather(&sum, 1, MPI_UINT64_T, r.checksums.data(), 1, MPI_UINT64_T, m.comm), "MPI_Allgather");
    r.state = record_state::complete;
    throw_if_any<io_error>(agree(m.comm, attempt([&] {
                                     put_record(d.get(), r, ctx);
                                     if (m.opts.durable_writes)
                                         m.flush_file(ctx);
                                 })),
                           what);
    m.held[static_cast<std::size_t>(slot)] = step;
    m.complete[static_cast<std::size_t>(slot)] = step;
    std::vector<std::size_t>& layout = m.layouts[static_cast<std::size_t>(slot)];
    layout.resize(src.size());
    for (std::size_t i = 0; i < src.size(); ++i)
        layout[i] = src[i].size;
    m.counts.wrote(size);
    m.counts.waited(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

void parallel_hdf5_store::read(slot_t slot, step_t step, mutable_parts dst)
{
    impl& m = *impl_;
    m.check_open("read");
    const auto start = std::chrono::steady_clock::now();
    const std::uint64_t size = total_bytes(dst);
    std::string local;
    if (slot < 0 || slot >= m.slots)
        local = "slot " + std::to_string(slot) + " is outside the capacity of " + std::to_string(m.slots) + " slots";
    else if (m.complete[static_cast<std::size_t>(slot)] < 0 && !m.damaged[static_cast<std::size_t>(slot)].empty())
        local = "slot " + std::to_string(slot) + " is damaged, not x_" + std::to_string(step) + " (" +
                m.damaged[static_cast<std::size_t>(slot)] + ")";
    else if (m.complete[static_cast<std::size_t>(slot)] < 0)
        local = "slot " + std::to_string(slot) + " holds no snapshot";
    else if (m.complete[static_cast<std::size_t>(slot)] != step)
        local = "slot " + std::to_string(slot) + " holds x_" +
                std::to_string(m.complete[static_cast<std::size_t>(slot)]) + ", not x_" + std::to_string(step);
    else if (size != m.mine().bytes)
        local = "the state has " + std::to_string(size) + " bytes, this rank's part " + std::to_string(m.mine().bytes);
    else if (std::any_of(dst.begin(), dst.end(), [](const mutable_bytes& p) { return p.space != memory_space::host; }))
        local = "the state is in device memory; the parallel HDF5 level reads into host memory";
    else if (const std::optional<std::string> why =
                 remat::detail::part_mismatch(m.layouts[static_cast<std::size_t>(slot)], dst, step))
        local = "slot " + std::to_string(slot) + " holds " + *why;
    const std::string what = "reading x_" + std::to_string(step) + " from parallel disk slot " + std::to_string(slot) +
                             " of " + m.path.string();
    const std::vector<std::string> asked = agree(m.comm, local);
    for (const std::string& v : asked) // a slot the level lacks or an empty one: the schedule's error
        if (v.find("outside the capacity") != std::string::npos || v.find("holds no snapshot") != std::string::npos)
            throw_if_any<schedule_error>(asked, what);
    for (const std::string& v : asked)
        if (v.find("device memory") != std::string::npos)
            throw_if_any<argument_error>(asked, what);
    throw_if_any<integrity_error>(asked, what);

    hdf5_scope scope;
    const std::string ctx = m.where(slot);
    std::string problem;
    try {
        hdf5_dataset d = m.open_slot(slot);
        const record r = get_record(d.get(), static_cast<std::size_t>(m.ranks), ctx);
        // Every rank reads the same record, so all make the same number of collective reads.
        std::uint64_t rounds = 1;
        for (const std::uint64_t n : r.part_counts)
            rounds = std::max(rounds, n);
        const std::vector<std::uint64_t> recorded =
            r.parts_of(static_cast<std::size_t>(m.rank), static_cast<std::size_t>(m.ranks), m.mine().bytes);
        if (r.state != record_state::complete)
            problem = ctx + ": the record says " + state_name(r.state) + ", not complete";
        else if (r.slot != slot || r.step != step || r.bytes != m.total_bytes)
            problem = ctx + ": the record holds x_" + std::to_string(r.step) + " of slot " + std::to_string(r.slot) +
                      " (" + std::to_string(r.bytes) + " bytes), not x_" + std::to_string(step) + " of slot " +
                      std::to_string(slot) + " (" + std::to_string(m.total_bytes) + " bytes)";
        else if (recorded.empty())
            problem = ctx + ": its part_counts and part_bytes do not describe " + std::to_string(m.ranks) + " ranks";
        else if (const std::optional<std::string> why = remat::detail::part_mismatch(
                     std::vector<std::size_t>(recorded.begin(), recorded.end()), dst, step))
            problem = ctx + ": the file holds " + *why;
        // The data moves collectively even when this rank's record is bad (it then selects nothing), so
        // that no rank waits.
        const std::uint64_t sum = transfer_rounds(
            d.get(), problem.empty() ? dst : mutable_parts{}, rounds, m.mine().offset, ctx,
            [&](hid_t memory, hid_t file_space, void* data, std::uint64_t) {
                check_status(H5Dread(d.get(), H5T_NATIVE_UINT8, memory, file_space, m.transfer.get(), data),
                             ctx + ": reading the data failed");
            });
        if (problem.empty()) {
            const std::uint64_t expected = r.checksums[static_cast<std::size_t>(m.rank)];
            if (sum != expected)
                problem = ctx + ": checksum mismatch for x_" + std::to_string(step) + " in this rank's bytes " +
                          std::to_string(m.mine().offset) + "+" + std::to_string(m.mine().bytes) +
                          ": the data hashes to " + hex(sum) + " but the record says " + hex(expected);
        }
    } catch (const std::exception& e) {
        problem = e.what();
    }
    throw_if_any<integrity_error>(agree(m.comm, problem), what);
    m.counts.read(size);
    m.counts.waited(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

std::span<const std::size_t> parallel_hdf5_store::part_sizes(slot_t slot) const
{
    const impl& m = *impl_;
    if (slot < 0 || slot >= m.slots || m.complete[static_cast<std::size_t>(slot)] < 0)
        return {};
    return m.layouts[static_cast<std::size_t>(slot)];
}

void parallel_hdf5_store::release(slot_t slot)
{
    impl& m = *impl_;
    if (slot < 0 || slot >= m.slots || m.held[static_cast<std::size_t>(slot)] < 0)
        throw schedule_error("release of parallel disk slot " + std::to_string(slot) + " of " + m.path.string() +
                             ", which holds no snapshot");
    m.held[static_cast<std::size_t>(slot)] = -1;
    m.counts.released(m.mine().bytes);
}

void parallel_hdf5_store::release_all() noexcept
{
    impl& m = *impl_;
    std::fill(m.held.begin(), m.held.end(), -1);
    m.counts.released_all();
}

std::size_t parallel_hdf5_store::snapshot_bytes(slot_t slot) const
{
    const impl& m = *impl_;
    if (slot < 0 || slot >= m.slots || m.held[static_cast<std::size_t>(slot)] < 0)
        return 0;
    return m.mine().bytes;
}

step_t parallel_hdf5_store::snapshot_step(slot_t slot) const
{
    const impl& m = *impl_;
    if (slot < 0 || slot >= m.slots)
        return -1;
    return m.complete[static_cast<std::size_t>(slot)];
}

const level_stats& parallel_hdf5_store::stats() const noexcept
{
    return impl_->counts.stats();
}

void parallel_hdf5_store::restart_peaks() noexcept
{
    impl_->counts.restart_peaks();
}

const std::vector<part_extent>& parallel_hdf5_store::decomposition() const noexcept
{
    return impl_->parts;
}

void parallel_hdf5_store::flush()
{
    impl& m = *impl_;
    m.check_open("flush");
    hdf5_scope scope;
    throw_if_any<io_error>(agree(m.comm, attempt([&] { m.flush_file(m.path.string()); })),
                           "flushing " + m.path.string() + " failed");
}

void parallel_hdf5_store::close()
{
    impl& m = *impl_;
    if (!m.file)
        return;
    hdf5_scope scope;
    std::string problem = attempt([&] { m.flush_file(m.path.string()); });
    if (!m.file.reset() && problem.empty())
        problem = "closing failed (HDF5: " + remat::detail::hdf5_error_text() + ")";
    throw_if_any<io_error>(agree(m.comm, problem), "closing " + m.path.string() + " failed");
}

const std::filesystem::path& parallel_hdf5_store::path() const noexcept
{
    return impl_->path;
}

} // namespace remat::mpi
