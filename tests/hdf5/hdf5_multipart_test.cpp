// Multi-part states on the HDF5 level: the parts gathered into one dataset (through O_DIRECT pieces or
// the page cache, or HDF5's filters when compressed) and scattered back. Through remat::run on an
// hdf5_store and on RAM + HDF5 with the disk level asynchronous, gradients are bit-identical to store-all
// and every part of every x_k comes back exactly; the record's checksum is the XXH64 of all parts one
// after the other; the part sizes survive a reopen (resume); parts of the wrong sizes are refused naming
// the part and both sizes, and a damaged part_bytes attribute is caught by the record's checksum.
#define BOOST_TEST_MODULE hdf5_multipart
#include <boost/test/unit_test.hpp>

#include "device_tagged_state.hpp"
#include "hdf5_test_support.hpp"
#include "multipart_problems.hpp"
#include "same_bits.hpp"
#include "vector_schedule.hpp"

#include "remat/detail/xxh64.hpp"
#include "remat/driver/run.hpp"
#include "remat/error.hpp"
#include "remat/hdf5/hdf5_store.hpp"
#include "remat/hdf5/inspect.hpp"
#include "remat/schedule/revolve.hpp"
#include "remat/schedule/uniform.hpp"
#include "remat/store/host_store.hpp"
#include "remat/store/tiered_store.hpp"

#include <array>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

using namespace remat;
using namespace remat::test;

static_assert(gathering_level<hdf5_store>);
static_assert(store_for_parts<tiered_store<host_store, hdf5_store>>);

namespace {

constexpr step_t steps = 120;

template <class Problem, class Adjoint, class Store, class Plan>
void check_against_store_all(const Problem& problem, const Adjoint& adjoint, Store& store, const Plan& plan,
                             const std::string& what)
{
    host_store all(steps);
    const multipart_result ref = run_multipart(problem, adjoint, store_all(steps, steps), all, steps);
    BOOST_TEST_REQUIRE(ref.wrong_states == 0u);
    const multipart_result r = run_multipart(problem, adjoint, plan, store, steps);
    BOOST_TEST(r.wrong_states == 0u, what);
    BOOST_TEST(same_bits(r.gradient, ref.gradient), what);
    BOOST_TEST(r.report.restores > 0u, what);
}

} // namespace

BOOST_AUTO_TEST_CASE(gradients_bit_identical_on_the_hdf5_level)
{
    const scratch_dir dir;
    const history_problem history;
    const lstm_problem lstm;
    int n = 0;
    for (const int compression : {0, 1}) {
        for (const auto io : {hdf5_store::io_path::automatic, hdf5_store::io_path::buffered}) {
            const std::string what =
                "compression " + std::to_string(compression) + ", io " + std::to_string(static_cast<int>(io));
            hdf5_store disk(dir / ("run" + std::to_string(n++) + ".h5"), level_capacity{.slots = 6},
                            {.durable_writes = false, .io = io, .compression = compression});
            check_against_store_all(history, history_adjoint(&history), disk, revolve(steps, 6), what);
            check_against_store_all(lstm, lstm_adjoint{}, disk, revolve(steps, 6), what);
        }
    }
}

BOOST_AUTO_TEST_CASE(gradients_bit_identical_on_ram_and_an_asynchronous_hdf5_level)
{
    const scratch_dir dir;
    const history_problem history;
    const lstm_problem lstm;
    const vector_schedule plan = split_levels(revolve(steps, 12), 3);
    int n = 0;
    for (const bool asynchronous : {false, true}) {
        for (const std::size_t staging : {std::size_t{1}, std::size_t{4}}) {
            auto make = [&] {
                return std::make_unique<tiered_store<host_store, hdf5_store>>(
                    std::array<tier_options, 2>{
                        tier_options{},
                        tier_options{.asynchronous = asynchronous, .async = async_options{.staging_buffers = staging}}},
                    host_store(3),
                    hdf5_store(dir / ("tiered" + std::to_string(n++) + ".h5"), level_capacity{.slots = 9},
                               {.durable_writes = false}));
            };
            const std::string what =
                "asynchronous " + std::to_string(asynchronous) + ", staging " + std::to_string(staging);
            auto a = make();
            check_against_store_all(history, history_adjoint(&history), *a, plan, what);
            auto b = make();
            check_against_store_all(lstm, lstm_adjoint{}, *b, plan, what);
            BOOST_TEST(b->stats().levels[1].stores > 0u);
        }
    }
}

