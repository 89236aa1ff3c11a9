// The error kinds of docs/driver.md ("Errors"), reached on one storage level directly and through the
// executor (tests only). Every store runs the same cases, so that a slot the level lacks, an empty slot
// or a byte budget too small gives one kind whichever store and whichever way it is reached, and each
// message names the bad value.
//
//     remat::test::check_error_kinds("host", [](remat::level_capacity c) { return remat::host_store(c); });
#pragma once

#include "expect_kind.hpp"

#include "remat/driver/capacity_for.hpp"
#include "remat/driver/executor.hpp"
#include "remat/driver/run.hpp"
#include "remat/error.hpp"
#include "remat/schedule/action.hpp"
#include "remat/schedule/revolve.hpp"
#include "remat/store/host_store.hpp"
#include "remat/store/storage_level.hpp"
#include "remat/store/tiered_store.hpp"

#include <boost/test/unit_test.hpp>

#include <cstddef>
#include <initializer_list>
#include <string>
#include <vector>

namespace remat::test {

namespace error_kinds_detail {

inline const_bytes in(const std::vector<double>& v)
{
    return {reinterpret_cast<const std::byte*>(v.data()), v.size() * sizeof(double), memory_space::host};
}
inline mutable_bytes out(std::vector<double>& v)
{
    return {reinterpret_cast<std::byte*>(v.data()), v.size() * sizeof(double), memory_space::host};
}

// Applies `actions` to a fresh executor over `store` (T = 4, state x = {1.0}); the last one must throw
// `Kind` naming `names`. The store holds no slot afterwards.
template <class Kind, class Store>
void through_executor(const std::string& where, Store& store, const std::vector<action>& actions,
                      std::initializer_list<const char*> names)
{
    std::vector<double> x{1.0};
    auto f = [](step_t, std::vector<double>& s) { s[0] += 1; };
    auto a = [](step_t, std::vector<double>&) {};
    executor ex(store, x, forward_step(f), adjoint_step(a), 4);
    for (std::size_t i = 0; i + 1 < actions.size(); ++i)
        ex.apply(actions[i]);
    expect_kind<Kind>(where, [&] { ex.apply(actions.back()); }, names);
    ex.abort();
}

} // namespace error_kinds_detail

/// Every case on the level `make(capacity)` gives: directly, through the executor with the level alone
/// and as level 0 of a tiered_store (synchronous and asynchronous), and through remat::run. `make` must
/// honour the capacity's slots and bytes (a byte budget holding two 256-byte snapshots, here).
template <class Make>
void check_error_kinds(const std::string& name, Make make)
{
    using namespace error_kinds_detail;
    using Level = decltype(make(level_capacity{}));
    static_assert(storage_level<Level>);
    const std::vector<double> five(32, 5.0), seven(32, 7.0); // 256 bytes each
    std::vector<double> back(32), shorter(31);

    // --- schedule_error: the call does not fit what the level holds -------------------------------
    {
        Level level = make(level_capacity{.slots = 2});
        expect_kind<schedule_error>(name + ": write into a slot the level lacks", [&] { level.write(2, 0, in(five)); },
                                    {"slot 2", " 2 slots"});
        expect_kind<schedule_error>(name + ": write into slot -1", [&] { level.write(-1, 0, in(five)); }, {"slot -1"});
        // x_-1 was stored, then read as "holds no snapshot" (a step of -1 marks an empty slot) and overwritten
        expect_kind<schedule_error>(name + ": write of step -1", [&] { level.write(1, -1, in(five)); },
                                    {"x_-1", "slot 1"});
        expect_kind<schedule_error>(name + ": write of step -7", [&] { level.write(1, -7, in(five)); },
                                    {"x_-7", "slot 1"});
        BOOST_TEST(level.snapshot_bytes(1) == 0u, name << ": a refused step left bytes");
        expect_kind<schedule_error>(name + ": read of a slot the level lacks", [&] { level.read(7, 0, out(back)); },
                                    {"slot 7"});
        expect_kind<schedule_error>(name + ": read of a slot never written", [&] { level.read(1, 3, out(back)); },
                                    {"slot 1"});
        expect_kind<schedule_error>(name + ": free of a slot never written", [&] { level.release(1); }, {"slot 1"});
        expect_kind<schedule_error>(name + ": free of a slot the level lacks", [&] { level.release(-4); }, {"slot -4"});
        level.write(0, 5, in(five));
        expect_kind<schedule_error>(name + ": write into an occupied slot", [&] { level.write(0, 6, in(seven)); },
                                    {"slot 0", "x_5"});
        level.write(1, 7, in(seven));
        level.release(1);
        expect_kind<schedule_error>(name + ": read of a freed slot", [&] { level.read(1, 7, out(back)); },
                                    {"x_7", "slot 1", "holds no snapshot"});
        expect_kind<schedule_error>(name + ": free of a freed slot", [&] { level.release(1); },
                                    {"slot 1", "holds no snapshot"});

        // --- integrity_error: the slot holds other bytes than the read claims ----------------------
        expect_kind<integrity_error>(name + ": read of another step", [&] { level.read(0, 4, out(back)); },
                                     {"x_5", "x_4"});
        expect_kind<integrity_error>(name + ": read into a state of another size",
                                     [&] { level.read(0, 5, out(shorter)); }, {"256", "248"});
        level.read(0, 5, out(back)); // none of the failures touched the snapshot
        BOOST_TEST((back == five), name << ": x_5 changed");
        level.release_all();
    }
    // --- capacity_error: no room --------------------------------------------------------------------
    {
        Level level = make(level_capacity{.slots = 4, .bytes = 600});
        level.write(0, 0, in(five));
        level.write(1, 1, in(five));
        expect_kind<capacity_error>(name + ": a third snapshot beyond the byte budget",
                                    [&] { level.write(2, 2, in(five)); }, {"600"});
        BOOST_TEST(level.snapshot_bytes(2) == 0u, name << ": the refused write left bytes");
        level.release_all();
    }
    // --- argument_error: a bad value in the caller's own call ---------------------------------------
    expect_kind<argument_error>(name + ": -1 slots", [&] { (void)make(level_capacity{.slots = -1}); }, {"-1"});
    expect_kind<argument_error>(name + ": 0 bytes", [&] { (void)make(level_capacity{.slots = 3, .bytes = 0}); },
                                {"0 bytes"});

    // --- the same through the executor, the level alone -----------------------------------------------
    {
        Level level = make(level_capacity{.slots = 2});
        const std::string via = name + " via executor";
        through_executor<schedule_error>(via + ": store into a slot the level lacks", level, {store{0, 2, 0}},
                                         {"slot 2"});
        through_executor<schedule_error>(via + ": store into level 1", level, {store{1, 0, 0}}, {"level 1"});
        through_executor<schedule_error>(via + ": free of level -1", level, {free_slot{-1, 0}}, {"level -1"});
        through_executor<schedule_error>(via + ": free of an empty slot", level, {free_slot{0, 1}}, {"slot 1"});
        through_executor<schedule_error>(via + ": restore from an empty slot", level, {restore{0, 1, 0}}, {"slot 1"});
        through_executor<schedule_error>(via + ": restore from a freed slot", level,
                                         {store{0, 1, 0}, free_slot{0, 1}, restore{0, 1, 0}},
                                         {"slot 1", "x_0", "holds no snapshot"});
        through_executor<schedule_error>(via + ": store into an occupied slot", level,
                                         {store{0, 0, 0}, advance{0, 1}, store{0, 0, 1}}, {"slot 0", "x_0"});
        through_executor<integrity_error>(via + ": restore of another step", level,
                                          {store{0, 0, 0}, advance{0, 3}, reverse{3}, restore{0, 0, 1}},
                                          {"x_0", "x_1"});
        BOOST_TEST(level.stats().slots_in_use == 0u, via << ": slots left held");
        // A plan that needs more slots than the level has: refused before step 0.
        std::vector<double> x{1.0};
        int calls = 0;
        auto f = [&](step_t, std::vector<double>& s) {
            ++calls;
            s[0] += 1;
        };
        auto a = [&](step_t, std::vector<double>&) { ++calls; };
        expect_kind<capacity_error>(via + ": a plan of 3 slots",
                                    [&] { (void)run(revolve(100, 3), level, x, forward_step(f), adjoint_step(a)); },
                                    {"3 snapshots", "2 slots"});
        BOOST_TEST(calls == 0, via << ": a callable ran before the refusal");
        expect_kind<argument_error>(via + ": 0 steps",
                                    [&] { executor ex(level, x, forward_step(f), adjoint_step(a), 0); }, {"got 0"});
    }

    // --- and as level 0 of a tiered store, synchronous and asynchronous ----------------------------------
    for (const bool asynchronous : {false, true}) {
        const std::string via = name + (asynchronous ? " in an asynchronous tier" : " in a tiered store");
        tiered_store<Level, host_store> tiers({tier_options{.asynchronous = asynchronous}, tier_options{}},
                                              make(level_capacity{.slots = 2}), host_store(2));
        expect_kind<schedule_error>(via + ": write into level 2", [&] { tiers.write(2, 0, 0, in(five)); },
                                    {"level 2", "2 levels"});
        expect_kind<schedule_error>(via + ": free of level -1", [&] { tiers.release(-1, 0); }, {"level -1"});
        expect_kind<schedule_error>(via + ": write into a slot the level lacks",
                                    [&] { tiers.write(0, 2, 0, in(five)); }, {"slot 2"});
        expect_kind<schedule_error>(via + ": read of an empty slot", [&] { tiers.read(0, 1, 0, out(back)); },
                                    {"slot 1"});
        through_executor<schedule_error>(via + " via executor: store into level 2", tiers, {store{2, 0, 0}},
                                         {"level 2"});
        through_executor<schedule_error>(via + " via executor: restore from an empty slot", tiers, {restore{0, 1, 0}},
                                         {"slot 1"});
        through_executor<integrity_error>(via + " via executor: restore of another step", tiers,
                                          {store{0, 0, 0}, advance{0, 3}, reverse{3}, restore{0, 0, 1}},
                                          {"x_0", "x_1"});
        expect_kind<schedule_error>(via + ": capacity_for a level the plan lacks",
                                    [&] { (void)capacity_for(revolve(10, 3), 1); }, {"level 1"});
    }
}

} // namespace remat::test
