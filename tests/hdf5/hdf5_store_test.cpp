// The HDF5 store's contract with real files in a scratch directory: exact round trips of every size and
// transfer path (against the bytes written), capacities and misuse, reopening, replacing, space reuse
// in place, compression, and device-memory copies through the byte_copier.
#define BOOST_TEST_MODULE hdf5_store
#include <boost/test/unit_test.hpp>

#include "hdf5_test_support.hpp"

#include "remat/detail/xxh64.hpp"
#include "remat/error.hpp"
#include "remat/hdf5/hdf5_store.hpp"
#include "remat/hdf5/inspect.hpp"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

using namespace remat;

// One storage level: no level argument, and a call with one does not compile.
template <class S>
concept takes_a_level = requires(S& s, const_bytes b) { s.write(level_t{0}, slot_t{0}, step_t{0}, b); };
static_assert(storage_level<hdf5_store> && !takes_a_level<hdf5_store>);
using remat::test::pattern_bytes;
using remat::test::scratch_dir;
using remat::test::view;

namespace {

using io = hdf5_store::io_path;

// Sizes around every boundary of the transfer: empty, below and at the 4096-byte O_DIRECT block, below
// and above the 64 KiB alignment threshold, and several pieces with a ragged tail.
const std::vector<std::size_t> sizes = {0,     1,     4095,          4096,       4097,    65535,
                                        65536, 65537, 3 * 8192 + 17, 300 * 1024, 1 << 20, (5 << 20) + 333};

void round_trip_all_sizes(hdf5_store::options opts)
{
    scratch_dir dir;
    opts.transfer_bytes = 8192; // many pieces, so the two-buffer pipeline is exercised
    hdf5_store store(dir / "s.h5", level_capacity{.slots = static_cast<slot_t>(sizes.size())}, opts);
    for (std::size_t i = 0; i < sizes.size(); ++i)
        store.write(static_cast<slot_t>(i), static_cast<step_t>(10 * i), view(pattern_bytes(i, sizes[i])));
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        std::vector<std::byte> back(sizes[i]);
        store.read(static_cast<slot_t>(i), static_cast<step_t>(10 * i), view(back));
        BOOST_TEST_REQUIRE((back == pattern_bytes(i, sizes[i])), "size " << sizes[i]);
    }
    // Overwriting in place after a release, and reading again.
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        store.release(static_cast<slot_t>(i));
        store.write(static_cast<slot_t>(i), static_cast<step_t>(10 * i + 1), view(pattern_bytes(100 + i, sizes[i])));
    }
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        std::vector<std::byte> back(sizes[i]);
        store.read(static_cast<slot_t>(i), static_cast<step_t>(10 * i + 1), view(back));
        BOOST_TEST_REQUIRE((back == pattern_bytes(100 + i, sizes[i])), "size " << sizes[i]);
    }
    // HDF5's own reading of the file (a different code path) agrees with every checksum.
    const hdf5_file_contents c = hdf5_inspect(store.path(), true);
    BOOST_TEST(c.snapshots.size() == sizes.size());
    for (const hdf5_snapshot_info& s : c.snapshots) {
        BOOST_TEST(s.verified, s.dataset << ": " << s.problem);
        BOOST_TEST(
            s.checksum ==
            detail::xxh64(
                pattern_bytes(100 + static_cast<std::uint64_t>(s.slot), sizes[static_cast<std::size_t>(s.slot)]).data(),
                sizes[static_cast<std::size_t>(s.slot)]));
    }
}

std::uintmax_t size_of(const std::filesystem::path& p)
{
    return std::filesystem::file_size(p);
}

// A "device" for tests: host memory behind memory_space::device, with a copier that counts its calls.
int device_copies = 0;
void fake_device_copy(void* /*context*/, void* dst, memory_space, const void* src, memory_space, std::size_t size)
{
    ++device_copies;
    if (size != 0)
        std::memcpy(dst, src, size);
}

} // namespace

BOOST_AUTO_TEST_CASE(round_trips_through_direct_io)
{
    round_trip_all_sizes({.io = io::automatic});
}

BOOST_AUTO_TEST_CASE(round_trips_through_the_page_cache)
{
    round_trip_all_sizes({.io = io::buffered});
}