BOOST_AUTO_TEST_CASE(the_stores_one_copier_reaches_the_hdf5_level_and_its_staging)
{
    // Parts tagged as device memory (host_copy refuses them) through RAM + HDF5, the disk level synchronous
    // or asynchronous, O_DIRECT or the page cache: the tiered store's copier, given once, does every copy
    // (its context counts them) and the run matches store-all bit for bit. An hdf5_store given another
    // copier of its own is refused naming the level.
    const scratch_dir dir;
    const device_tagged_problem problem;
    copy_log reference_log;
    host_store all(steps, {.copy = logging_copier(reference_log)});
    const multipart_result expected =
        run_multipart(problem, device_tagged_adjoint{}, store_all(steps, steps), all, steps);
    const vector_schedule plan = split_levels(revolve(steps, 12), 3);
    int n = 0;
    for (const bool asynchronous : {false, true}) {
        for (const auto io : {hdf5_store::io_path::automatic, hdf5_store::io_path::buffered}) {
            const std::string what =
                "asynchronous " + std::to_string(asynchronous) + ", io " + std::to_string(static_cast<int>(io));
            copy_log log;
            tiered_store store(logging_copier(log), {tier_options{}, tier_options{.asynchronous = asynchronous}},
                               host_store(3),
                               hdf5_store(dir / ("copier" + std::to_string(n++) + ".h5"), level_capacity{.slots = 9},
                                          {.durable_writes = false, .io = io}));
            const multipart_result r = run_multipart(problem, device_tagged_adjoint{}, plan, store, steps);
            BOOST_TEST(r.wrong_states == 0u, what);
            BOOST_TEST(same_bits(r.gradient, expected.gradient), what);
            BOOST_TEST(r.report.levels.at(1).stores > 0u, what);
            BOOST_TEST(log.copies > 0u, what);
        }
    }
    copy_log other;
    hdf5_store::options own;
    own.copy = logging_copier(other);
    own.name = "scratch";
    try {
        copy_log log;
        tiered_store store(logging_copier(log), host_store(3),
                           hdf5_store(dir / "own.h5", level_capacity{.slots = 2}, own));
        BOOST_ERROR("a second copier was accepted");
    } catch (const argument_error& e) {
        BOOST_TEST(std::string(e.what()).find("level scratch") != std::string::npos, e.what());
    }
}

BOOST_AUTO_TEST_CASE(large_parts_through_the_transfer_pieces_and_back)
{
    // Parts of sizes that cross block and piece boundaries (1 MiB pieces), one of them tiny, so that the
    // O_DIRECT pieces each gather from several parts and the page-cache tail from another; read back into
    // unaligned buffers. The record's checksum is the XXH64 of all parts one after the other.
    const scratch_dir dir;
    const std::vector<std::vector<std::size_t>> layouts{
        {3 * 1024 * 1024 + 17, 5, 1024 * 1024 - 3, 4096},
        {1, 4096 * 300 + 1},
        {700 * 1024, 700 * 1024, 700 * 1024},
        {0, 123457, 0},
    };
    int n = 0;
    for (const auto io : {hdf5_store::io_path::automatic, hdf5_store::io_path::buffered}) {
        for (const std::vector<std::size_t>& sizes : layouts) {
            const std::filesystem::path file = dir / ("large" + std::to_string(n++) + ".h5");
            std::vector<std::vector<std::byte>> parts;
            std::vector<std::byte> all;
            for (std::size_t i = 0; i < sizes.size(); ++i) {
                parts.push_back(pattern_bytes(100 + i + static_cast<std::uint64_t>(n) * 10, sizes[i]));
                all.insert(all.end(), parts.back().begin(), parts.back().end());
            }
            std::vector<const_bytes> out;
            for (const auto& p : parts)
                out.push_back(view(p));
            {
                hdf5_store disk(file, level_capacity{.slots = 2}, {.io = io, .transfer_bytes = 1 << 20});
                disk.write(1, 77, const_parts(out));
                // Back into buffers one byte off alignment.
                std::vector<std::vector<std::byte>> back(sizes.size());
                std::vector<mutable_bytes> in;
                for (std::size_t i = 0; i < sizes.size(); ++i) {
                    back[i].assign(sizes[i] + 1, std::byte{0});
                    in.push_back(mutable_bytes{back[i].data() + 1, sizes[i], memory_space::host});
                }
                disk.read(1, 77, mutable_parts(in));
                for (std::size_t i = 0; i < sizes.size(); ++i)
                    BOOST_TEST((sizes[i] == 0 || std::memcmp(back[i].data() + 1, parts[i].data(), sizes[i]) == 0),
                               "part " << i);
            }
            const hdf5_file_contents contents = hdf5_inspect(file, true);
            BOOST_TEST_REQUIRE(contents.snapshots.size() == 1u);
            const hdf5_snapshot_info& info = contents.snapshots[0];
            BOOST_TEST(info.verified);
            BOOST_TEST(info.checksum == detail::xxh64(all.data(), all.size()));
            BOOST_TEST(info.bytes == all.size());
            BOOST_TEST_REQUIRE(info.part_bytes.size() == sizes.size());
            for (std::size_t i = 0; i < sizes.size(); ++i)
                BOOST_TEST(info.part_bytes[i] == sizes[i]);
        }
    }
}

