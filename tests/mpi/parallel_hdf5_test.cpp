// The parallel HDF5 level under mpirun -np 4, parts of different sizes on each rank: round trips, the file
// as HDF5 itself reads it (decomposition, per-rank checksums against XXH64 of each hyperslab), resuming,
// a file of another decomposition refused naming the ranks, a damaged hyperslab refused on every rank
// naming its rank, misuse on one rank refused on every rank; states of several parts per rank gathered and
// scattered with their sizes recorded; a damaged or interrupted record an integrity_error, as in the serial
// store.
#define BOOST_TEST_MODULE mpi_parallel_hdf5
#include "command.hpp"
#include "contains.hpp"
#include "mpi_session.hpp"

#include <remat/detail/xxh64.hpp>
#include <remat/mpi/communicator.hpp>
#include <remat/mpi/parallel_hdf5_store.hpp>

#include "remat/hdf5_internal/parallel_format.hpp"

#include <boost/test/unit_test.hpp>
#include <hdf5.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <span>
#include <string>
#include <vector>

using remat::test::mpi_session;
BOOST_TEST_GLOBAL_FIXTURE(mpi_session);

namespace {

int me()
{
    return remat::mpi::rank(MPI_COMM_WORLD);
}

// Rank r holds 1000 (r + 1) + r bytes: parts of different sizes, none a multiple of another.
std::uint64_t part_of(int r)
{
    return 1000u * static_cast<std::uint64_t>(r + 1) + static_cast<std::uint64_t>(r);
}

std::vector<std::byte> pattern(std::uint64_t bytes, remat::step_t step)
{
    std::vector<std::byte> v(bytes);
    for (std::size_t i = 0; i < v.size(); ++i)
        v[i] = static_cast<std::byte>((i * 131 + static_cast<std::size_t>(step) * 7 + static_cast<std::size_t>(me())) &
                                      0xff);
    return v;
}

// A scratch file all ranks agree on (rank 0 names it).
std::filesystem::path scratch(const std::string& name)
{
    char dir[256] = {};
    if (me() == 0) {
        const std::filesystem::path d =
            std::filesystem::temp_directory_path() / ("remat_phdf5_" + std::to_string(getpid()));
        std::filesystem::create_directories(d);
        std::strncpy(dir, d.c_str(), sizeof dir - 1);
    }
    MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
    return std::filesystem::path(dir) / name;
}

struct scratch_cleanup {
    ~scratch_cleanup()
    {
        MPI_Barrier(MPI_COMM_WORLD);
        if (me() == 0)
            std::filesystem::remove_all(scratch("x").parent_path());
    }
};

using remat::test::contains;

remat::const_bytes view(const std::vector<std::byte>& v)
{
    return remat::host_bytes(std::span<const std::byte>(v));
}
remat::mutable_bytes view(std::vector<std::byte>& v)
{
    return remat::host_bytes(std::span<std::byte>(v));
}

// Each rank's part of x_step gathered on rank 0 in rank order (the dataset's byte order).
std::vector<std::byte> gathered(remat::step_t step)
{
    const std::vector<std::byte> p = pattern(part_of(me()), step);
    std::vector<int> counts(4);
    std::vector<int> offsets(4, 0);
    for (int r = 0; r < 4; ++r) {
        counts[static_cast<std::size_t>(r)] = static_cast<int>(part_of(r));
        if (r > 0)
            offsets[static_cast<std::size_t>(r)] =
                offsets[static_cast<std::size_t>(r - 1)] + counts[static_cast<std::size_t>(r - 1)];
    }
    std::vector<std::byte> whole(me() == 0 ? static_cast<std::size_t>(offsets[3] + counts[3]) : 0);
    MPI_Gatherv(p.data(), static_cast<int>(p.size()), MPI_BYTE, whole.data(), counts.data(), offsets.data(), MPI_BYTE,
                0, MPI_COMM_WORLD);
    return whole;
}

std::vector<std::uint64_t> u64_attribute(hid_t object, const char* name)
{
    const hid_t a = H5Aopen(object, name, H5P_DEFAULT);
    const hid_t space = H5Aget_space(a);
    std::vector<std::uint64_t> v(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space)));
    H5Aread(a, H5T_NATIVE_UINT64, v.data());
    H5Sclose(space);
    H5Aclose(a);
    return v;
}

} // namespace

