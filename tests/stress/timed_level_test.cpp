// remat-stress's timed_level behind the asynchronous engine: it counts the bytes its own calls moved, which
// the report's throughput divides by their time. The engine's stats count what the caller handed over,
// restores served from its staging buffers included: that is not what the timed calls moved.
#define BOOST_TEST_MODULE stress_timed_level
#include <boost/test/unit_test.hpp>

#include "timed_level.hpp"

#include "remat/store/host_store.hpp"
#include "remat/store/tiered_store.hpp"

#include <cstddef>
#include <span>
#include <vector>

using remat::host_store;
using remat::tier_options;
using remat::tiered_store;
using remat::stress::timed_level;

namespace {

using timed_pair = tiered_store<timed_level<host_store>, timed_level<host_store>>;

remat::const_bytes view(const std::vector<double>& x)
{
    return remat::host_bytes(std::as_bytes(std::span(x)));
}
remat::mutable_bytes view(std::vector<double>& x)
{
    return remat::host_bytes(std::as_writable_bytes(std::span(x)));
}

} // namespace

BOOST_AUTO_TEST_CASE(counts_what_reaches_the_level_not_what_the_engine_served)
{
    // One staging buffer: a snapshot just written is restored from it; after the next write took the buffer,
    // the first snapshot must come from the level itself.
    timed_pair store({tier_options{}, tier_options{.asynchronous = true, .async = {.staging_buffers = 1}}},
                     timed_level<host_store>(host_store(1)), timed_level<host_store>(host_store(4)));
    const std::vector<double> a(1000, 1.5), b(1000, -2.0);
    const std::size_t n = a.size() * sizeof(double);
    std::vector<double> back(a.size());

    store.write(1, 0, 10, view(a));
    store.read(1, 0, 10, view(back)); // from the staging buffer
    BOOST_TEST(back == a);
    store.write(1, 1, 20, view(b));
    store.read(1, 0, 10, view(back)); // the buffer now holds x_20: from the level
    BOOST_TEST(back == a);
    store.flush();

    const remat::level_stats handed = store.stats().levels[1];
    BOOST_TEST(handed.bytes_written == 2 * n);
    BOOST_TEST(handed.bytes_read == 2 * n); // the engine counts both restores
    const remat::stress::transfer_time& moved = store.level<1>().time();
    BOOST_TEST(moved.bytes_written == 2 * n);
    BOOST_TEST(moved.bytes_read == n); // only the second reached the level
    BOOST_TEST(moved.write_seconds > 0);
    BOOST_TEST(moved.read_seconds > 0);
    // The level's own counters agree with the timed calls.
    BOOST_TEST(store.level<1>().stats().bytes_read == moved.bytes_read);

    // A synchronous level: every call reaches it.
    const remat::stress::transfer_time& ram = store.level<0>().time();
    BOOST_TEST(ram.bytes_written == 0u);
    store.write(0, 0, 5, view(a));
    store.read(0, 0, 5, view(back));
    BOOST_TEST(store.level<0>().time().bytes_written == n);
    BOOST_TEST(store.level<0>().time().bytes_read == n);
}
