#include "snapshot_format.hpp"
#include "creation_guard.hpp"
#include "memory_file.hpp"
#include "write_intent.hpp"

#include "remat/detail/xxh64.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <system_error>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

namespace remat {

std::string_view to_string(hdf5_element e) noexcept
{
    switch (e) {
    case hdf5_element::int32:
        return "int32";
    case hdf5_element::int64:
        return "int64";
    case hdf5_element::float32:
        return "float32";
    case hdf5_element::float64:
        return "float64";
    default:
        return "uint8";
    }
}

std::size_t element_bytes(hdf5_element e) noexcept
{
    switch (e) {
    case hdf5_element::int32:
    case hdf5_element::float32:
        return 4;
    case hdf5_element::int64:
    case hdf5_element::float64:
        return 8;
    default:
        return 1;
    }
}

} // namespace remat

namespace remat::detail {
namespace {

constexpr std::size_t text_attribute_bytes = 24; // fixed-length strings: no global heap, one header write

const char* state_name(slot_state s) noexcept
{
    return s == slot_state::complete ? "complete" : "writing";
}

hdf5_type text_type()
{
    hdf5_type t(check_id(H5Tcopy(H5T_C_S1), "cannot make an HDF5 string type"));
    check_status(H5Tset_size(t.get(), text_attribute_bytes), "cannot size an HDF5 string type");
    check_status(H5Tset_strpad(t.get(), H5T_STR_NULLTERM), "cannot set an HDF5 string type's padding");
    return t;
}

// Creates (when `create`) or rewrites a scalar attribute.
void put_attribute(hid_t object, const char* name, hid_t file_type, hid_t memory_type, const void* value, bool create,
                   const std::string& context)
{
    hdf5_attribute a;
    if (create) {
        hdf5_dataspace scalar(check_id(H5Screate(H5S_SCALAR), "cannot make a scalar dataspace"));
        a = hdf5_attribute(H5Acreate2(object, name, file_type, scalar.get(), H5P_DEFAULT, H5P_DEFAULT));
    } else {
        a = hdf5_attribute(H5Aopen(object, name, H5P_DEFAULT));
    }
    check_id(a.get(), context + ": cannot " + (create ? "create" : "open") + " attribute " + name);
    check_status(H5Awrite(a.get(), memory_type, value), context + ": cannot write attribute " + name);
}

void put_text(hid_t object, const char* name, std::string_view text, bool create, const std::string& context)
{
    std::array<char, text_attribute_bytes> buffer{};
    std::memcpy(buffer.data(), text.data(), std::min(text.size(), buffer.size() - 1));
    const hdf5_type t = text_type();
    put_attribute(object, name, t.get(), t.get(), buffer.data(), create, context);
}

// Reading attributes of files that may be damaged or foreign: every failure becomes a problem text.
class attribute_reader {
public:
    explicit attribute_reader(hid_t object) : object_(object) {}

    template <class T>
    bool number(const char* name, hid_t memory_type, H5T_class_t expected_class, T& out)
    {
        hdf5_attribute a = open(name);
        if (!a)
            return false;
        hdf5_type t(H5Aget_type(a.get()));
        if (!t || H5Tget_class(t.get()) != expected_class || H5Tget_size(t.get()) != sizeof(T)) {
            fail(std::string("attribute ") + name + " has the wrong type");
            return false;
        }
        if (H5Aread(a.get(), memory_type, &out) < 0) {
            fail(std::string("attribute ") + name + " cannot be read (" + hdf5_error_text() + ")");
            return false;
        }
        return true;
    }

    bool text(const char* name, std::string& out)
    {
        hdf5_attribute a = open(name);
        if (!a)
            return false;
        hdf5_type t(H5Aget_type(a.get()));
        if (!t || H5Tget_class(t.get()) != H5T_STRING || H5Tis_variable_str(t.get()) != 0 ||
            H5Tget_size(t.get()) > 256) {
            fail(std::string("attribute ") + name + " is not a fixed-length string");
            return false;
        }
        std::array<char, 257> buffer{};
        hdf5_type memory(H5Tcopy(t.get()));
        if (!memory || H5Aread(a.get(), memory.get(), buffer.data()) < 0) {
            fail(std::string("attribute ") + name + " cannot be read (" + hdf5_error_text() + ")");
            return false;
        }
        out.assign(buffer.data(), strnlen(buffer.data(), H5Tget_size(t.get())));
        return true;
    }