BOOST_AUTO_TEST_CASE(round_trips_and_the_file_as_hdf5_reads_it)
{
    BOOST_TEST_REQUIRE(remat::mpi::size(MPI_COMM_WORLD) == 4);
    scratch_cleanup cleanup;
    const std::filesystem::path file = scratch("round.h5");
    const std::uint64_t mine = part_of(me());
    {
        remat::mpi::parallel_hdf5_store store(MPI_COMM_WORLD, file, 3, mine);
        BOOST_TEST(store.decomposition().size() == 4u);
        BOOST_TEST(store.decomposition()[2].offset == part_of(0) + part_of(1));
        BOOST_TEST(store.decomposition()[2].bytes == part_of(2));
        for (remat::step_t step : {6, 7, 8})
            store.write(step - 6, step, view(pattern(mine, step)));
        store.release(0);
        store.write(0, 30, view(pattern(mine, 30))); // in place over a released slot
        for (remat::step_t step : {30, 7, 8}) {
            std::vector<std::byte> back(mine);
            store.read(step == 30 ? 0 : step - 6, step, view(back));
            BOOST_TEST((back == pattern(mine, step)));
        }
        BOOST_TEST(store.snapshot_step(0) == 30);
        BOOST_TEST(store.snapshot_bytes(1) == mine);
        BOOST_TEST(store.stats().stores == 4u);
        BOOST_TEST(store.stats().restores == 3u);
        BOOST_TEST(store.stats().peak_slots == 3u);
        store.close();
    }
    // Rank 0 reads the file through HDF5 alone: the decomposition table, x_8's bytes in rank order, and each
    // rank's checksum against XXH64 of its own bytes.
    const std::vector<std::byte> x8 = gathered(8);
    const std::vector<std::byte> mine8 = pattern(mine, 8);
    const std::uint64_t my_sum = remat::detail::xxh64(mine8.data(), mine8.size());
    std::vector<std::uint64_t> sums(4);
    MPI_Gather(&my_sum, 1, MPI_UINT64_T, sums.data(), 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    if (me() == 0) {
        const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
        BOOST_REQUIRE(f >= 0);
        BOOST_TEST(u64_attribute(f, "ranks") == std::vector<std::uint64_t>{4});
        std::vector<std::uint64_t> table(8);
        const hid_t d = H5Dopen2(f, "/decomposition", H5P_DEFAULT);
        BOOST_TEST(H5Dread(d, H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, table.data()) >= 0);
        H5Dclose(d);
        std::uint64_t offset = 0;
        for (int r = 0; r < 4; ++r) {
            BOOST_TEST(table[2 * static_cast<std::size_t>(r)] == offset);
            BOOST_TEST(table[2 * static_cast<std::size_t>(r) + 1] == part_of(r));
            offset += part_of(r);
        }
        const hid_t s = H5Dopen2(f, "/snapshots/slot_000002", H5P_DEFAULT);
        std::vector<std::byte> data(x8.size());
        BOOST_TEST(H5Dread(s, H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()) >= 0);
        BOOST_TEST((data == x8));
        BOOST_TEST(u64_attribute(s, "checksums") == sums);
        BOOST_TEST(u64_attribute(s, "step") == std::vector<std::uint64_t>{8});
        H5Dclose(s);
        H5Fclose(f);
    }
}

BOOST_AUTO_TEST_CASE(resume_keeps_complete_snapshots_and_refuses_another_decomposition)
{
    scratch_cleanup cleanup;
    const std::filesystem::path file = scratch("resume.h5");
    const std::uint64_t mine = part_of(me());
    {
        remat::mpi::parallel_hdf5_store store(MPI_COMM_WORLD, file, 2, mine);
        store.write(1, 42, view(pattern(mine, 42)));
    } // closed without close(): as after a run
    {
        remat::mpi::parallel_hdf5_store again(MPI_COMM_WORLD, file, 2, mine,
                                              {.mode = remat::mpi::parallel_hdf5_store::open_mode::resume});
        BOOST_TEST(again.snapshot_step(1) == 42);
        BOOST_TEST(again.snapshot_step(0) == -1);
        std::vector<std::byte> back(mine);
        again.read(1, 42, view(back));
        BOOST_TEST((back == pattern(mine, 42)));
    }
    // Rank 2's part is one byte larger: its part and rank 3's offset differ from the file's.
    try {
        remat::mpi::parallel_hdf5_store other(MPI_COMM_WORLD, file, 2, mine + (me() == 2 ? 1 : 0),
                                              {.mode = remat::mpi::parallel_hdf5_store::open_mode::resume});
        BOOST_ERROR("another decomposition was accepted");
    } catch (const remat::argument_error& e) {
        const std::string w = e.what();
        BOOST_TEST(contains(w,
                            "was written by another decomposition: rank 2's part is bytes 3001+3003 here but "
                            "3001+3002 in the file; rank 3's part is bytes 6004+4003 here but 6003+4003 in the file"),
                   w);
    }
    // Two of the four ranks: another number of ranks.
    MPI_Comm half = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, me() < 2 ? 0 : 1, me(), &half);
    if (me() < 2) {
        try {
            remat::mpi::parallel_hdf5_store other(half, file, 2, mine,
                                                  {.mode = remat::mpi::parallel_hdf5_store::open_mode::resume});
            BOOST_ERROR("a file of 4 ranks was accepted by 2");
        } catch (const remat::argument_error& e) {
            BOOST_TEST(contains(e.what(), "it was written by 4 ranks, this job has 2"), e.what());
        }
    }
    MPI_Comm_free(&half);
}

