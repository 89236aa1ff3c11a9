// A store never hands back a wrong state: damaged, truncated, foreign, missing and non-HDF5 files are
// refused with an error that names the file, the snapshot and what is wrong. The damage is done to real
// files with plain byte edits, at places found through the HDF5 C API (not through remat).
#define BOOST_TEST_MODULE hdf5_integrity
#include <boost/test/unit_test.hpp>

#include "contains.hpp"
#include "hdf5_test_support.hpp"

#include "remat/error.hpp"
#include "remat/hdf5/hdf5_store.hpp"
#include "remat/hdf5/inspect.hpp"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

using namespace remat;
using remat::test::flip_byte;
using remat::test::pattern_bytes;
using remat::test::scratch_dir;
using remat::test::view;

using remat::test::quiet_hdf5;
BOOST_TEST_GLOBAL_FIXTURE(quiet_hdf5);

namespace {

const hdf5_store::options resume{.mode = hdf5_store::open_mode::resume};

// The error a callable throws, as its type and message; fails the test when it throws nothing.
template <class Error, class F>
std::string message_of(F&& f)
{
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    BOOST_ERROR("no " << typeid(Error).name() << " was thrown");
    return {};
}

using remat::test::contains;

// A file with x_3 (`size` bytes) in slot 0 and x_4 in slot 1.
void make_file(const std::filesystem::path& file, std::size_t size)
{
    hdf5_store store(file, level_capacity{2});
    store.write(0, 3, view(pattern_bytes(3, size)));
    store.write(1, 4, view(pattern_bytes(4, size)));
}

// The superblock the store's file format (HDF5 1.8 bounds) writes: version 2, 48 bytes at offset 0 (no
// user block), ending in its own checksum, so a whole earlier copy put back is one HDF5 accepts.
constexpr std::size_t superblock_bytes = 48;
constexpr std::size_t end_of_allocation_at = 28; // after the signature, 4 bytes of sizes and flags, 2 addresses

std::vector<char> superblock_of(const std::filesystem::path& file)
{
    std::vector<char> block(superblock_bytes);
    std::ifstream(file, std::ios::binary).read(block.data(), static_cast<std::streamsize>(block.size()));
    BOOST_TEST_REQUIRE(std::string(block.data(), 8) == std::string("\x89HDF\r\n\x1a\n", 8));
    BOOST_TEST_REQUIRE(static_cast<int>(block[8]) == 2); // superblock version
    return block;
}

std::uint64_t end_of_allocation(const std::vector<char>& superblock)
{
    std::uint64_t eoa = 0;
    for (std::size_t i = 8; i-- > 0;) // little-endian
        eoa = eoa << 8 | static_cast<unsigned char>(superblock[end_of_allocation_at + i]);
    return eoa;
}

void put_back(const std::filesystem::path& file, const std::vector<char>& superblock)
{
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.write(superblock.data(), static_cast<std::streamsize>(superblock.size()));
    BOOST_TEST_REQUIRE(f.good());
}

herr_t collect_error(unsigned, const H5E_error2_t* e, void* text)
{
    *static_cast<std::string*>(text) += std::string(e->desc != nullptr ? e->desc : "") + "; ";
    return 0;
}

// HDF5's own messages when it reads a dataset whole from a read-only file (the C API, not remat); "" when
// the read succeeds.
std::string plain_hdf5_read_error(const std::filesystem::path& file, const std::string& dataset, std::size_t bytes)
{
    const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    BOOST_TEST_REQUIRE(f >= 0);
    const hid_t d = H5Dopen2(f, dataset.c_str(), H5P_DEFAULT);
    BOOST_TEST_REQUIRE(d >= 0);
    std::vector<unsigned char> back(bytes);
    std::string text;
    if (H5Dread(d, H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, back.data()) < 0) {
        H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, collect_error, &text);
        H5Eclear2(H5E_DEFAULT);
    }
    H5Dclose(d);
    H5Fclose(f);
    return text;
}

} // namespace