    void fail(std::string problem)
    {
        if (problem_.empty())
            problem_ = std::move(problem);
    }
    [[nodiscard]] const std::string& problem() const noexcept { return problem_; }

private:
    hdf5_attribute open(const char* name)
    {
        const htri_t exists = H5Aexists(object_, name);
        if (exists <= 0) {
            fail(exists == 0 ? std::string("attribute ") + name + " is missing"
                             : std::string("attribute ") + name + " cannot be looked up (" + hdf5_error_text() + ")");
            return {};
        }
        hdf5_attribute a(H5Aopen(object_, name, H5P_DEFAULT));
        if (!a)
            fail(std::string("attribute ") + name + " cannot be opened (" + hdf5_error_text() + ")");
        return a;
    }

    hid_t object_;
    std::string problem_;
};

// The `part_bytes` attribute: made anew on each record (its length may change), removed for one part.
void put_parts(hid_t dataset, const std::vector<std::uint64_t>& parts, bool create, const std::string& context)
{
    if (!create) {
        const htri_t exists = H5Aexists(dataset, "part_bytes");
        check_status(exists < 0 ? -1 : 0, context + ": cannot look up attribute part_bytes");
        if (exists > 0)
            check_status(H5Adelete(dataset, "part_bytes"), context + ": cannot remove attribute part_bytes");
    }
    if (parts.empty())
        return;
    const hsize_t dims[1] = {parts.size()};
    hdf5_dataspace space(check_id(H5Screate_simple(1, dims, nullptr), "cannot make a dataspace"));
    hdf5_attribute a(H5Acreate2(dataset, "part_bytes", H5T_STD_U64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT));
    check_id(a.get(), context + ": cannot create attribute part_bytes");
    check_status(H5Awrite(a.get(), H5T_NATIVE_UINT64, parts.data()), context + ": cannot write attribute part_bytes");
}

void put_record(hid_t dataset, const snapshot_record& r, bool create, const std::string& context)
{
    const std::int64_t slot = r.slot;
    const std::int64_t step = r.step;
    const std::uint64_t record_sum = r.record_checksum();
    put_attribute(dataset, "schema", H5T_STD_U32LE, H5T_NATIVE_UINT32, &r.schema, create, context);
    put_attribute(dataset, "slot", H5T_STD_I64LE, H5T_NATIVE_INT64, &slot, create, context);
    put_attribute(dataset, "step", H5T_STD_I64LE, H5T_NATIVE_INT64, &step, create, context);
    put_attribute(dataset, "bytes", H5T_STD_U64LE, H5T_NATIVE_UINT64, &r.bytes, create, context);
    put_text(dataset, "element_type", to_string(r.element), create, context);
    put_attribute(dataset, "checksum", H5T_STD_U64LE, H5T_NATIVE_UINT64, &r.checksum, create, context);
    put_text(dataset, "state", state_name(r.state), create, context);
    put_parts(dataset, r.parts, create, context);
    put_attribute(dataset, "record_checksum", H5T_STD_U64LE, H5T_NATIVE_UINT64, &record_sum, create, context);
}

// Makes a rename in the directory of `path` durable. Best effort: some file systems refuse fsync on a
// directory, and the rename itself is already atomic.
void sync_directory_of(const std::filesystem::path& path)
{
    const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void)::fsync(fd);
        ::close(fd);
    }
}

// Whether HDF5's explanation of a failed open says that another process holds the file's lock.
bool holds_lock_failure(const std::string& hdf5_text)
{
    return hdf5_text.find("lock file") != std::string::npos || hdf5_text.find("flock") != std::string::npos;
}

bool file_exists(const std::filesystem::path& path, std::error_code& ec)
{
    return std::filesystem::exists(path, ec);
}

// "remat_format" on / equal to the format name, or why not.
std::optional<std::string> not_a_snapshot_file(hid_t file)
{
    attribute_reader attributes(file);
    std::string format;
    if (!attributes.text("remat_format", format) || format != snapshot_format_name)
        return std::string("it is an HDF5 file but not a remat snapshot file (") +
               (attributes.problem().empty() ? "remat_format is \"" + format + "\"" : attributes.problem() + " on /") +
               ")";
    return std::nullopt;
}

} // namespace

