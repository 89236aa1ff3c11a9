// The tiered store and its asynchronous engine: gradients bit-identical to store-all for every
// lookahead and staging size, read-ahead and write-behind that really overlap, one worker thread per
// slow level, writes skipped when a snapshot is freed first, and failures on the worker raised on the
// caller with the store left consistent. Run under ThreadSanitizer by scripts/test.sh as well.
#define BOOST_TEST_MODULE tiered_store
#include <boost/test/unit_test.hpp>

#include "burgers_gradient.hpp"
#include "simulator.hpp"
#include "vector_schedule.hpp"

#include "remat/driver/run.hpp"
#include "remat/error.hpp"
#include "remat/schedule/revolve.hpp"
#include "remat/schedule/uniform.hpp"
#include "remat/store/host_store.hpp"
#include "remat/store/tiered_store.hpp"

#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

using namespace remat;

namespace {

// A level that stands in for a disk: a host_store behind a delay, with failure injection, recording
// which threads called it.
class slow_level {
public:
    struct settings {
        std::chrono::microseconds write_delay{0};
        std::chrono::microseconds read_delay{0};
        int fail_write_number = -1; // 1-based; -1: never
    };
    slow_level(slot_t slots, settings s)
        : store_(level_capacity{.slots = slots}, host_store::options{.name = "slow"}), settings_(s)
    {
    }
    slow_level(slow_level&& other) noexcept : store_(std::move(other.store_)), settings_(other.settings_) {}

    [[nodiscard]] level_capacity capacity() const { return store_.capacity(); }
    void write(slot_t slot, step_t step, const_bytes src)
    {
        note_thread();
        if (++writes_ == settings_.fail_write_number)
            throw io_error("slow: no space left on device while writing x_" + std::to_string(step));
        std::this_thread::sleep_for(settings_.write_delay);
        store_.write(slot, step, src);
    }
    void read(slot_t slot, step_t step, mutable_bytes dst)
    {
        note_thread();
        std::this_thread::sleep_for(settings_.read_delay);
        store_.read(slot, step, dst);
    }
    void release(slot_t slot)
    {
        note_thread();
        store_.release(slot);
    }
    void release_all() noexcept { store_.release_all(); }
    [[nodiscard]] std::size_t snapshot_bytes(slot_t slot) const { return store_.snapshot_bytes(slot); }
    [[nodiscard]] level_stats stats() const { return store_.stats(); }

    [[nodiscard]] std::set<std::thread::id> threads() const
    {
        std::scoped_lock lock(threads_mutex_);
        return threads_;
    }

private:
    void note_thread()
    {
        std::scoped_lock lock(threads_mutex_);
        threads_.insert(std::this_thread::get_id());
    }
    host_store store_;
    settings settings_;
    int writes_ = 0;
    mutable std::mutex threads_mutex_;
    std::set<std::thread::id> threads_;
};

struct burgers_problem {
    examples::burgers model;
    step_t steps;
    burgers_problem(step_t t, std::size_t points) : model(test::small_burgers(points)), steps(t) {}

    template <class Schedule, class Store>
    std::vector<double> gradient(const Schedule& plan, Store& store, std::size_t lookahead,
                                 run_report* report = nullptr) const
    {
        test::burgers_gradient_result r =
            test::burgers_gradient(model, plan, store, run_options{.lookahead = lookahead});
        if (report != nullptr)
            *report = r.report;
        return std::move(r.gradient);
    }
};

using test::same_bits;

using two_levels = tiered_store<host_store, slow_level>;

} // namespace

BOOST_AUTO_TEST_CASE(two_level_schedule_is_legal)
{
    // The test schedules themselves: a revolve stream spread over two levels stays legal.
    const test::vector_schedule plan = test::split_levels(revolve(300, 12), 4);
    test::simulator sim(300, {4, 8});
    for (const action& a : plan.actions())
        BOOST_TEST_REQUIRE(!sim.apply(a).has_value());
    BOOST_TEST(!sim.finish().has_value());
    BOOST_TEST(sim.counts().stores_per_level[1] > 0u);
}