BOOST_AUTO_TEST_CASE(round_trips_compressed)
{
    round_trip_all_sizes({.compression = 3});
}

BOOST_AUTO_TEST_CASE(round_trips_from_device_memory)
{
    scratch_dir dir;
    for (const int compression : {0, 1}) {
        hdf5_store store(
            dir / ("d" + std::to_string(compression) + ".h5"), level_capacity{2},
            {.compression = compression, .transfer_bytes = 16384, .copy = byte_copier{&fake_device_copy, nullptr}});
        const std::vector<std::byte> data = pattern_bytes(7, 100000);
        device_copies = 0;
        store.write(1, 3, const_bytes{data.data(), data.size(), memory_space::device});
        std::vector<std::byte> back(data.size());
        store.read(1, 3, mutable_bytes{back.data(), back.size(), memory_space::device});
        BOOST_TEST((back == data));
        BOOST_TEST(device_copies >= 2); // every byte went through the copier, both ways
    }
}

BOOST_AUTO_TEST_CASE(round_trips_from_aligned_memory)
{
    // A state whose buffer is aligned as O_DIRECT needs (4096 bytes, or less where the kernel says so)
    // moves without a copy, straight between the disk and its buffer; one at an odd address is copied.
    scratch_dir dir;
    hdf5_store store(dir / "aligned.h5", level_capacity{3}, {.transfer_bytes = 16384});
    const std::size_t size = (3 << 20) + 4096 + 77; // many pieces, then a tail that is no whole block
    const std::vector<std::byte> data = pattern_bytes(9, size);
    void* memory = nullptr;
    BOOST_TEST_REQUIRE(::posix_memalign(&memory, 4096, 2 * size + 16384) == 0);
    std::unique_ptr<std::byte, decltype(&std::free)> owner(static_cast<std::byte*>(memory), &std::free);
    step_t step = 0;
    for (const std::size_t shift : {std::size_t{0}, std::size_t{512}, std::size_t{16}}) {
        std::byte* out = owner.get() + shift;
        std::byte* in = owner.get() + (size + 8192) / 4096 * 4096 + shift;
        std::memcpy(out, data.data(), size);
        std::memset(in, 0, size);
        if (store.snapshot_step(2) >= 0)
            store.release(2);
        store.write(2, ++step, const_bytes{out, size, memory_space::host});
        store.read(2, step, mutable_bytes{in, size, memory_space::host});
        BOOST_TEST(std::memcmp(in, data.data(), size) == 0, "shift " << shift);
        BOOST_TEST(hdf5_inspect(store.path(), true).snapshots.at(0).verified);
    }
}

BOOST_AUTO_TEST_CASE(aligned_memory_moves_without_a_copy_in_one_piece_or_many)
{
    // The copier sees every byte that goes through the store's own pieces. From and into a buffer aligned
    // as O_DIRECT needs, none does: a snapshot that fits in one piece (the asynchronous engine's staging
    // buffers of 1 MiB states, say) as well as one of many; at an odd address, all of it does.
    scratch_dir dir;
    for (const std::size_t piece : {std::size_t{4} << 20, std::size_t{16384}}) {
        hdf5_store store(dir / ("p" + std::to_string(piece) + ".h5"), level_capacity{1},
                         {.transfer_bytes = piece, .copy = byte_copier{&fake_device_copy, nullptr}});
        if (!store.direct_io()) {
            BOOST_TEST_MESSAGE("no O_DIRECT on this file system: nothing to check");
            return;
        }
        for (const std::size_t size : {std::size_t{1} << 20, (std::size_t{1} << 20) + 77}) {
            const std::vector<std::byte> data = pattern_bytes(11, size);
            void* memory = nullptr;
            BOOST_TEST_REQUIRE(::posix_memalign(&memory, 4096, 2 * size + 16384) == 0);
            std::unique_ptr<std::byte, decltype(&std::free)> owner(static_cast<std::byte*>(memory), &std::free);
            for (const std::size_t shift : {std::size_t{0}, std::size_t{16}}) {
                std::byte* out = owner.get() + shift;
                std::byte* in = owner.get() + (size + 8192) / 4096 * 4096 + shift;
                std::memcpy(out, data.data(), size);
                std::memset(in, 0, size);
                if (store.snapshot_step(0) >= 0)
                    store.release(0);
                device_copies = 0;
                store.write(0, 1, const_bytes{out, size, memory_space::host});
                store.read(0, 1, mutable_bytes{in, size, memory_space::host});
                BOOST_TEST(std::memcmp(in, data.data(), size) == 0, "piece " << piece << " shift " << shift);
                if (shift == 0)
                    BOOST_TEST(device_copies == 0, "piece " << piece << " size " << size);
                else
                    BOOST_TEST(device_copies > 0, "piece " << piece << " size " << size);
                BOOST_TEST(hdf5_inspect(store.path(), true).snapshots.at(0).verified);
            }
        }
    }
}