BOOST_AUTO_TEST_CASE(a_flipped_data_byte_fails_the_checksum)
{
    scratch_dir dir;
    for (const std::size_t size : {std::size_t{1000}, std::size_t{300000}}) { // small-data and direct paths
        const auto file = dir / ("flip" + std::to_string(size) + ".h5");
        make_file(file, size);
        const std::uint64_t offset = remat::test::hdf5_data_offset(file, "/snapshots/slot_000000/state");
        flip_byte(file, offset + size / 2);
        hdf5_store store(file, level_capacity{2}, resume);
        std::vector<std::byte> back(size);
        const std::string what = message_of<integrity_error>([&] { store.read(0, 3, view(back)); });
        BOOST_TEST(contains(what, file.string()), what);
        BOOST_TEST(contains(what, "/snapshots/slot_000000/state"), what);
        BOOST_TEST(contains(what, "checksum mismatch"), what);
        // The other snapshot is intact and still reads.
        store.read(1, 4, view(back));
        BOOST_TEST((back == pattern_bytes(4, size)));
        // Inspection, through HDF5's own reads, finds the same.
        const hdf5_file_contents c = hdf5_inspect(file, true);
        BOOST_TEST_REQUIRE(c.snapshots.size() == 2u);
        BOOST_TEST(c.snapshots[0].status == hdf5_snapshot_status::damaged);
        BOOST_TEST(contains(c.snapshots[0].problem, "checksum mismatch"), c.snapshots[0].problem);
        BOOST_TEST(c.snapshots[1].verified);
    }
}

BOOST_AUTO_TEST_CASE(a_byte_flipped_while_the_store_is_open_is_caught)
{
    scratch_dir dir;
    const auto file = dir / "open.h5";
    make_file(file, 200000);
    const std::uint64_t offset = remat::test::hdf5_data_offset(file, "/snapshots/slot_000000/state");
    hdf5_store store(file, level_capacity{2}, resume);
    std::vector<std::byte> back(200000);
    store.read(0, 3, view(back));
    flip_byte(file, offset + 123456);
    BOOST_CHECK_THROW(store.read(0, 3, view(back)), integrity_error);
}

BOOST_AUTO_TEST_CASE(a_flipped_attribute_byte_is_caught)
{
    scratch_dir dir;
    const auto file = dir / "attr.h5";
    const step_t step = 0x0123456789ABCDEF; // eight distinctive bytes to find in the dataset's header
    {
        hdf5_store store(file, level_capacity{1});
        store.write(0, step, view(pattern_bytes(1, 5000)));
    }
    const std::uint64_t header = remat::test::hdf5_header_address(file, "/snapshots/slot_000000/state");
    const std::vector<char> bytes = remat::test::read_file(file);
    char needle[8];
    std::memcpy(needle, &step, 8);
    const auto at = std::search(bytes.begin() + static_cast<std::ptrdiff_t>(header), bytes.end(), needle, needle + 8);
    BOOST_TEST_REQUIRE((at != bytes.end()));
    flip_byte(file, static_cast<std::uint64_t>(at - bytes.begin()) + 2);

    hdf5_store store(file, level_capacity{1}, resume);
    BOOST_TEST(store.snapshot_step(0) == -1); // not taken for a snapshot
    std::vector<std::byte> back(5000);
    const std::string what = message_of<integrity_error>([&] { store.read(0, step, view(back)); });
    BOOST_TEST(contains(what, file.string()), what);
    BOOST_TEST(contains(what, "/snapshots/slot_000000/state"), what);
    BOOST_TEST(contains(what, "checksum"), what); // HDF5's header checksum
    const hdf5_file_contents c = hdf5_inspect(file);
    BOOST_TEST_REQUIRE(c.snapshots.size() == 1u);
    BOOST_TEST(c.snapshots[0].status == hdf5_snapshot_status::damaged);
    // The slot can be written again.
    store.write(0, 7, view(pattern_bytes(7, 5000)));
    store.read(0, 7, view(back));
    BOOST_TEST((back == pattern_bytes(7, 5000)));
}