namespace {

// The optional `part_bytes` attribute into r.parts; why it cannot be trusted, if it cannot.
std::optional<std::string> read_parts(hid_t dataset, snapshot_record& r)
{
    r.parts.clear();
    const htri_t exists = H5Aexists(dataset, "part_bytes");
    if (exists < 0)
        return "attribute part_bytes cannot be looked up (" + hdf5_error_text() + ")";
    if (exists == 0)
        return std::nullopt;
    hdf5_attribute a(H5Aopen(dataset, "part_bytes", H5P_DEFAULT));
    if (!a)
        return "attribute part_bytes cannot be opened (" + hdf5_error_text() + ")";
    hdf5_type t(H5Aget_type(a.get()));
    hdf5_dataspace space(H5Aget_space(a.get()));
    hsize_t dims[1] = {0};
    if (!t || !space || H5Tget_class(t.get()) != H5T_INTEGER || H5Tget_size(t.get()) != sizeof(std::uint64_t) ||
        H5Sget_simple_extent_ndims(space.get()) != 1 || H5Sget_simple_extent_dims(space.get(), dims, nullptr) != 1 ||
        dims[0] < 2 || dims[0] > (std::uint64_t{1} << 20))
        return std::string("attribute part_bytes is not a list of two or more 64-bit sizes");
    r.parts.resize(static_cast<std::size_t>(dims[0]));
    if (H5Aread(a.get(), H5T_NATIVE_UINT64, r.parts.data()) < 0)
        return "attribute part_bytes cannot be read (" + hdf5_error_text() + ")";
    std::uint64_t total = 0;
    for (const std::uint64_t n : r.parts) {
        if (n > r.bytes - total || total > r.bytes)
            return "attribute part_bytes adds up to more than the snapshot's " + std::to_string(r.bytes) + " bytes";
        total += n;
    }
    if (total != r.bytes)
        return "attribute part_bytes adds up to " + std::to_string(total) + " bytes, but the snapshot has " +
               std::to_string(r.bytes);
    return std::nullopt;
}

} // namespace

std::uint64_t snapshot_record::record_checksum() const noexcept
{
    // A fixed encoding: a tag, the little-endian integers, then the two names with their terminators.
    xxh64_state h;
    h.update("remat-record", 12);
    const std::uint64_t numbers[] = {schema, static_cast<std::uint64_t>(slot), static_cast<std::uint64_t>(step), bytes,
                                     checksum};
    h.update(numbers, sizeof numbers);
    const std::string_view element_name = to_string(element);
    h.update(element_name.data(), element_name.size());
    h.update("", 1); // the terminator
    const char* s = state_name(state);
    h.update(s, std::strlen(s) + 1);
    if (!parts.empty()) {
        const std::uint64_t count = parts.size();
        h.update("parts", 5);
        h.update(&count, sizeof count);
        h.update(parts.data(), parts.size() * sizeof(std::uint64_t));
    }
    return h.digest();
}

std::string slot_group_name(slot_t slot, unsigned generation)
{
    char name[48];
    if (generation == 0)
        std::snprintf(name, sizeof name, "slot_%06lld", static_cast<long long>(slot));
    else
        std::snprintf(name, sizeof name, "slot_%06lld.%u", static_cast<long long>(slot), generation);
    return name;
}

std::string state_dataset_name(unsigned generation)
{
    return generation == 0 ? std::string("state") : "state." + std::to_string(generation);
}

namespace {

// "<prefix>" or "<prefix>.<generation>", the generation a positive number without leading zeros.
std::optional<unsigned> parse_generation(std::string_view suffix)
{
    if (suffix.empty())
        return 0u;
    if (suffix.front() != '.' || suffix.size() < 2 || suffix[1] == '0')
        return std::nullopt;
    unsigned generation = 0;
    const auto [end, ec] = std::from_chars(suffix.data() + 1, suffix.data() + suffix.size(), generation);
    if (ec != std::errc() || end != suffix.data() + suffix.size())
        return std::nullopt;
    return generation;
}

std::vector<std::string> link_names(hid_t group)
{
    std::vector<std::string> names;
    auto collect = [](hid_t, const char* name, const H5L_info_t*, void* data) -> herr_t {
        static_cast<std::vector<std::string>*>(data)->emplace_back(name);
        return 0;
    };
    if (H5Literate(group, H5_INDEX_NAME, H5_ITER_INC, nullptr, collect, &names) < 0)
        throw std::runtime_error(hdf5_error_text());
    return names;
}

// Picks, within one readable slot group, the dataset of the highest generation that opens.
void locate_dataset(hid_t snapshots, slot_place& place)
{
    std::vector<std::pair<unsigned, std::string>> candidates;
    const hdf5_group group(H5Gopen2(snapshots, place.group.c_str(), H5P_DEFAULT));
    for (const std::string& name : link_names(group.get())) {
        if (const std::optional<unsigned> generation = parse_state_dataset_name(name)) {
            candidates.emplace_back(*generation, name);
            place.next_dataset = std::max(place.next_dataset, *generation + 1);
        } else {
            place.leftovers.emplace_back(place.group + "/" + name, "not a snapshot dataset (unexpected name)");
        }
    }
    std::sort(candidates.rbegin(), candidates.rend());
    for (const auto& [generation, name] : candidates) {
        const std::string path = place.group + "/" + name;
        if (!place.dataset.empty()) {
            place.leftovers.emplace_back(path, "superseded by " + place.dataset);
            continue;
        }
        const hdf5_dataset d(H5Dopen2(snapshots, path.c_str(), H5P_DEFAULT));
        if (d)
            place.dataset = name;
        else
            place.leftovers.emplace_back(path, "the dataset cannot be opened (" + hdf5_error_text() + ")");
    }
}

} // namespace