BOOST_AUTO_TEST_CASE(a_damaged_hyperslab_is_refused_on_every_rank_naming_its_rank)
{
    scratch_cleanup cleanup;
    const std::filesystem::path file = scratch("damaged.h5");
    const std::uint64_t mine = part_of(me());
    remat::mpi::parallel_hdf5_store store(MPI_COMM_WORLD, file, 2, mine, {.durable_writes = true});
    store.write(0, 3, view(pattern(mine, 3)));
    // `remat inspect --verify` (the serial HDF5 tool, an independent reader) checks every rank's part.
    if (me() == 0) {
        const remat::test::tool_result ok =
            remat::test::run_command(std::string(REMAT_TOOL) + " inspect --verify --format json " + file.string());
        BOOST_TEST(ok.status == 0, ok.err);
        BOOST_TEST(contains(ok.out, "\"format\": \"remat parallel snapshot file\""), ok.out);
        BOOST_TEST(contains(ok.out, "\"ranks\": 4"), ok.out);
        BOOST_TEST(contains(ok.out, "\"offset\": 3001,\n      \"bytes\": 3002"), ok.out);
        BOOST_TEST(contains(ok.out, "\"verified\": true"), ok.out);
    }
    // Rank 0 flips one byte of rank 1's hyperslab behind the store's back (through HDF5, read-only, it finds
    // where the dataset lives).
    MPI_Barrier(MPI_COMM_WORLD);
    if (me() == 0) {
        const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
        haddr_t at = HADDR_UNDEF;
        if (f >= 0) {
            const hid_t d = H5Dopen2(f, "/snapshots/slot_000000", H5P_DEFAULT);
            at = H5Dget_offset(d);
            H5Dclose(d);
            H5Fclose(f);
        } else {
            // The store holds the file open (and locked): find the offset with the lock lifted.
            setenv("HDF5_USE_FILE_LOCKING", "FALSE", 1);
        }
        BOOST_REQUIRE(at != HADDR_UNDEF);
        const int fd = ::open(file.c_str(), O_RDWR);
        std::byte b{};
        const off_t where = static_cast<off_t>(at + part_of(0) + 17);
        BOOST_REQUIRE(::pread(fd, &b, 1, where) == 1);
        b ^= std::byte{0x40};
        BOOST_REQUIRE(::pwrite(fd, &b, 1, where) == 1);
        ::close(fd);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    std::vector<std::byte> back(mine);
    try {
        store.read(0, 3, view(back));
        BOOST_ERROR("a damaged snapshot was read");
    } catch (const remat::integrity_error& e) {
        const std::string w = e.what();
        BOOST_TEST(contains(w, "rank 1: "), w);
        BOOST_TEST(contains(w, "checksum mismatch for x_3 in this rank's bytes 1000+2001"), w);
        BOOST_TEST(!contains(w, "rank 0: "), w);
        BOOST_TEST(!contains(w, "rank 2: "), w);
    }
    if (me() == 0) {
        const remat::test::tool_result bad =
            remat::test::run_command(std::string(REMAT_TOOL) + " inspect --verify " + file.string());
        BOOST_TEST(bad.status == 1);
        BOOST_TEST(contains(bad.err, "/snapshots/slot_000000 is damaged: checksum mismatch in rank 1's part (bytes "
                                     "1000+2001)"),
                   bad.err);
    }
}

BOOST_AUTO_TEST_CASE(misuse_on_one_rank_is_refused_on_every_rank)
{
    scratch_cleanup cleanup;
    const std::filesystem::path file = scratch("misuse.h5");
    const std::uint64_t mine = part_of(me());
    remat::mpi::parallel_hdf5_store store(MPI_COMM_WORLD, file, 2, mine);
    // Rank 3 hands a state of another size.
    try {
        store.write(0, 1, view(pattern(me() == 3 ? mine - 8 : mine, 1)));
        BOOST_ERROR("a part of the wrong size was written");
    } catch (const remat::argument_error& e) {
        BOOST_TEST(contains(e.what(), "rank 3: x_1 has 3995 bytes, this rank's part 4003"), e.what());
    }
    BOOST_TEST(store.snapshot_bytes(0) == 0u);
    // A slot outside the capacity.
    BOOST_CHECK_THROW(store.write(2, 1, view(pattern(mine, 1))), remat::schedule_error);
    // Ranks that disagree on the slots.
    try {
        remat::mpi::parallel_hdf5_store other(MPI_COMM_WORLD, scratch("other.h5"), me() == 1 ? 3 : 2, mine);
        BOOST_ERROR("disagreeing slots were accepted");
    } catch (const remat::argument_error& e) {
        BOOST_TEST(contains(e.what(), "rank 1 asked for 3 slots, rank 0 for 2"), e.what());
    }
    // A file that is not ours is never replaced.
    const std::filesystem::path foreign = scratch("foreign.txt");
    if (me() == 0) {
        FILE* f = std::fopen(foreign.c_str(), "w");
        std::fputs("not a snapshot file\n", f);
        std::fclose(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    try {
        remat::mpi::parallel_hdf5_store other(MPI_COMM_WORLD, foreign, 2, mine);
        BOOST_ERROR("a foreign file was replaced");
    } catch (const remat::io_error& e) {
        BOOST_TEST(contains(e.what(), "it is not a remat parallel snapshot file"), e.what());
    }
}

namespace {

// Rank r's state as parts: a different number on each rank (one with an empty part, one of one part),
// together this rank's pattern(mine, step), so that the dataset holds gathered(step) as before.
std::vector<std::size_t> layout_of(int r)
{
    const std::size_t mine = part_of(r);
    switch (r) {
    case 0:
        return {mine - 24, 16, 8};
    case 1:
        return {mine - 8, 8};
    case 2:
        return {mine - 9, 0, 9};
    default:
        return {mine};
    }
}

std::vector<std::vector<std::byte>> split(const std::vector<std::byte>& whole, const std::vector<std::size_t>& sizes)
{
    std::vector<std::vector<std::byte>> parts;
    std::size_t at = 0;
    for (const std::size_t n : sizes) {
        parts.emplace_back(whole.begin() + static_cast<std::ptrdiff_t>(at),
                           whole.begin() + static_cast<std::ptrdiff_t>(at + n));
        at += n;
    }
    return parts;
}

std::vector<remat::const_bytes> views(const std::vector<std::vector<std::byte>>& parts)
{
    std::vector<remat::const_bytes> v;
    for (const auto& p : parts)
        v.push_back(view(p));
    return v;
}
std::vector<remat::mutable_bytes> views(std::vector<std::vector<std::byte>>& parts)
{
    std::vector<remat::mutable_bytes> v;
    for (auto& p : parts)
        v.push_back(view(p));
    return v;
}

} // namespace

BOOST_AUTO_TEST_CASE(multi_part_states_are_gathered_into_each_ranks_hyperslab_and_scattered_back)
{
    // Ranks with 3, 2, 3 (one empty) and 1 parts: the dataset holds every rank's parts one after the other
    // in its hyperslab (HDF5 alone reads gathered(step) back), each rank's checksum is XXH64 of its parts in
    // order, the record keeps part_counts {3, 2, 3, 1} and the sizes; the parts come back exactly, also after
    // a resume; parts of other sizes are refused on every rank naming the rank, the part and both sizes; a
    // single-part rewrite of the slot removes the part attributes; `remat inspect` prints each rank's sizes.
    scratch_cleanup cleanup;
    const std::filesystem::path file = scratch("parts.h5");
    const std::uint64_t mine = part_of(me());
    const std::vector<std::size_t> layout = layout_of(me());
    {
        remat::mpi::parallel_hdf5_store store(MPI_COMM_WORLD, file, 2, mine);
        const std::vector<std::vector<std::byte>> x5 = split(pattern(mine, 5), layout);
        const std::vector<remat::const_bytes> out = views(x5);
        store.write(1, 5, remat::const_parts(out));
        const std::span<const std::size_t> held = store.part_sizes(1);
        BOOST_TEST(std::vector<std::size_t>(held.begin(), held.end()) == layout);
        BOOST_TEST(store.part_sizes(0).empty());
        std::vector<std::vector<std::byte>> back = split(std::vector<std::byte>(mine), layout);
        const std::vector<remat::mutable_bytes> in = views(back);
        store.read(1, 5, remat::mutable_parts(in));
        BOOST_TEST((back == x5));
        // Rank 2 asks for its first two parts one byte apart: refused everywhere before any data moves.
        std::vector<std::size_t> wrong = layout;
        if (me() == 2) {
            wrong[0] -= 1;
            wrong[1] += 1;
        }
        std::vector<std::vector<std::byte>> other = split(std::vector<std::byte>(mine), wrong);
        const std::vector<remat::mutable_bytes> into = views(other);
        try {
            store.read(1, 5, remat::mutable_parts(into));
            BOOST_ERROR("parts of other sizes were read");
        } catch (const remat::integrity_error& e) {
            const std::string w = e.what();
            BOOST_TEST(contains(w, "rank 2: slot 1 holds x_5 in 3 parts (2993, 0, 9 bytes), but part 0 of the state "
                                   "has 2992 bytes where the snapshot's has 2993"),
                       w);
            BOOST_TEST(!contains(w, "rank 0: "), w);
        }
        store.close();
    }
    // HDF5 alone: the bytes in rank order, the part attributes, each rank's checksum.
    const std::vector<std::byte> x5 = gathered(5);
    const std::vector<std::byte> mine5 = pattern(mine, 5);
    const std::uint64_t my_sum = remat::detail::xxh64(mine5.data(), mine5.size());
    std::vector<std::uint64_t> sums(4);
    MPI_Gather(&my_sum, 1, MPI_UINT64_T, sums.data(), 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    if (me() == 0) {
        const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
        BOOST_REQUIRE(f >= 0);
        const hid_t s = H5Dopen2(f, "/snapshots/slot_000001", H5P_DEFAULT);
        std::vector<std::byte> data(x5.size());
        BOOST_TEST(H5Dread(s, H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()) >= 0);
        BOOST_TEST((data == x5));
        BOOST_TEST(u64_attribute(s, "checksums") == sums);
        BOOST_TEST(u64_attribute(s, "part_counts") == (std::vector<std::uint64_t>{3, 2, 3, 1}));
        std::vector<std::uint64_t> sizes;
        for (int r = 0; r < 4; ++r)
            for (const std::size_t n : layout_of(r))
                sizes.push_back(n);
        BOOST_TEST(u64_attribute(s, "part_bytes") == sizes);
        H5Dclose(s);
        H5Fclose(f);
        const remat::test::tool_result j =
            remat::test::run_command(std::string(REMAT_TOOL) + " inspect --verify --format json " + file.string());
        BOOST_TEST(j.status == 0, j.err);
        BOOST_TEST(contains(j.out, "\"verified\": true"), j.out);
        const remat::test::tool_result t =
            remat::test::run_command(std::string(REMAT_TOOL) + " inspect " + file.string());
        BOOST_TEST(t.status == 0, t.err);
        BOOST_TEST(contains(t.out, "976+16+8|1993+8|2993+0+9|4003"), t.out);
    }
    {
        remat::mpi::parallel_hdf5_store again(MPI_COMM_WORLD, file, 2, mine,
                                              {.mode = remat::mpi::parallel_hdf5_store::open_mode::resume});
        BOOST_TEST(again.snapshot_step(1) == 5);
        const std::span<const std::size_t> held = again.part_sizes(1);
        BOOST_TEST(std::vector<std::size_t>(held.begin(), held.end()) == layout);
        std::vector<std::vector<std::byte>> back = split(std::vector<std::byte>(mine), layout);
        const std::vector<remat::mutable_bytes> in = views(back);
        again.read(1, 5, remat::mutable_parts(in));
        BOOST_TEST((back == split(pattern(mine, 5), layout)));
        // The slot rewritten with one part: the part attributes are gone, the record as it always was.
        again.write(1, 6, view(pattern(mine, 6)));
        std::vector<std::byte> one(mine);
        again.read(1, 6, view(one));
        BOOST_TEST((one == pattern(mine, 6)));
        BOOST_TEST(again.part_sizes(1).size() == 1u);
        again.close();
    }
    if (me() == 0) {
        const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
        const hid_t s = H5Dopen2(f, "/snapshots/slot_000001", H5P_DEFAULT);
        BOOST_TEST(H5Aexists(s, "part_counts") == 0);
        BOOST_TEST(H5Aexists(s, "part_bytes") == 0);
        H5Dclose(s);
        H5Fclose(f);
    }
}

BOOST_AUTO_TEST_CASE(a_damaged_record_is_an_integrity_error_as_in_the_serial_store)
{
    // docs/driver.md's rule: bytes that are not what they claim are an integrity_error. A resumed file whose
    // record was altered (its step rewritten behind the store's back, so that record_checksum no longer
    // matches) or whose write was interrupted holds no valid snapshot there: reading it is an
    // integrity_error on every rank naming why, as hdf5_store's read of such a slot is; a slot never
    // written stays a schedule_error.
    scratch_cleanup cleanup;
    const std::filesystem::path file = scratch("record.h5");
    const std::uint64_t mine = part_of(me());
    {
        remat::mpi::parallel_hdf5_store store(MPI_COMM_WORLD, file, 3, mine);
        store.write(0, 4, view(pattern(mine, 4)));
        store.write(1, 9, view(pattern(mine, 9)));
        store.close();
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (me() == 0) {
        const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
        BOOST_REQUIRE(f >= 0);
        const hid_t d = H5Dopen2(f, "/snapshots/slot_000000", H5P_DEFAULT);
        const std::uint64_t step = 5;
        const hid_t a = H5Aopen(d, "step", H5P_DEFAULT);
        BOOST_TEST(H5Awrite(a, H5T_NATIVE_UINT64, &step) >= 0);
        H5Aclose(a);
        H5Dclose(d);
        // Slot 1's write "interrupted": its state says writing (the record checksum rewritten to match).
        const hid_t d1 = H5Dopen2(f, "/snapshots/slot_000001", H5P_DEFAULT);
        const hid_t type = H5Tcopy(H5T_C_S1);
        H5Tset_size(type, 16);
        char writing[16] = "writing";
        const hid_t s = H5Aopen(d1, "state", H5P_DEFAULT);
        BOOST_TEST(H5Awrite(s, type, writing) >= 0);
        H5Aclose(s);
        H5Tclose(type);
        remat::detail::parallel_format::record r;
        r.slot = 1;
        r.step = 9;
        r.bytes = u64_attribute(d1, "bytes")[0];
        r.state = remat::detail::parallel_format::record_state::writing;
        r.checksums = u64_attribute(d1, "checksums");
        const std::uint64_t sum = r.record_checksum();
        const hid_t c = H5Aopen(d1, "record_checksum", H5P_DEFAULT);
        BOOST_TEST(H5Awrite(c, H5T_NATIVE_UINT64, &sum) >= 0);
        H5Aclose(c);
        H5Dclose(d1);
        H5Fclose(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    remat::mpi::parallel_hdf5_store again(MPI_COMM_WORLD, file, 3, mine,
                                          {.mode = remat::mpi::parallel_hdf5_store::open_mode::resume});
    BOOST_TEST(again.snapshot_step(0) == -1);
    BOOST_TEST(again.snapshot_step(1) == -1);
    std::vector<std::byte> back(mine);
    try {
        again.read(0, 4, view(back));
        BOOST_ERROR("a damaged record was read");
    } catch (const remat::integrity_error& e) {
        BOOST_TEST(contains(e.what(), "rank 0: slot 0 is damaged, not x_4"), e.what());
        BOOST_TEST(contains(e.what(), "record_checksum is"), e.what());
    }
    try {
        again.read(1, 9, view(back));
        BOOST_ERROR("an interrupted write was read");
    } catch (const remat::integrity_error& e) {
        BOOST_TEST(contains(e.what(), "its write of x_9 was interrupted"), e.what());
    }
    BOOST_CHECK_THROW(again.read(2, 1, view(back)), remat::schedule_error); // never written
    // Writing the damaged slot makes it whole again.
    again.write(0, 4, view(pattern(mine, 4)));
    again.read(0, 4, view(back));
    BOOST_TEST((back == pattern(mine, 4)));
}