BOOST_AUTO_TEST_CASE(element_types_show_in_the_file)
{
    scratch_dir dir;
    for (const hdf5_element e : {hdf5_element::uint8, hdf5_element::int32, hdf5_element::int64, hdf5_element::float32,
                                 hdf5_element::float64}) {
        const auto file = dir / (std::string(to_string(e)) + ".h5");
        {
            hdf5_store store(file, level_capacity{1}, {.element = e});
            std::vector<double> x(1000, 0.25);
            store.write(0, 1, host_bytes(std::as_bytes(std::span(x))));
            if (element_bytes(e) > 1) { // 3 bytes are no whole number of elements
                store.release(0);
                BOOST_CHECK_THROW(store.write(0, 2, view(pattern_bytes(1, 3))), argument_error);
                store.write(0, 1, host_bytes(std::as_bytes(std::span(x))));
            }
        }
        const hdf5_file_contents c = hdf5_inspect(file, true);
        BOOST_TEST_REQUIRE(c.snapshots.size() == 1u);
        BOOST_TEST(c.snapshots[0].element_type == to_string(e));
        BOOST_TEST(c.snapshots[0].verified);
        // The dataset's HDF5 type and length, seen through the C API.
        const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
        const hid_t d = H5Dopen2(f, "/snapshots/slot_000000/state", H5P_DEFAULT);
        const hid_t t = H5Dget_type(d);
        const hid_t s = H5Dget_space(d);
        BOOST_TEST(H5Tget_size(t) == element_bytes(e));
        BOOST_TEST(H5Sget_simple_extent_npoints(s) == static_cast<hssize_t>(8000 / element_bytes(e)));
        BOOST_TEST(H5Tget_class(t) ==
                   ((e == hdf5_element::float32 || e == hdf5_element::float64) ? H5T_FLOAT : H5T_INTEGER));
        H5Sclose(s);
        H5Tclose(t);
        H5Dclose(d);
        H5Fclose(f);
    }
}

BOOST_AUTO_TEST_CASE(capacity_and_misuse_are_reported)
{
    scratch_dir dir;
    BOOST_CHECK_THROW(hdf5_store(dir / "z.h5", level_capacity{0}), argument_error);
    // A bad count is named as given (not as 18446744073709551615).
    for (const slot_t bad : {slot_t{0}, slot_t{-1}}) {
        try {
            hdf5_store(dir / "z.h5", bad);
            BOOST_ERROR("no exception for " << bad << " slots");
        } catch (const argument_error& e) {
            BOOST_TEST(std::string(e.what()).find("got " + std::to_string(bad)) != std::string::npos, e.what());
        }
    }
    try {
        hdf5_store(dir / "z.h5", level_capacity{0});
    } catch (const argument_error& e) {
        BOOST_TEST(std::string(e.what()).find("0 slots and unlimited bytes") != std::string::npos, e.what());
    }
    BOOST_CHECK_THROW(hdf5_store(dir / "z.h5", level_capacity{1}, {.compression = 10}), argument_error);
    BOOST_CHECK_THROW(hdf5_store(dir / "z.h5", level_capacity{1}, {.transfer_bytes = 100}), argument_error);

    hdf5_store store(dir / "s.h5", level_capacity{.slots = 3, .bytes = 10000});
    const auto a = pattern_bytes(1, 4000);
    store.write(0, 0, view(a));
    BOOST_CHECK_THROW(store.write(3, 1, view(a)), schedule_error);  // slot outside
    BOOST_CHECK_THROW(store.write(-1, 1, view(a)), schedule_error); // slot outside
    BOOST_CHECK_THROW(store.write(0, 1, view(a)), schedule_error);  // still held
    store.write(1, 1, view(a));
    BOOST_CHECK_THROW(store.write(2, 2, view(a)), capacity_error); // 12000 > 10000 bytes
    BOOST_CHECK_THROW(store.release(2), schedule_error);           // never written
    std::vector<std::byte> back(4000);
    BOOST_CHECK_THROW(store.read(0, 5, view(back)), integrity_error); // holds x_0
    std::vector<std::byte> wrong(3999);
    BOOST_CHECK_THROW(store.read(0, 0, view(wrong)), integrity_error); // size
    store.read(0, 0, view(back));
    BOOST_TEST((back == a));
    // The failed calls changed nothing.
    const level_stats st = store.stats();
    BOOST_TEST(st.name == "disk");
    BOOST_TEST(st.stores == 2u);
    BOOST_TEST(st.restores == 1u);
    BOOST_TEST(st.slots_in_use == 2u);
    BOOST_TEST(st.bytes_in_use == 8000u);
    BOOST_TEST(st.bytes_written == 8000u);
    BOOST_TEST(st.bytes_read == 4000u);
    BOOST_TEST(store.snapshot_bytes(1) == 4000u);
    BOOST_TEST(store.snapshot_step(1) == 1);
    store.release(1);
    BOOST_TEST(store.snapshot_bytes(1) == 0u);
    BOOST_TEST(store.snapshot_step(1) == -1);
    store.release_all();
    BOOST_TEST(store.stats().slots_in_use == 0u);
    BOOST_TEST(store.capacity().slots == 3u);
}