std::optional<slot_generation> parse_slot_group_name(std::string_view name)
{
    constexpr std::string_view prefix = "slot_";
    if (name.size() <= prefix.size() || name.substr(0, prefix.size()) != prefix)
        return std::nullopt;
    const std::string_view rest = name.substr(prefix.size());
    slot_t slot = -1;
    const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), slot);
    if (ec != std::errc() || slot < 0)
        return std::nullopt;
    const auto digits = static_cast<std::size_t>(end - rest.data());
    const std::optional<unsigned> generation = parse_generation(rest.substr(digits));
    if (!generation || slot_group_name(slot, *generation) != name)
        return std::nullopt;
    return slot_generation{slot, *generation};
}

std::optional<unsigned> parse_state_dataset_name(std::string_view name)
{
    constexpr std::string_view prefix = "state";
    if (name.substr(0, prefix.size()) != prefix)
        return std::nullopt;
    return parse_generation(name.substr(prefix.size()));
}

snapshot_layout locate_snapshots(hid_t snapshots, const std::string& where)
{
    snapshot_layout layout;
    std::map<slot_t, std::vector<std::pair<unsigned, std::string>>> groups;
    try {
        for (const std::string& name : link_names(snapshots)) {
            if (const std::optional<slot_generation> g = parse_slot_group_name(name)) {
                groups[g->slot].emplace_back(g->generation, name);
                slot_place& place = layout.slots[g->slot];
                place.next_group = std::max(place.next_group, g->generation + 1);
            } else {
                layout.unexpected.push_back(name);
            }
        }
    } catch (const std::runtime_error& e) {
        throw integrity_error("cannot list the snapshots of " + where + " (HDF5: " + e.what() + ")");
    }
    for (auto& [slot, candidates] : groups) {
        slot_place& place = layout.slots[slot];
        std::sort(candidates.rbegin(), candidates.rend());
        for (const auto& [generation, name] : candidates) {
            if (!place.group.empty()) {
                place.leftovers.emplace_back(name, "superseded by " + place.group);
                continue;
            }
            try {
                const hdf5_group g(H5Gopen2(snapshots, name.c_str(), H5P_DEFAULT));
                if (!g)
                    throw std::runtime_error(hdf5_error_text());
                (void)link_names(g.get());
                place.group = name;
                locate_dataset(snapshots, place);
            } catch (const std::runtime_error& e) {
                place.group.clear();
                place.dataset.clear();
                place.leftovers.emplace_back(name, std::string("the slot group cannot be read (") + e.what() + ")");
            }
        }
    }
    return layout;
}

void create_slot_group(hid_t snapshots, const std::string& name, const std::string& where)
{
    // Compact link storage sized for the dataset: adding or replacing the slot's dataset rewrites this
    // small header only.
    hdf5_plist gcpl(check_id(H5Pcreate(H5P_GROUP_CREATE), "cannot make HDF5 group properties"));
    check_status(H5Pset_est_link_info(gcpl.get(), 2, 8), "cannot size a slot group");
    hdf5_group g(H5Gcreate2(snapshots, name.c_str(), H5P_DEFAULT, gcpl.get(), H5P_DEFAULT));
    check_id(g.get(), where + ": cannot create /" + snapshots_group_name + "/" + name);
}

hid_t element_file_type(hdf5_element e) noexcept
{
    switch (e) {
    case hdf5_element::int32:
        return H5T_STD_I32LE;
    case hdf5_element::int64:
        return H5T_STD_I64LE;
    case hdf5_element::float32:
        return H5T_IEEE_F32LE;
    case hdf5_element::float64:
        return H5T_IEEE_F64LE;
    default:
        return H5T_STD_U8LE;
    }
}

hid_t element_memory_type(hdf5_element e) noexcept
{
    switch (e) {
    case hdf5_element::int32:
        return H5T_NATIVE_INT32;
    case hdf5_element::int64:
        return H5T_NATIVE_INT64;
    case hdf5_element::float32:
        return H5T_NATIVE_FLOAT;
    case hdf5_element::float64:
        return H5T_NATIVE_DOUBLE;
    default:
        return H5T_NATIVE_UINT8;
    }
}

