// remat::time_store_transfers, the store's part of calibrate_disk measured alone (remat-stress repeats it
// between rounds), and the rate its samples give: bytes over the seconds of all samples, the figure a
// level's throughput (bytes moved over the time its calls took) is held against.
#define BOOST_TEST_MODULE hdf5_store_timing
#include <boost/test/unit_test.hpp>

#include "scratch_dir.hpp"

#include "remat/error.hpp"
#include "remat/hdf5/calibrate.hpp"

#include <filesystem>
#include <string>

using remat::store_transfer_samples;
using remat::time_store_transfers;

BOOST_AUTO_TEST_CASE(the_rate_is_total_bytes_over_total_seconds_not_the_median)
{
    // Two fast transfers and a slow one, as when a disk's cache flush sometimes takes milliseconds: the
    // median transfer takes 1 ms (1 MiB at 1.05 GB/s), but 3 MiB took 6 ms.
    store_transfer_samples s;
    s.snapshot_bytes = 1 << 20;
    s.write_seconds = {0.001, 0.004, 0.001};
    s.read_seconds = {0.002};
    BOOST_TEST(s.write_bytes_per_s() == 3.0 * (1 << 20) / 0.006, boost::test_tools::tolerance(1e-12));
    BOOST_TEST(s.read_bytes_per_s() == (1 << 20) / 0.002, boost::test_tools::tolerance(1e-12));
    BOOST_TEST(store_transfer_samples{}.write_bytes_per_s() == 0.0); // no samples: no rate

    store_transfer_samples more;
    more.snapshot_bytes = 1 << 20;
    more.write_seconds = {0.002};
    more.read_seconds = {0.002};
    s.append(more);
    BOOST_TEST(s.write_seconds.size() == 4u);
    BOOST_TEST(s.write_bytes_per_s() == 4.0 * (1 << 20) / 0.008, boost::test_tools::tolerance(1e-12));

    store_transfer_samples other;
    other.snapshot_bytes = 2 << 20;
    other.write_seconds = {0.001};
    BOOST_CHECK_EXCEPTION(s.append(other), remat::argument_error, [](const remat::argument_error& e) {
        return std::string(e.what()).find("2097152") != std::string::npos;
    });
    store_transfer_samples empty;
    empty.append(other); // an empty set takes the size of the first samples it gets
    BOOST_TEST(empty.snapshot_bytes == other.snapshot_bytes);
}

BOOST_AUTO_TEST_CASE(times_every_transfer_and_leaves_no_file)
{
    remat::test::scratch_dir dir;
    const store_transfer_samples s = time_store_transfers(dir.path(), 256 << 10, 3);
    BOOST_TEST(s.snapshot_bytes == 256u << 10);
    BOOST_TEST_REQUIRE(s.write_seconds.size() == 3u);
    BOOST_TEST_REQUIRE(s.read_seconds.size() == 3u);
    double total = 0;
    for (const double w : s.write_seconds) {
        BOOST_TEST(w > 0);
        total += w;
    }
    for (const double r : s.read_seconds)
        BOOST_TEST(r > 0);
    BOOST_TEST(s.write_bytes_per_s() == 3.0 * (256 << 10) / total, boost::test_tools::tolerance(1e-9));
    BOOST_TEST(std::filesystem::is_empty(dir.path()));
    // An odd size (no whole O_DIRECT block) works too.
    BOOST_TEST(time_store_transfers(dir.path(), 4097, 1).read_seconds.size() == 1u);
    BOOST_TEST(std::filesystem::is_empty(dir.path()));
}

BOOST_AUTO_TEST_CASE(bad_arguments_are_named)
{
    remat::test::scratch_dir dir;
    auto names = [](const std::string& what) {
        return [what](const remat::error& e) { return std::string(e.what()).find(what) != std::string::npos; };
    };
    BOOST_CHECK_EXCEPTION(time_store_transfers(dir.path(), 0, 3), remat::argument_error, names("bytes > 0"));
    BOOST_CHECK_EXCEPTION(time_store_transfers(dir.path(), 4096, 0), remat::argument_error, names("repeats >= 1"));
    BOOST_CHECK_EXCEPTION(time_store_transfers(dir / "nowhere", 4096, 1), remat::io_error, names("nowhere"));
}