BOOST_AUTO_TEST_CASE(unlimited_slots_beyond_those_prepared)
{
    // Slot groups are made in advance for the first 64 slots; later ones are made on demand.
    scratch_dir dir;
    const auto file = dir / "many.h5";
    const std::vector<slot_t> slots = {0, 4095, 4096, 9000, 123456};
    {
        hdf5_store store(file, level_capacity{}); // unlimited slots and bytes
        BOOST_TEST(store.capacity().slots == level_capacity::unlimited_slots);
        for (const slot_t s : slots)
            store.write(s, s + 1, view(pattern_bytes(static_cast<std::uint64_t>(s), 3000)));
    }
    hdf5_store store(file, level_capacity{}, {.mode = hdf5_store::open_mode::resume});
    for (const slot_t s : slots) {
        BOOST_TEST(store.snapshot_step(s) == s + 1);
        std::vector<std::byte> back(3000);
        store.read(s, s + 1, view(back));
        BOOST_TEST((back == pattern_bytes(static_cast<std::uint64_t>(s), 3000)));
    }
    BOOST_TEST(store.snapshot_step(5000) == -1);
    BOOST_TEST(hdf5_inspect(file, true).snapshots.size() == slots.size());
}

BOOST_AUTO_TEST_CASE(resume_keeps_complete_snapshots)
{
    scratch_dir dir;
    const auto file = dir / "r.h5";
    {
        hdf5_store store(file, level_capacity{4});
        store.write(0, 10, view(pattern_bytes(10, 70000)));
        store.write(2, 12, view(pattern_bytes(12, 5)));
        store.write(3, 13, view(pattern_bytes(13, 100)));
        store.close();
        BOOST_CHECK_THROW(store.write(1, 1, view(pattern_bytes(1, 5))), argument_error); // closed
    }
    {
        // Only slots within the capacity are taken over.
        hdf5_store store(file, level_capacity{3}, {.mode = hdf5_store::open_mode::resume});
        BOOST_TEST(store.snapshot_step(0) == 10);
        BOOST_TEST(store.snapshot_step(1) == -1);
        BOOST_TEST(store.snapshot_step(2) == 12);
        BOOST_TEST(store.snapshot_bytes(0) == 70000u);
        BOOST_TEST(store.stats().slots_in_use == 2u);
        std::vector<std::byte> back(70000);
        store.read(0, 10, view(back));
        BOOST_TEST((back == pattern_bytes(10, 70000)));
        BOOST_CHECK_THROW(store.write(0, 11, view(back)), schedule_error); // held until released
        store.release(0);
        store.write(0, 11, view(pattern_bytes(11, 70000)));
    }
    hdf5_store store(file, level_capacity{4}, {.mode = hdf5_store::open_mode::resume});
    std::vector<std::byte> back(70000);
    store.read(0, 11, view(back));
    BOOST_TEST((back == pattern_bytes(11, 70000)));
    BOOST_TEST(store.snapshot_step(3) == 13);
    BOOST_CHECK_THROW(hdf5_store(dir / "missing.h5", level_capacity{1}, {.mode = hdf5_store::open_mode::resume}),
                      io_error);
}