std::optional<hdf5_element> parse_element(std::string_view text) noexcept
{
    for (const hdf5_element e :
         {hdf5_element::uint8, hdf5_element::int32, hdf5_element::int64, hdf5_element::float32, hdf5_element::float64})
        if (to_string(e) == text)
            return e;
    return std::nullopt;
}

hdf5_plist snapshot_file_access()
{
    hdf5_plist fapl(check_id(H5Pcreate(H5P_FILE_ACCESS), "cannot make HDF5 file access properties"));
    check_status(H5Pset_fapl_sec2(fapl.get()), "cannot select HDF5's sec2 driver");
    // The 1.8 format: object headers and the superblock carry checksums, and, unlike the 1.10 format's
    // superblock, nothing marks the file "open for writing", so a writer that died leaves a file that
    // still opens (a 1.10-format file would need h5clear first).
    check_status(H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_V18, H5F_LIBVER_V18), "cannot set HDF5 format bounds");
    check_status(H5Pset_alignment(fapl.get(), raw_alignment_threshold, raw_alignment), "cannot set HDF5 alignment");
    check_status(H5Pset_evict_on_close(fapl.get(), 1), "cannot set HDF5 evict-on-close");
    return fapl;
}

namespace {

// The bytes of a new, empty snapshot file, made by HDF5 in memory, with one byte more for the guard byte.
std::vector<unsigned char> new_file_image(std::uint64_t slot_groups, std::string_view run_identity,
                                          const std::string& where)
{
    const hdf5_plist fapl = snapshot_file_access();
    std::vector<unsigned char> image = build_in_memory(fapl.get(), where, [&](hid_t file) {
        put_text(file, "remat_format", snapshot_format_name, true, where);
        put_attribute(file, "remat_schema", H5T_STD_U32LE, H5T_NATIVE_UINT32, &snapshot_schema, true, where);
        put_text(file, "checksum_algorithm", checksum_algorithm_name, true, where);
        if (!run_identity.empty()) {
            // Sized to the text: it is written once, with the file, never rewritten.
            hdf5_type t(check_id(H5Tcopy(H5T_C_S1), "cannot make an HDF5 string type"));
            check_status(H5Tset_size(t.get(), run_identity.size() + 1), "cannot size an HDF5 string type");
            check_status(H5Tset_strpad(t.get(), H5T_STR_NULLTERM), "cannot set an HDF5 string type's padding");
            const std::string text(run_identity);
            put_attribute(file, "run_identity", t.get(), t.get(), text.c_str(), true, where);
        }
        create_write_intent(file, where);
        const hdf5_group snapshots(
            check_id(H5Gcreate2(file, snapshots_group_name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                     "cannot create /snapshots in " + where));
        for (std::uint64_t slot = 0; slot < slot_groups; ++slot)
            create_slot_group(snapshots.get(), slot_group_name(static_cast<slot_t>(slot)), where);
    });
    // Room for the guard byte (guard_end_of_file, which needs a file on disk): written now, it is in the
    // file's blocks before HDF5 is asked to own it, so that adding it grows nothing.
    image.push_back(0);
    return image;
}

// Writes `bytes` as the new file `path` and makes them durable; io_error naming `where` (the file they are
// for) and the system's reason.
void write_file_durably(const std::filesystem::path& path, const std::vector<unsigned char>& bytes,
                        const std::string& where)
{
    const std::string name = path.string();
    const std::string what = "cannot create snapshot file " + where + " (as " + name + " first): ";
    const int fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0)
        throw io_error(what + std::system_category().message(errno));
    std::size_t done = 0;
    int err = 0;
    while (done < bytes.size() && err == 0) {
        const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n > 0)
            done += static_cast<std::size_t>(n);
        else if (n < 0 && errno != EINTR)
            err = errno;
    }
    if (err == 0 && ::fsync(fd) != 0)
        err = errno;
    if (::close(fd) != 0 && err == 0)
        err = errno;
    if (err != 0)
        throw io_error(what + "writing its " + std::to_string(bytes.size()) +
                       " bytes failed: " + std::system_category().message(err));
}

} // namespace