BOOST_AUTO_TEST_CASE(an_attribute_rewritten_through_hdf5_is_caught)
{
    // A valid HDF5 edit (h5py, another tool) that changes the step: the header checksum is right, but the
    // record no longer matches its own checksum.
    scratch_dir dir;
    const auto file = dir / "edit.h5";
    make_file(file, 4000);
    {
        const hid_t fapl = remat::test::store_like_access();
        const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, fapl);
        H5Pclose(fapl);
        const hid_t d = H5Dopen2(f, "/snapshots/slot_000001/state", H5P_DEFAULT);
        const hid_t a = H5Aopen(d, "step", H5P_DEFAULT);
        const std::int64_t other = 9;
        BOOST_TEST_REQUIRE(H5Awrite(a, H5T_NATIVE_INT64, &other) >= 0);
        H5Aclose(a);
        H5Dclose(d);
        H5Fclose(f);
    }
    hdf5_store store(file, level_capacity{2}, resume);
    BOOST_TEST(store.snapshot_step(0) == 3);
    BOOST_TEST(store.snapshot_step(1) == -1);
    std::vector<std::byte> back(4000);
    for (const step_t step : {4, 9}) {
        const std::string what = message_of<integrity_error>([&] { store.read(1, step, view(back)); });
        BOOST_TEST(contains(what, "/snapshots/slot_000001/state"), what);
        BOOST_TEST(contains(what, "inconsistent"), what);
    }
    const hdf5_file_contents c = hdf5_inspect(file);
    BOOST_TEST(c.snapshots.at(1).status == hdf5_snapshot_status::damaged);
    BOOST_TEST(contains(c.snapshots.at(1).problem, "record_checksum"), c.snapshots.at(1).problem);
}

BOOST_AUTO_TEST_CASE(a_truncated_file_is_refused)
{
    scratch_dir dir;
    const auto file = dir / "cut.h5";
    make_file(file, 300000);
    const auto full = std::filesystem::file_size(file);
    for (const std::uintmax_t keep : {full - 1, full / 2, std::uintmax_t{4000}, std::uintmax_t{40}}) {
        const auto cut = dir / ("cut" + std::to_string(keep) + ".h5");
        std::filesystem::copy_file(file, cut);
        std::filesystem::resize_file(cut, keep);
        const std::string what = message_of<integrity_error>([&] { hdf5_store store(cut, level_capacity{2}, resume); });
        BOOST_TEST(contains(what, cut.string()), what);
        BOOST_TEST((contains(what, "truncated") || contains(what, "damaged")), what);
        BOOST_CHECK_THROW(hdf5_inspect(cut), integrity_error);
    }
}