BOOST_AUTO_TEST_CASE(gradients_bit_identical_for_every_lookahead_and_staging_size)
{
    const burgers_problem p(300, 64);
    host_store everything(299);
    const std::vector<double> reference = p.gradient(store_all(300, 299), everything, 8);
    const test::vector_schedule plan = test::split_levels(revolve(300, 12), 4);
    for (const std::size_t staging : {1, 2, 5}) {
        for (const std::size_t lookahead : {0, 1, 3, 8, 31}) {
            for (const bool asynchronous : {false, true}) {
                two_levels store(
                    {tier_options{}, tier_options{.asynchronous = asynchronous, .async = {.staging_buffers = staging}}},
                    host_store(4), slow_level(8, {std::chrono::microseconds(20), std::chrono::microseconds(20)}));
                run_report report;
                const std::vector<double> g = p.gradient(plan, store, lookahead, &report);
                BOOST_TEST_REQUIRE(same_bits(g, reference),
                                   "staging " << staging << " lookahead " << lookahead << " async " << asynchronous);
                BOOST_TEST(report.levels.size() == 2u);
                BOOST_TEST(report.levels[1].name == "slow");
                BOOST_TEST(report.levels[1].stores > 0u);
                if (asynchronous) {
                    const std::set<std::thread::id> threads = store.level<1>().threads();
                    BOOST_TEST(threads.size() == 1u); // one worker, and never the caller
                    BOOST_TEST((threads.count(std::this_thread::get_id()) == 0u));
                }
            }
        }
    }
}

BOOST_AUTO_TEST_CASE(restores_come_from_prefetch_staging_or_demand)
{
    // Every restore from the slow level is served exactly one way; with lookahead the driver's hints
    // start reads ahead, without it none are started. (How much transfer time this hides is
    // a performance figure: bench/tiered_overlap measures it.)
    const burgers_problem p(200, 256);
    const test::vector_schedule plan = test::split_levels(revolve(200, 10), 2);
    host_store everything(199);
    const std::vector<double> reference = p.gradient(store_all(200, 199), everything, 8);
    const slow_level::settings transfers{std::chrono::microseconds(100), std::chrono::microseconds(100)};
    for (const std::size_t lookahead : {0, 16}) {
        two_levels store({tier_options{}, tier_options{.asynchronous = true, .async = {.staging_buffers = 4}}},
                         host_store(2), slow_level(8, transfers));
        run_report report;
        BOOST_TEST_REQUIRE(same_bits(p.gradient(plan, store, lookahead, &report), reference));
        const async_counters c = store.counters(1);
        BOOST_TEST(c.cache_hits + c.staging_hits + c.demand_reads == report.levels[1].restores);
        BOOST_TEST(c.cache_hits > 0u); // written snapshots are kept as a cache
        if (lookahead == 0)
            BOOST_TEST(c.prefetches == 0u);
        else
            BOOST_TEST(c.prefetches > 0u);
        BOOST_TEST(c.busy_seconds > 0.0);
    }
}

BOOST_AUTO_TEST_CASE(snapshots_freed_before_they_reach_the_level_are_never_written)
{
    // A slow writer and a stream that stores and frees quickly: some writes are skipped, and the
    // level saw exactly the writes that were not.
    slow_level slow(4, {std::chrono::microseconds(3000), std::chrono::microseconds(0)});
    async_level level(std::make_unique<detail::level_adapter<slow_level>>(slow), async_options{.staging_buffers = 8});
    std::vector<double> x(16, 1.0);
    const const_bytes bytes{reinterpret_cast<const std::byte*>(x.data()), x.size() * sizeof(double),
                            memory_space::host};
    for (step_t k = 0; k < 6; ++k) {
        level.write(0, k, bytes);
        level.release(0);
    }
    level.flush();
    const async_counters c = level.counters();
    BOOST_TEST(c.skipped_writes >= 1u);
    BOOST_TEST(slow.stats().stores + c.skipped_writes == 6u);
    BOOST_TEST(slow.stats().slots_in_use == 0u);
}

BOOST_AUTO_TEST_CASE(restores_are_checked_like_any_level)
{
    slow_level slow(4, {});
    async_level level(std::make_unique<detail::level_adapter<slow_level>>(slow), {});
    std::vector<double> x(4, 2.0), y(4), z(5);
    const const_bytes bytes{reinterpret_cast<const std::byte*>(x.data()), 32, memory_space::host};
    level.write(1, 7, bytes);
    BOOST_CHECK_THROW(level.write(1, 8, bytes), schedule_error);
    BOOST_CHECK_THROW(level.read(1, 6, mutable_bytes{reinterpret_cast<std::byte*>(y.data()), 32, memory_space::host}),
                      integrity_error);
    BOOST_CHECK_THROW(level.read(1, 7, mutable_bytes{reinterpret_cast<std::byte*>(z.data()), 40, memory_space::host}),
                      integrity_error);
    BOOST_CHECK_THROW(level.write(9, 1, bytes), schedule_error);
    level.flush();
    level.read(1, 7, mutable_bytes{reinterpret_cast<std::byte*>(y.data()), 32, memory_space::host});
    BOOST_TEST((y == x));
    BOOST_TEST(level.snapshot_bytes(1) == 32u);
    level.release(1);
    BOOST_CHECK_THROW(level.release(1), schedule_error);
}