BOOST_AUTO_TEST_CASE(replace_starts_empty_but_never_replaces_other_files)
{
    scratch_dir dir;
    const auto file = dir / "x.h5";
    {
        hdf5_store store(file, level_capacity{2});
        store.write(0, 1, view(pattern_bytes(1, 1000)));
    }
    {
        hdf5_store store(file, level_capacity{2}); // replaces the earlier snapshot file
        BOOST_TEST(store.snapshot_step(0) == -1);
        BOOST_TEST(hdf5_inspect(file).snapshots.empty());
    }
    // A non-empty file that is not a remat snapshot file is left alone.
    const auto text = dir / "notes.txt";
    std::ofstream(text) << "my results\n";
    BOOST_CHECK_THROW(hdf5_store(text, level_capacity{1}), io_error);
    BOOST_TEST(remat::test::read_file(text).size() == 11u);
    const auto foreign = dir / "foreign.h5";
    const hid_t f = H5Fcreate(foreign.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    H5Fclose(f);
    BOOST_CHECK_THROW(hdf5_store(foreign, level_capacity{1}), io_error);
    BOOST_TEST(H5Fis_hdf5(foreign.c_str()) > 0);
    // An empty file is fine (mkstemp makes those), and so is a path in a missing directory... not.
    std::ofstream(dir / "empty.h5").close();
    BOOST_CHECK_NO_THROW(hdf5_store(dir / "empty.h5", level_capacity{1}));
    BOOST_CHECK_THROW(hdf5_store(dir / "no-such-dir" / "a.h5", level_capacity{1}), io_error);
    // No temporary files are left beside the snapshot files.
    for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
        BOOST_TEST(entry.path().string().find(".remat-new-") == std::string::npos, entry.path());
}

BOOST_AUTO_TEST_CASE(rewriting_slots_does_not_grow_the_file)
{
    scratch_dir dir;
    hdf5_store store(dir / "g.h5", level_capacity{3});
    auto cycle = [&](int round) {
        for (slot_t s = 0; s < 3; ++s) {
            if (store.snapshot_step(s) >= 0)
                store.release(s);
            store.write(s, round * 3 + s, view(pattern_bytes(static_cast<std::uint64_t>(round * 3 + s), 200000)));
        }
    };
    cycle(0);
    const auto settled = size_of(store.path());
    for (int round = 1; round < 30; ++round)
        cycle(round);
    BOOST_TEST(size_of(store.path()) == settled); // in place: not a byte more
    std::vector<std::byte> back(200000);
    store.read(2, 29 * 3 + 2, view(back));
    BOOST_TEST((back == pattern_bytes(29 * 3 + 2, 200000)));

    // Changing sizes makes new datasets; the space of the old ones is reused, so the file stays within
    // a small multiple of what it holds.
    for (int round = 0; round < 40; ++round) {
        const std::size_t size = round % 2 == 0 ? 150000 : 190000;
        for (slot_t s = 0; s < 3; ++s) {
            store.release(s);
            store.write(s, 1000 + round, view(pattern_bytes(static_cast<std::uint64_t>(round), size)));
        }
    }
    BOOST_TEST(size_of(store.path()) <= 2 * settled, size_of(store.path()) << " vs " << settled);
}

// A long run on one file, as remat-stress's rounds make one: the next run opens the file in resume mode,
// frees what it holds and writes the same sizes again, in place, readable and verified.
BOOST_AUTO_TEST_CASE(a_reopened_and_freed_file_rewrites_its_slots_in_place)
{
    scratch_dir dir;
    const std::filesystem::path path = dir / "reused.h5";
    const hdf5_store::options resume{.mode = hdf5_store::open_mode::resume, .run_identity = "one plan"};
    {
        hdf5_store first(path, level_capacity{3}, {.run_identity = "one plan"});
        for (slot_t s = 0; s < 3; ++s)
            first.write(s, s, view(pattern_bytes(static_cast<std::uint64_t>(s), 300000)));
    }
    const auto settled = size_of(path);
    for (int run = 1; run <= 3; ++run) {
        hdf5_store next(path, level_capacity{3}, resume);
        BOOST_TEST(next.snapshot_step(2) == 3 * (run - 1) + 2); // the last run's snapshot, until freed
        next.release_all();
        for (slot_t s = 0; s < 3; ++s)
            next.write(s, 3 * run + s, view(pattern_bytes(static_cast<std::uint64_t>(3 * run + s), 300000)));
        std::vector<std::byte> back(300000);
        next.read(1, 3 * run + 1, view(back));
        BOOST_TEST((back == pattern_bytes(static_cast<std::uint64_t>(3 * run + 1), 300000)));
    }
    // Only the guard byte each session puts at the end of the file (flush_metadata) is new.
    BOOST_TEST(size_of(path) <= settled + 3, size_of(path) << " vs " << settled);
    const hdf5_file_contents c = hdf5_inspect(path, true);
    BOOST_TEST(c.snapshots.size() == 3U);
    for (const hdf5_snapshot_info& s : c.snapshots)
        BOOST_TEST((s.verified && s.step == 9 + s.slot), s.dataset << ": " << s.problem);
}

BOOST_AUTO_TEST_CASE(compression_shrinks_compressible_states)
{
    scratch_dir dir;
    std::vector<double> smooth(1 << 18);
    for (std::size_t i = 0; i < smooth.size(); ++i)
        smooth[i] = static_cast<double>(i % 64);
    const const_bytes bytes = host_bytes(std::as_bytes(std::span(smooth)));
    hdf5_store plain(dir / "plain.h5", level_capacity{1}, {.element = hdf5_element::float64});
    hdf5_store packed(dir / "packed.h5", level_capacity{1}, {.compression = 6, .element = hdf5_element::float64});
    plain.write(0, 0, bytes);
    packed.write(0, 0, bytes);
    BOOST_TEST(size_of(packed.path()) * 10 < size_of(plain.path()));
    std::vector<double> back(smooth.size());
    packed.read(0, 0, host_bytes(std::as_writable_bytes(std::span(back))));
    BOOST_TEST((back == smooth));
    // A compressed slot is rewritten as a new dataset each time, and reads back.
    packed.release(0);
    smooth[5] = -1;
    packed.write(0, 1, bytes);
    packed.read(0, 1, host_bytes(std::as_writable_bytes(std::span(back))));
    BOOST_TEST((back == smooth));
}

BOOST_AUTO_TEST_CASE(moved_stores_keep_working)
{
    scratch_dir dir;
    hdf5_store a(dir / "a.h5", level_capacity{2});
    a.write(0, 4, view(pattern_bytes(4, 10000)));
    hdf5_store b(std::move(a));
    std::vector<std::byte> back(10000);
    b.read(0, 4, view(back));
    BOOST_TEST((back == pattern_bytes(4, 10000)));
    hdf5_store c(dir / "c.h5", level_capacity{2});
    c = std::move(b); // c's own file is closed first
    c.read(0, 4, view(back));
    BOOST_TEST(c.path() == dir / "a.h5");
    BOOST_TEST(hdf5_inspect(dir / "c.h5").snapshots.empty());
}

namespace {

// The groups under /snapshots of a closed snapshot file, counted by HDF5 itself.
hsize_t slot_groups_in(const std::filesystem::path& file)
{
    const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    BOOST_TEST_REQUIRE(f >= 0);
    H5G_info_t info{};
    const herr_t status = H5Gget_info_by_name(f, "snapshots", &info, H5P_DEFAULT);
    H5Fclose(f);
    BOOST_TEST_REQUIRE(status >= 0);
    return info.nlinks;
}

} // namespace

BOOST_AUTO_TEST_CASE(an_unlimited_store_makes_its_slot_groups_lazily)
{
    // 4096 groups up front cost 60-140 ms per store; a store that may use a handful of slots pays for a
    // first batch only, and later slots still get theirs on demand.
    scratch_dir dir;
    {
        hdf5_store store(dir / "u.h5", level_capacity{});
    }
    BOOST_TEST(slot_groups_in(dir / "u.h5") <= 64u);
    {
        hdf5_store store(dir / "small.h5", level_capacity{5});
    }
    BOOST_TEST(slot_groups_in(dir / "small.h5") == 5u);
    {
        hdf5_store store(dir / "grown.h5", level_capacity{});
        store.write(200, 1, view(pattern_bytes(1, 100)));
        std::vector<std::byte> back(100);
        store.read(200, 1, view(back));
        BOOST_TEST((back == pattern_bytes(1, 100)));
    }
    const hsize_t grown = slot_groups_in(dir / "grown.h5");
    BOOST_TEST(grown > 200u);
    BOOST_TEST(grown <= 64u + 4096u);
}

BOOST_AUTO_TEST_CASE(a_second_store_on_the_same_file_is_refused)
{
    // Across processes HDF5's lock refuses the second open; within one process the second store would
    // replace (or share) the file and the first would write to an unlinked one.
    scratch_dir dir;
    const auto file = dir / "one.h5";
    hdf5_store first(file, level_capacity{2});
    first.write(0, 3, view(pattern_bytes(3, 5000)));
    auto check_refused = [&](const std::filesystem::path& path, hdf5_store::open_mode mode) {
        try {
            hdf5_store second(path, level_capacity{2}, {.mode = mode});
            BOOST_ERROR("a second store opened " << path);
        } catch (const io_error& e) {
            BOOST_TEST(std::string(e.what()).find("already open by another hdf5_store in this process") !=
                           std::string::npos,
                       e.what());
            BOOST_TEST(std::string(e.what()).find(path.string()) != std::string::npos, e.what());
        }
    };
    check_refused(file, hdf5_store::open_mode::replace);
    check_refused(file, hdf5_store::open_mode::resume);
    check_refused(dir / "." / "one.h5", hdf5_store::open_mode::replace); // another spelling
    std::filesystem::create_hard_link(file, dir / "link.h5");
    check_refused(dir / "link.h5", hdf5_store::open_mode::resume); // another name of the same file
    std::filesystem::remove(dir / "link.h5");
    // The first store is untouched and keeps working.
    first.write(1, 4, view(pattern_bytes(4, 5000)));
    std::vector<std::byte> back(5000);
    first.read(0, 3, view(back));
    BOOST_TEST((back == pattern_bytes(3, 5000)));
    // Moving keeps the claim; closing or destroying the store gives the file up.
    hdf5_store moved(std::move(first));
    check_refused(file, hdf5_store::open_mode::resume);
    moved.close();
    {
        hdf5_store again(file, level_capacity{2}, {.mode = hdf5_store::open_mode::resume});
        BOOST_TEST(again.snapshot_step(1) == 4);
    }
    hdf5_store fresh(file, level_capacity{2});
    BOOST_TEST(fresh.snapshot_step(0) == -1);
}

BOOST_AUTO_TEST_CASE(non_durable_writes_are_durable_after_flush)
{
    scratch_dir dir;
    hdf5_store store(dir / "n.h5", level_capacity{2}, {.durable_writes = false});
    store.write(0, 1, view(pattern_bytes(1, 123456)));
    store.flush();
    const hdf5_file_contents c = hdf5_inspect(store.path(), true);
    BOOST_TEST_REQUIRE(c.snapshots.size() == 1u);
    BOOST_TEST(c.snapshots[0].verified);
}

BOOST_AUTO_TEST_CASE(direct_io_is_used_where_the_file_system_supports_it)
{
    scratch_dir dir;
    hdf5_store buffered(dir / "b.h5", level_capacity{1}, {.io = io::buffered});
    BOOST_TEST(!buffered.direct_io());
    // Automatic picks O_DIRECT when the file system takes it; `direct` insists on it.
    hdf5_store automatic(dir / "a.h5", level_capacity{1});
    try {
        hdf5_store direct(dir / "d.h5", level_capacity{1}, {.io = io::direct});
        BOOST_TEST(direct.direct_io());
        BOOST_TEST(automatic.direct_io());
    } catch (const io_error& e) { // a file system without O_DIRECT (tmpfs before Linux 6.6)
        BOOST_TEST(std::string(e.what()).find("O_DIRECT") != std::string::npos);
        BOOST_TEST(!automatic.direct_io());
    }
}