snapshot_file create_snapshot_file(const std::filesystem::path& path, std::uint64_t slot_groups,
                                   std::string_view run_identity)
{
    if (run_identity.size() > run_identity_bytes)
        throw argument_error("a run identity has at most " + std::to_string(run_identity_bytes) + " bytes, got " +
                             std::to_string(run_identity.size()) + ": \"" + std::string(run_identity) + "\"");
    // The file is built complete under a temporary name beside `path` and then put at `path`, so that a
    // crash during creation leaves either nothing or the previous file at `path`, never half a file. The
    // guard makes the check of what is there and the rename one step against another creator.
    const std::string where = path.string();
    const std::optional<file_identity> seen = identify_file(path);
    if (const std::optional<std::string> why = refuse_to_replace(path))
        throw io_error("refusing to replace " + where + " with a snapshot file: " + *why +
                       (*why == in_use_elsewhere ? "" : " (remove it or choose another path)"));
    creation_guard guard(path, seen);
    std::filesystem::path temporary = path;
    temporary += ".remat-new-" + std::to_string(::getpid());
    const std::string temporary_name = temporary.string();
    std::error_code ec;
    std::filesystem::remove(temporary, ec);
    // Built in memory and written by remat in one piece: a full disk then fails remat's own write, never an
    // HDF5 call. (When H5Fcreate or a flush fails on a full disk, HDF5 1.10 keeps the half-made file in
    // its state, and prints "infinite loop closing library", or crashes, when the process exits.)
    const std::vector<unsigned char> image = new_file_image(slot_groups, run_identity, where);
    const hdf5_plist fapl = snapshot_file_access();
    snapshot_file f;
    try {
        write_file_durably(temporary, image, where);
        // Opened (and so locked by HDF5) before it is at `path`: another creator finds it in use.
        f.file = hdf5_file(H5Fopen(temporary_name.c_str(), H5F_ACC_RDWR, fapl.get()));
        check_id(f.file.get(), "cannot open new snapshot file " + temporary_name);
        f.snapshots = hdf5_group(H5Gopen2(f.file.get(), snapshots_group_name, H5P_DEFAULT));
        check_id(f.snapshots.get(), "cannot open /snapshots in " + temporary_name);
        std::uint64_t guarded_end = 0;
        guard_end_of_file(f.file.get(), guarded_end, where);
        check_status(H5Fflush(f.file.get(), H5F_SCOPE_LOCAL), "cannot flush new snapshot file " + temporary_name);
        int* fd = nullptr;
        check_status(H5Fget_vfd_handle(f.file.get(), fapl.get(), reinterpret_cast<void**>(&fd)),
                     "cannot get the descriptor of " + temporary_name);
        if (::fsync(*fd) != 0)
            throw io_error("fsync of " + temporary_name + " failed: " + std::system_category().message(errno));
        guard.install(temporary);
    } catch (...) {
        f.snapshots.reset();
        f.file.reset();
        std::filesystem::remove(temporary, ec);
        throw;
    }
    sync_directory_of(path);
    return f;
}

std::string read_run_identity(hid_t file)
{
    if (H5Aexists(file, "run_identity") <= 0) {
        hdf5_error_text(); // clear the stack
        return {};
    }
    attribute_reader attributes(file);
    std::string identity;
    if (!attributes.text("run_identity", identity))
        throw integrity_error(attributes.problem() + " on /");
    return identity;
}

