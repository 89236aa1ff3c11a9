// The run report against the plan and against the store's own stats, for any store (tests only): every
// count is the plan's, every byte count that count times the state's bytes, and a second run on the same
// store, holding fewer snapshots, reports its own counts and peaks (though the store's counters keep growing).
#pragma once

#include "remat/driver/run.hpp"
#include "remat/schedule/cost.hpp"
#include "remat/store/store_stats.hpp"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace remat::test {

/// The store's counters per level, as one store_stats, whatever the store.
template <class Store>
store_stats stats_of(const Store& store)
{
    if constexpr (requires { store.level_count(); })
        return store.stats();
    else
        return store_stats{{level_stats(store.stats())}};
}

/// Checks one run's report against the plan that made it.
template <class Plan>
void check_report(const run_report& r, const Plan& plan, std::uint64_t bytes, const std::string& at)
{
    const schedule_cost c = plan.cost();
    BOOST_TEST(r.forward_steps == c.forward_steps, at);
    BOOST_TEST(r.stores == c.stores, at);
    BOOST_TEST(r.restores == c.restores, at);
    BOOST_TEST(r.bytes_written == c.stores * bytes, at);
    BOOST_TEST(r.bytes_read == c.restores * bytes, at);
    BOOST_TEST(r.peak_slots == c.peak_slots, at);
    BOOST_TEST(r.peak_snapshot_bytes == c.peak_slots * bytes, at);
    BOOST_TEST_REQUIRE(r.levels.size() == std::max<std::size_t>(c.levels.size(), 1), at);
    std::uint64_t stores = 0;
    std::uint64_t restores = 0;
    for (std::size_t i = 0; i < r.levels.size(); ++i) {
        const level_report& l = r.levels[i];
        const std::string level = at + ", level " + std::to_string(i) + " (" + l.name + ")";
        if (!c.levels.empty()) {
            BOOST_TEST(l.stores == c.levels[i].stores, level);
            BOOST_TEST(l.restores == c.levels[i].restores, level);
            BOOST_TEST(l.peak_slots == c.levels[i].peak_slots, level);
        }
        BOOST_TEST(l.bytes_written == l.stores * bytes, level);
        BOOST_TEST(l.bytes_read == l.restores * bytes, level);
        BOOST_TEST(l.peak_bytes == l.peak_slots * bytes, level);
        stores += l.stores;
        restores += l.restores;
    }
    BOOST_TEST(stores == r.stores, at);
    BOOST_TEST(restores == r.restores, at);
}

/// Runs `first`, then `second` (a plan holding fewer snapshots at once) on `store` with a state of
/// `doubles` doubles, and checks both reports against their plans and the store's own stats against the
/// reports: its counters are the sums of the runs', its peaks the last run's.
template <class First, class Second, class Store>
void check_accounting(const First& first, const Second& second, Store& store, std::size_t doubles,
                      const std::string& what)
{
    const std::uint64_t bytes = doubles * sizeof(double);
    const auto run_on_store = [&](const auto& plan) {
        std::vector<double> x(doubles, 1.0);
        return run(plan, store, x,
                   remat::forward_step([](step_t k, std::vector<double>& y) { y[0] += static_cast<double>(k); }),
                   remat::adjoint_step([](step_t, std::vector<double>&) {}));
    };
    const run_report a = run_on_store(first);
    check_report(a, first, bytes, what + ", first run");
    const run_report b = run_on_store(second);
    check_report(b, second, bytes, what + ", second run");
    BOOST_TEST(b.peak_slots < a.peak_slots, what << ": the second plan should hold fewer snapshots");

    const store_stats s = stats_of(store);
    BOOST_TEST_REQUIRE(s.levels.size() == b.levels.size(), what);
    for (std::size_t i = 0; i < s.levels.size(); ++i) {
        const level_report& l = b.levels[i];
        const level_report& k = a.levels[i];
        const std::string level = what + ", store level " + std::to_string(i);
        BOOST_TEST(s.levels[i].name == l.name, level);
        BOOST_TEST(s.levels[i].stores == k.stores + l.stores, level);
        BOOST_TEST(s.levels[i].restores == k.restores + l.restores, level);
        BOOST_TEST(s.levels[i].bytes_written == k.bytes_written + l.bytes_written, level);
        BOOST_TEST(s.levels[i].bytes_read == k.bytes_read + l.bytes_read, level);
        BOOST_TEST(s.levels[i].peak_slots == l.peak_slots, level);
        BOOST_TEST(s.levels[i].peak_bytes == l.peak_bytes, level);
        BOOST_TEST(s.levels[i].slots_in_use == 0u, level);
        BOOST_TEST(s.levels[i].bytes_in_use == 0u, level);
    }
}

} // namespace remat::test