BOOST_AUTO_TEST_CASE(a_failed_write_is_raised_and_earlier_snapshots_stay_readable)
{
    slow_level slow(8, {std::chrono::microseconds(0), std::chrono::microseconds(0), 3});
    async_level level(std::make_unique<detail::level_adapter<slow_level>>(slow), async_options{.staging_buffers = 2});
    std::vector<std::vector<double>> states;
    for (int k = 0; k < 4; ++k)
        states.push_back(std::vector<double>(8, static_cast<double>(k)));
    auto bytes = [&](int k) {
        return const_bytes{reinterpret_cast<const std::byte*>(states[static_cast<std::size_t>(k)].data()), 64,
                           memory_space::host};
    };
    level.write(0, 0, bytes(0));
    level.write(1, 1, bytes(1));
    level.write(2, 2, bytes(2)); // the level fails this one, on the worker
    BOOST_CHECK_EXCEPTION(level.flush(), io_error, [](const io_error& e) {
        return std::string(e.what()).find("no space left on device while writing x_2") != std::string::npos;
    });
    std::vector<double> out(8);
    const mutable_bytes into{reinterpret_cast<std::byte*>(out.data()), 64, memory_space::host};
    level.read(0, 0, into);
    BOOST_TEST((out == states[0]));
    level.read(1, 1, into);
    BOOST_TEST((out == states[1]));
    BOOST_CHECK_THROW(level.read(2, 2, into), io_error); // the lost snapshot says why it is lost
    level.release(2);                                    // and can be freed
    level.write(2, 3, bytes(3));                         // the level works again
    level.flush();
    level.read(2, 3, into);
    BOOST_TEST((out == states[3]));
}

BOOST_AUTO_TEST_CASE(a_failed_run_leaves_the_store_consistent_and_reusable)
{
    const burgers_problem p(120, 32);
    host_store everything(119);
    const std::vector<double> reference = p.gradient(store_all(120, 119), everything, 8);
    const test::vector_schedule plan = test::split_levels(revolve(120, 8), 2);
    two_levels store({tier_options{}, tier_options{.asynchronous = true}}, host_store(2), slow_level(6, {{}, {}, 4}));
    BOOST_CHECK_THROW((void)p.gradient(plan, store, 8), io_error);
    const store_stats after = store.stats();
    BOOST_TEST(after.levels[0].slots_in_use == 0u);
    BOOST_TEST(after.levels[1].slots_in_use == 0u);
    // The failure was the 4th write only: the same store now completes the run.
    BOOST_TEST(same_bits(p.gradient(plan, store, 8), reference));
}

// A multi-level store is no storage level: stacking one inside a tiered store does not compile.
struct two_level_host {
    [[nodiscard]] level_t level_count() const { return 2; }
    [[nodiscard]] level_capacity capacity(level_t) const { return {}; }
    void write(level_t, slot_t, step_t, const_bytes) {}
    void read(level_t, slot_t, step_t, mutable_bytes) {}
    void release(level_t, slot_t) {}
    void release_all() noexcept {}
    [[nodiscard]] std::size_t snapshot_bytes(level_t, slot_t) const { return 0; }
    [[nodiscard]] store_stats stats() const { return {}; }
};
template <class... Levels>
concept tierable = requires { typename tiered_store<Levels...>; };
static_assert(snapshot_store<two_level_host> && !storage_level<two_level_host>);
static_assert(!tierable<host_store, two_level_host>);
static_assert(!tierable<host_store, tiered_store<host_store, host_store>>);
static_assert(tierable<host_store, host_store>);
static_assert(storage_level<host_store> && !snapshot_store<host_store>);
static_assert(snapshot_store<tiered_store<host_store, host_store>>);

BOOST_AUTO_TEST_CASE(a_level_outside_the_store_is_refused)
{
    tiered_store<host_store, host_store> ok(host_store(1), host_store(1));
    BOOST_TEST(ok.level_count() == 2);
    std::vector<double> x{1.0};
    BOOST_CHECK_THROW(
        ok.write(2, 0, 0, const_bytes{reinterpret_cast<const std::byte*>(x.data()), 8, memory_space::host}),
        schedule_error);
}