snapshot_file open_snapshot_file(const std::filesystem::path& path, bool writable)
{
    const std::string where = path.string();
    std::error_code ec;
    if (!file_exists(path, ec))
        throw io_error(ec ? "cannot look up snapshot file " + where + ": " + ec.message()
                          : "snapshot file " + where + " does not exist");
    if (!std::filesystem::is_regular_file(path, ec))
        throw io_error("snapshot file " + where + " is not a regular file");
    // HDF5 reports every failed open alike; one that the system refuses (a permission, a read-only file
    // system) is not damage, so ask the system first.
    const int fd = ::open(where.c_str(), (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC);
    if (fd < 0)
        throw io_error("cannot open snapshot file " + where + (writable ? " for writing: " : " for reading: ") +
                       std::system_category().message(errno));
    ::close(fd);
    const htri_t is_hdf5 = H5Fis_hdf5(where.c_str());
    if (is_hdf5 < 0)
        throw_hdf5<io_error>("cannot read snapshot file " + where);
    if (is_hdf5 == 0)
        throw integrity_error(where + " is not a remat snapshot file: it is not an HDF5 file (no HDF5 signature)");
    const hdf5_plist fapl = snapshot_file_access();
    snapshot_file f;
    f.file = hdf5_file(H5Fopen(where.c_str(), writable ? H5F_ACC_RDWR : H5F_ACC_RDONLY, fapl.get()));
    if (!f.file) {
        const std::string why = hdf5_error_text();
        const std::string what = "cannot open snapshot file " + where + " (HDF5: " + why + ")";
        if (holds_lock_failure(why))
            throw io_error(what + "; another process has it open");
        throw integrity_error(what + "; it is truncated or damaged");
    }
    if (writable) {
        // A writer that died part way through a flush can leave metadata that refers to bytes beyond the
        // end of file its superblock records (HDF5 writes the superblock last). Those bytes are in the
        // file, which always holds every byte written (space is reserved before metadata refers to it), so
        // moving the end of file up to the file's size makes them readable again, and keeps HDF5 from
        // handing their space to new objects.
        check_status(H5Fincrement_filesize(f.file.get(), 0), "cannot extend " + where);
    }
    if (auto why = not_a_snapshot_file(f.file.get()))
        throw integrity_error(where + " is not a remat snapshot file: " + *why);
    attribute_reader attributes(f.file.get());
    std::uint32_t schema = 0;
    if (!attributes.number("remat_schema", H5T_NATIVE_UINT32, H5T_INTEGER, schema))
        throw integrity_error(where + ": " + attributes.problem() + " on /");
    if (schema != snapshot_schema)
        throw integrity_error(where + " has snapshot schema " + std::to_string(schema) + "; this remat reads schema " +
                              std::to_string(snapshot_schema));
    f.snapshots = hdf5_group(H5Gopen2(f.file.get(), snapshots_group_name, H5P_DEFAULT));
    if (!f.snapshots)
        throw_hdf5<integrity_error>(where + " has no readable /snapshots group");
    return f;
}

std::optional<std::string> refuse_to_replace(const std::filesystem::path& path)
{
    std::error_code ec;
    if (!file_exists(path, ec))
        return ec ? std::optional<std::string>(ec.message()) : std::nullopt;
    if (!std::filesystem::is_regular_file(path, ec))
        return std::string("it is not a regular file");
    if (std::filesystem::file_size(path, ec) == 0 && !ec)
        return std::nullopt;
    const std::string where = path.string();
    const htri_t is_hdf5 = H5Fis_hdf5(where.c_str());
    if (is_hdf5 <= 0)
        return is_hdf5 == 0 ? std::string("it is not an HDF5 file") : "it cannot be read (" + hdf5_error_text() + ")";
    const hdf5_plist fapl = snapshot_file_access();
    hdf5_file file(H5Fopen(where.c_str(), H5F_ACC_RDONLY, fapl.get()));
    if (!file) {
        const std::string why = hdf5_error_text();
        if (holds_lock_failure(why))
            return std::string(in_use_elsewhere);
        return "it cannot be opened as HDF5 (" + why + ")";
    }
    return not_a_snapshot_file(file.get());
}

hdf5_dataset create_slot_dataset(hid_t snapshots, const std::string& relative, const snapshot_record& record,
                                 int compression, const std::string& context)
{
    const std::size_t element = element_bytes(record.element);
    const hsize_t count = record.bytes / element;
    const hsize_t dims[1] = {count};
    hdf5_dataspace space(check_id(H5Screate_simple(1, dims, nullptr), context + ": cannot make a dataspace"));
    hdf5_plist dcpl(check_id(H5Pcreate(H5P_DATASET_CREATE), "cannot make HDF5 dataset properties"));
    check_status(H5Pset_obj_track_times(dcpl.get(), 0), "cannot turn off HDF5 time tracking");
    check_status(H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER), "cannot turn off HDF5 fill values");
    if (compression == 0) {
        // Contiguous bytes at a fixed place in the file, allocated now: the store moves them itself.
        check_status(H5Pset_layout(dcpl.get(), H5D_CONTIGUOUS), "cannot set contiguous layout");
        check_status(H5Pset_alloc_time(dcpl.get(), H5D_ALLOC_TIME_EARLY), "cannot set early allocation");
    } else {
        const hsize_t per_chunk = std::max<hsize_t>(1, (hsize_t{1} << 20) / element); // 1 MiB chunks
        const hsize_t chunk[1] = {std::clamp<hsize_t>(count, 1, per_chunk)};
        check_status(H5Pset_chunk(dcpl.get(), 1, chunk), "cannot set chunked layout");
        check_status(H5Pset_shuffle(dcpl.get()), "cannot add the shuffle filter");
        check_status(H5Pset_deflate(dcpl.get(), static_cast<unsigned>(compression)), "cannot add the deflate filter");
    }
    hdf5_dataset d(H5Dcreate2(snapshots, relative.c_str(), element_file_type(record.element), space.get(), H5P_DEFAULT,
                              dcpl.get(), H5P_DEFAULT));
    check_id(d.get(), context + ": cannot create the dataset");
    put_record(d.get(), record, true, context);
    return d;
}