BOOST_AUTO_TEST_CASE(foreign_files_are_refused)
{
    scratch_dir dir;
    // An HDF5 file of someone else's, made with the C API.
    const auto foreign = dir / "foreign.h5";
    {
        const hid_t f = H5Fcreate(foreign.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
        const hsize_t n[1] = {16};
        const hid_t space = H5Screate_simple(1, n, nullptr);
        const hid_t d = H5Dcreate2(f, "data", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        H5Dclose(d);
        H5Sclose(space);
        H5Fclose(f);
    }
    std::string what = message_of<integrity_error>([&] { hdf5_store store(foreign, level_capacity{1}, resume); });
    BOOST_TEST(contains(what, foreign.string()), what);
    BOOST_TEST(contains(what, "not a remat snapshot file"), what);
    BOOST_CHECK_THROW(hdf5_inspect(foreign), integrity_error);

    // One that claims to be a snapshot file of a schema this remat does not know.
    const auto future = dir / "future.h5";
    {
        const hid_t f = H5Fcreate(future.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
        const hid_t scalar = H5Screate(H5S_SCALAR);
        const hid_t text = H5Tcopy(H5T_C_S1);
        H5Tset_size(text, 24);
        char format[24] = "remat snapshot file";
        const hid_t a = H5Acreate2(f, "remat_format", text, scalar, H5P_DEFAULT, H5P_DEFAULT);
        H5Awrite(a, text, format);
        const hid_t s = H5Acreate2(f, "remat_schema", H5T_STD_U32LE, scalar, H5P_DEFAULT, H5P_DEFAULT);
        const std::uint32_t two = 2;
        H5Awrite(s, H5T_NATIVE_UINT32, &two);
        H5Aclose(s);
        H5Aclose(a);
        H5Tclose(text);
        H5Sclose(scalar);
        H5Fclose(f);
    }
    what = message_of<integrity_error>([&] { hdf5_store store(future, level_capacity{1}, resume); });
    BOOST_TEST(contains(what, "schema 2"), what);

    // And a file that is not HDF5 at all.
    const auto text = dir / "notes.h5";
    std::ofstream(text) << "these are not the snapshots you are looking for\n";
    what = message_of<integrity_error>([&] { hdf5_store store(text, level_capacity{1}, resume); });
    BOOST_TEST(contains(what, text.string()), what);
    BOOST_TEST(contains(what, "not an HDF5 file"), what);
    BOOST_CHECK_THROW(hdf5_inspect(text), integrity_error);
}

BOOST_AUTO_TEST_CASE(a_missing_file_is_an_io_error)
{
    scratch_dir dir;
    const auto missing = dir / "missing.h5";
    std::string what = message_of<io_error>([&] { hdf5_store store(missing, level_capacity{1}, resume); });
    BOOST_TEST(contains(what, missing.string()), what);
    BOOST_TEST(contains(what, "does not exist"), what);
    BOOST_CHECK_THROW(hdf5_inspect(missing), io_error);
    what = message_of<io_error>([&] { hdf5_store store(dir.path(), level_capacity{1}, resume); });
    BOOST_TEST(contains(what, "not a regular file"), what);
}

BOOST_AUTO_TEST_CASE(a_snapshot_of_another_slot_or_step_is_refused)
{
    // A dataset copied into another slot's place (with h5copy, say) keeps its record: slot and step are
    // checked on every read.
    scratch_dir dir;
    const auto file = dir / "copy.h5";
    make_file(file, 4000);
    {
        const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
        H5Ldelete(f, "/snapshots/slot_000001/state", H5P_DEFAULT);
        BOOST_TEST_REQUIRE(H5Ocopy(f, "/snapshots/slot_000000/state", f, "/snapshots/slot_000001/state", H5P_DEFAULT,
                                   H5P_DEFAULT) >= 0);
        H5Fclose(f);
    }
    hdf5_store store(file, level_capacity{2}, resume);
    BOOST_TEST(store.snapshot_step(1) == -1);
    std::vector<std::byte> back(4000);
    const std::string what = message_of<integrity_error>([&] { store.read(1, 3, view(back)); });
    BOOST_TEST(contains(what, "slot 0"), what);
    BOOST_TEST(hdf5_inspect(file).snapshots.at(1).status == hdf5_snapshot_status::damaged);
}

BOOST_AUTO_TEST_CASE(verify_reads_a_snapshot_that_lies_beyond_a_stale_end_of_allocation)
{
    // A writer killed part way through a flush (CI run 31: remat-stress, kill_forward) can leave metadata
    // on disk newer than the superblock, which HDF5 writes last: a complete dataset whose bytes lie beyond
    // the end of allocation (EOA) the superblock records. The bytes are in the file, but a read-only HDF5
    // refuses them ("addr overflow"). Built here on purpose: slot 2 is written again, larger (its new
    // header takes the old one's place; its data goes to the end of the file), then the superblock from
    // before that write is put back.
    scratch_dir dir;
    const auto file = dir / "stale.h5";
    const std::string slot2 = "/snapshots/slot_000002/state";
    constexpr std::size_t size = 300000;
    std::vector<char> stale;
    {
        hdf5_store store(file, level_capacity{3});
        store.write(0, 3, view(pattern_bytes(3, size)));
        store.write(1, 4, view(pattern_bytes(4, size)));
        store.write(2, 5, view(pattern_bytes(5, size)));
        store.release(2);
        stale = superblock_of(file); // every write ends with the superblock flushed
        BOOST_TEST_REQUIRE(end_of_allocation(stale) == std::filesystem::file_size(file)); // the field is the EOA
        store.write(2, 6, view(pattern_bytes(6, 2 * size)));
    }
    put_back(file, stale);
    const std::uint64_t eoa = end_of_allocation(stale);
    const std::uint64_t data = remat::test::hdf5_data_offset(file, slot2);
    BOOST_TEST_REQUIRE(remat::test::hdf5_header_address(file, slot2) < eoa);
    BOOST_TEST_REQUIRE(data + 2 * size > eoa);
    BOOST_TEST_REQUIRE(std::filesystem::file_size(file) >= data + 2 * size);
    // The state the kill left, as HDF5 reads it (what `remat inspect --verify` used to report as damage).
    const std::string refusal = plain_hdf5_read_error(file, slot2, 2 * size);
    BOOST_TEST_REQUIRE(contains(refusal, "addr overflow"), refusal);
    BOOST_TEST_REQUIRE(contains(refusal, "eoa = " + std::to_string(eoa)), refusal);
    BOOST_TEST(plain_hdf5_read_error(file, "/snapshots/slot_000001/state", size).empty());

    // Every committed slot verifies, slot 2 from the bytes in the file.
    const hdf5_file_contents c = hdf5_inspect(file, true);
    BOOST_TEST_REQUIRE(c.snapshots.size() == 3u);
    for (const hdf5_snapshot_info& s : c.snapshots) {
        BOOST_TEST_INFO("slot " << s.slot << ": " << s.problem);
        BOOST_TEST(s.status == hdf5_snapshot_status::complete);
        BOOST_TEST(s.verified);
    }
    BOOST_TEST(c.snapshots[2].step == 6);
    BOOST_TEST(c.snapshots[2].bytes == 2 * size);

    // Those bytes are still checked: one flipped is damage.
    const auto flipped = dir / "stale-flipped.h5";
    std::filesystem::copy_file(file, flipped);
    flip_byte(flipped, data + size + 7);
    const hdf5_file_contents f = hdf5_inspect(flipped, true);
    BOOST_TEST_REQUIRE(f.snapshots.size() == 3u);
    BOOST_TEST(f.snapshots[0].verified);
    BOOST_TEST(f.snapshots[1].verified);
    BOOST_TEST(f.snapshots[2].status == hdf5_snapshot_status::damaged);
    BOOST_TEST(!f.snapshots[2].verified);
    BOOST_TEST(contains(f.snapshots[2].problem, "checksum mismatch"), f.snapshots[2].problem);

    // And bytes that are not all in the file are damage too, with HDF5's reason.
    const auto cut = dir / "stale-cut.h5";
    std::filesystem::copy_file(file, cut);
    std::filesystem::resize_file(cut, data + size);
    const hdf5_file_contents t = hdf5_inspect(cut, true);
    BOOST_TEST_REQUIRE(t.snapshots.size() == 3u);
    BOOST_TEST(t.snapshots[1].verified);
    BOOST_TEST(t.snapshots[2].status == hdf5_snapshot_status::damaged);
    BOOST_TEST(contains(t.snapshots[2].problem, "addr overflow"), t.snapshots[2].problem);

    // A writer reopening the file moves the end up to the file's size, and reads the snapshot.
    hdf5_store store(file, level_capacity{3}, resume);
    std::vector<std::byte> back(2 * size);
    store.read(2, 6, view(back));
    BOOST_TEST((back == pattern_bytes(6, 2 * size)));
}