BOOST_AUTO_TEST_CASE(part_sizes_survive_a_reopen_and_a_rewrite_in_place)
{
    const scratch_dir dir;
    const std::filesystem::path file = dir / "resume.h5";
    history_state x{{1.0, 2.0, 3.0, 4.0}, {0.5, 0.25, 2.0}};
    {
        hdf5_store disk(file, 2);
        const auto out = snapshot_traits<history_state>::parts(std::as_const(x));
        disk.write(0, 9, const_parts(out));
        // The same bytes in one part into the other slot, then into slot 0 in place after a release: the
        // part_bytes attribute goes.
        disk.write(1, 10, host_bytes(std::as_bytes(std::span(x.first))));
    }
    hdf5_store again(file, level_capacity{.slots = 2}, {.mode = hdf5_store::open_mode::resume});
    const std::span<const std::size_t> sizes = again.part_sizes(0);
    BOOST_TEST_REQUIRE(sizes.size() == 2u);
    BOOST_TEST(sizes[0] == 4 * sizeof(double));
    BOOST_TEST(sizes[1] == 3 * sizeof(double));
    BOOST_TEST(again.part_sizes(1).size() == 1u);
    history_state y{{}, {}};
    const auto in = snapshot_traits<history_state>::parts_for(y, sizes);
    again.read(0, 9, mutable_parts(in));
    BOOST_TEST((y == x));

    // Rewritten in place as one part of the same bytes: its record no longer names parts.
    again.release(0);
    std::vector<double> seven(7, 3.5);
    again.write(0, 11, host_bytes(std::as_bytes(std::span(seven))));
    BOOST_TEST(again.part_sizes(0).size() == 1u);
    again.close();
    const hdf5_file_contents contents = hdf5_inspect(file, true);
    for (const hdf5_snapshot_info& info : contents.snapshots) {
        BOOST_TEST(info.verified, info.dataset << ": " << info.problem);
        BOOST_TEST(info.part_bytes.empty(), info.dataset);
    }
}

BOOST_AUTO_TEST_CASE(wrong_part_sizes_are_refused_naming_the_part)
{
    const scratch_dir dir;
    hdf5_store disk(dir / "wrong.h5", 1);
    std::vector<double> h(6, 1.0), c(2, 2.0);
    const std::array<const_bytes, 2> out{host_bytes(std::as_bytes(std::span(h))),
                                         host_bytes(std::as_bytes(std::span(c)))};
    disk.write(0, 3, const_parts(out));
    std::vector<double> a(4), b(4);
    const std::array<mutable_bytes, 2> in{host_bytes(std::as_writable_bytes(std::span(a))),
                                          host_bytes(std::as_writable_bytes(std::span(b)))};
    try {
        disk.read(0, 3, mutable_parts(in));
        BOOST_FAIL("parts of the wrong sizes were accepted");
    } catch (const integrity_error& e) {
        BOOST_TEST(std::string(e.what()) == "disk slot 0 of " + (dir / "wrong.h5").string() +
                                                " holds x_3 in 2 parts (48, 16 bytes), but part 0 of the state has "
                                                "32 bytes where the snapshot's has 48");
    }
}

BOOST_AUTO_TEST_CASE(a_damaged_part_list_is_caught_by_the_record_checksum)
{
    // The part sizes are part of the record: altering them (the attribute part_bytes, rewritten with HDF5
    // itself) makes the record inconsistent, and the snapshot is never read into parts it does not fit.
    const scratch_dir dir;
    const std::filesystem::path file = dir / "damaged.h5";
    {
        hdf5_store disk(file, 1);
        std::vector<double> h(6, 1.0), c(2, 2.0);
        const std::array<const_bytes, 2> out{host_bytes(std::as_bytes(std::span(h))),
                                             host_bytes(std::as_bytes(std::span(c)))};
        disk.write(0, 3, const_parts(out));
    }
    {
        const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, store_like_access());
        BOOST_TEST_REQUIRE(f >= 0);
        const hid_t d = H5Dopen2(f, "/snapshots/slot_000000/state", H5P_DEFAULT);
        BOOST_TEST_REQUIRE(d >= 0);
        const hid_t a = H5Aopen(d, "part_bytes", H5P_DEFAULT);
        BOOST_TEST_REQUIRE(a >= 0);
        const std::array<std::uint64_t, 2> swapped{32, 32};
        BOOST_TEST(H5Awrite(a, H5T_NATIVE_UINT64, swapped.data()) >= 0);
        H5Aclose(a);
        H5Dclose(d);
        H5Fclose(f);
    }
    const hdf5_file_contents contents = hdf5_inspect(file, false);
    BOOST_TEST_REQUIRE(contents.snapshots.size() == 1u);
    BOOST_TEST(contents.snapshots[0].status == hdf5_snapshot_status::damaged);
    BOOST_TEST(contents.snapshots[0].problem.find("record_checksum") != std::string::npos,
               contents.snapshots[0].problem);
    hdf5_store again(file, level_capacity{.slots = 1}, {.mode = hdf5_store::open_mode::resume});
    BOOST_TEST(again.snapshot_step(0) == -1); // not a snapshot a resumed run may use
}