void write_record(hid_t dataset, const snapshot_record& record, const std::string& context)
{
    put_record(dataset, record, false, context);
}

record_reading read_record(hid_t dataset)
{
    record_reading out;
    snapshot_record& r = out.record;
    attribute_reader attributes(dataset);
    std::int64_t slot = -1, step = -1;
    std::uint64_t stored_record_sum = 0;
    std::string element, state;
    attributes.number("schema", H5T_NATIVE_UINT32, H5T_INTEGER, r.schema);
    attributes.number("slot", H5T_NATIVE_INT64, H5T_INTEGER, slot);
    attributes.number("step", H5T_NATIVE_INT64, H5T_INTEGER, step);
    attributes.number("bytes", H5T_NATIVE_UINT64, H5T_INTEGER, r.bytes);
    attributes.text("element_type", element);
    attributes.number("checksum", H5T_NATIVE_UINT64, H5T_INTEGER, r.checksum);
    attributes.text("state", state);
    attributes.number("record_checksum", H5T_NATIVE_UINT64, H5T_INTEGER, stored_record_sum);
    r.slot = slot;
    r.step = step;
    if (!attributes.problem().empty()) {
        out.problem = attributes.problem();
        return out;
    }
    if (const std::optional<std::string> why = read_parts(dataset, r)) {
        out.problem = *why;
        return out;
    }
    const std::optional<hdf5_element> e = parse_element(element);
    if (!e) {
        out.problem = "element_type \"" + element + "\" is not one remat writes";
        return out;
    }
    r.element = *e;
    if (state != "complete" && state != "writing") {
        out.problem = "state \"" + state + "\" is neither complete nor writing";
        return out;
    }
    r.state = state == "complete" ? slot_state::complete : slot_state::writing;
    if (r.schema != snapshot_schema) {
        out.problem =
            "schema " + std::to_string(r.schema) + ", but this remat reads schema " + std::to_string(snapshot_schema);
        return out;
    }
    const std::uint64_t computed = r.record_checksum();
    if (computed != stored_record_sum) {
        out.problem = "its attributes are inconsistent: record_checksum is " + hex(stored_record_sum) +
                      " but the attributes hash to " + hex(computed) + " (partly rewritten or altered)";
        return out;
    }
    // The dataset itself must have the shape and type the record declares.
    hdf5_dataspace space(H5Dget_space(dataset));
    hdf5_type type(H5Dget_type(dataset));
    hsize_t dims[1] = {0};
    if (!space || !type || H5Sget_simple_extent_ndims(space.get()) != 1 ||
        H5Sget_simple_extent_dims(space.get(), dims, nullptr) != 1) {
        out.problem = "the dataset is not one-dimensional";
        return out;
    }
    if (H5Tequal(type.get(), element_file_type(r.element)) <= 0) {
        out.problem = "the dataset's type is not the little-endian " + element + " its element_type declares";
        return out;
    }
    if (dims[0] * element_bytes(r.element) != r.bytes) {
        out.problem = "the dataset holds " + std::to_string(dims[0]) + " " + element + " elements (" +
                      std::to_string(dims[0] * element_bytes(r.element)) + " bytes), but its record says " +
                      std::to_string(r.bytes) + " bytes";
        return out;
    }
    return out;
}

std::uint64_t guard_end_of_file(hid_t file, std::uint64_t& guarded_end, const std::string& where)
{
    haddr_t eoa = 0;
    check_status(H5Fget_eoa(file, &eoa), "cannot query the end of " + where);
    if (eoa == guarded_end)
        return eoa;
    check_status(H5Fincrement_filesize(file, 1), "cannot extend " + where);
    check_status(H5Fget_eoa(file, &eoa), "cannot query the end of " + where);
    guarded_end = eoa;
    return eoa;
}

std::optional<std::uint64_t> dataset_offset(hid_t dataset)
{
    hdf5_plist dcpl(H5Dget_create_plist(dataset));
    if (!dcpl || H5Pget_layout(dcpl.get()) != H5D_CONTIGUOUS || H5Pget_nfilters(dcpl.get()) != 0)
        return std::nullopt;
    const haddr_t offset = H5Dget_offset(dataset);
    if (offset == HADDR_UNDEF) {
        H5Eclear2(H5E_DEFAULT);
        return std::nullopt;
    }
    return static_cast<std::uint64_t>(offset);
}

std::string hex(std::uint64_t v)
{
    char text[24];
    std::snprintf(text, sizeof text, "0x%016" PRIx64, v);
    return text;
}

} // namespace remat::detail
