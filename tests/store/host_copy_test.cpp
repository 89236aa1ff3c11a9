// One copier per store (remat::byte_copier): a function and its context, given once to a tiered_store,
// which hands it to every level and to the staging of every asynchronous level. A state whose parts are
// tagged as device memory (host_copy refuses them) runs through host levels, synchronous and
// asynchronous, only when every copy goes through that copier: the gradient is bit-identical to
// store-all, every x_k the adjoint sees is the forward sweep's, and the copier's context counts at least
// the bytes of every store and restore. The same run without the copier fails with argument_error. A
// level given another copier of its own, and a null copier, are refused naming the level.
#define BOOST_TEST_MODULE store_copier
#include <boost/test/unit_test.hpp>

#include "device_tagged_state.hpp"
#include "multipart_problems.hpp"
#include "same_bits.hpp"
#include "vector_schedule.hpp"

#include "remat/driver/run.hpp"
#include "remat/error.hpp"
#include "remat/schedule/revolve.hpp"
#include "remat/schedule/uniform.hpp"
#include "remat/store/host_store.hpp"
#include "remat/store/tiered_store.hpp"

#include <string>
#include <type_traits>
#include <vector>

using namespace remat;
using namespace remat::test;

// Three pointers (copy, wait, context), copied freely: a copy through it allocates nothing.
static_assert(sizeof(byte_copier) == 3 * sizeof(void*));
static_assert(std::is_trivially_copyable_v<byte_copier>);
static_assert(byte_copier{} == host_copy);

namespace {

constexpr step_t steps = 90;

std::uint64_t moved_bytes(const run_report& r, std::size_t state_bytes)
{
    std::uint64_t n = 0;
    for (const auto& l : r.levels)
        n += (l.stores + l.restores) * state_bytes;
    return n;
}

} // namespace

BOOST_AUTO_TEST_CASE(one_copier_reaches_every_level_and_every_staging_engine)
{
    const device_tagged_problem problem;
    const std::size_t state_bytes = all_parts_size(problem.initial());
    copy_log reference_log;
    host_store all(steps, {.copy = logging_copier(reference_log)});
    const multipart_result expected =
        run_multipart(problem, device_tagged_adjoint{}, store_all(steps, steps), all, steps);
    BOOST_TEST_REQUIRE(expected.wrong_states == 0u);

    const vector_schedule plan = split_levels(revolve(steps, 10), 3);
    for (const bool fast_async : {false, true}) {
        for (const bool slow_async : {false, true}) {
            const std::string what = "fast " + std::to_string(fast_async) + ", slow " + std::to_string(slow_async);
            copy_log log;
            tiered_store store(logging_copier(log),
                               {tier_options{.asynchronous = fast_async}, tier_options{.asynchronous = slow_async}},
                               host_store(3), host_store(7));
            const multipart_result r = run_multipart(problem, device_tagged_adjoint{}, plan, store, steps);
            BOOST_TEST(r.wrong_states == 0u, what);
            BOOST_TEST(same_bits(r.gradient, expected.gradient), what);
            BOOST_TEST(r.report.levels.at(1).stores > 0u, what);
            BOOST_TEST(log.bytes >= moved_bytes(r.report, state_bytes), what);
        }
    }
}

BOOST_AUTO_TEST_CASE(without_the_copier_the_device_parts_are_refused)
{
    // The check above can fail: host_copy, the default, refuses the tagged parts on every level.
    const device_tagged_problem problem;
    for (const bool slow_async : {false, true}) {
        tiered_store store({tier_options{}, tier_options{.asynchronous = slow_async}}, host_store(3), host_store(7));
        BOOST_CHECK_THROW(
            run_multipart(problem, device_tagged_adjoint{}, split_levels(revolve(steps, 10), 3), store, steps),
            argument_error);
    }
}

BOOST_AUTO_TEST_CASE(a_level_given_another_copier_is_refused_naming_it)
{
    copy_log a, b;
    try {
        tiered_store store(logging_copier(a), host_store(2),
                           host_store(4, {.copy = logging_copier(b), .name = "pinned"}));
        BOOST_ERROR("a second copier was accepted");
    } catch (const argument_error& e) {
        BOOST_TEST(std::string(e.what()).find("level pinned") != std::string::npos, e.what());
    }
    // The same copier given twice is the same configuration; a default level takes the store's.
    tiered_store same(logging_copier(a), host_store(2), host_store(4, {.copy = logging_copier(a)}));
    const device_tagged_cell x = device_tagged_problem{}.initial();
    const auto parts = snapshot_traits<device_tagged_cell>::parts(x);
    same.write(0, 0, 5, const_parts(parts));
    same.write(1, 0, 6, const_parts(parts));
    BOOST_TEST(a.copies == 4u); // two parts per write, both levels through the store's copier
    BOOST_TEST(b.copies == 0u);
}

BOOST_AUTO_TEST_CASE(a_null_copier_is_refused)
{
    const byte_copier null{nullptr, nullptr};
    BOOST_CHECK_THROW((void)tiered_store(null, host_store(2)), argument_error);
    BOOST_CHECK_THROW((void)host_store(2, {.copy = null}), argument_error);
    host_store level(2);
    BOOST_CHECK_THROW(level.use_copier(null), argument_error);
}

BOOST_AUTO_TEST_CASE(a_store_made_without_a_copier_leaves_each_level_its_own)
{
    // tiered_store(device level, host_store(n, cuda::host_level_options())): the host level copies, and
    // stages behind the asynchronous engine, with its own copier, the store having none to give.
    const device_tagged_problem problem;
    copy_log reference_log;
    host_store all(steps, {.copy = logging_copier(reference_log)});
    const multipart_result expected =
        run_multipart(problem, device_tagged_adjoint{}, store_all(steps, steps), all, steps);
    for (const bool slow_async : {false, true}) {
        copy_log fast, slow;
        tiered_store store({tier_options{}, tier_options{.asynchronous = slow_async}},
                           host_store(3, {.copy = logging_copier(fast)}),
                           host_store(7, {.copy = logging_copier(slow)}));
        const multipart_result r =
            run_multipart(problem, device_tagged_adjoint{}, split_levels(revolve(steps, 10), 3), store, steps);
        BOOST_TEST(r.wrong_states == 0u, slow_async);
        BOOST_TEST(same_bits(r.gradient, expected.gradient), slow_async);
        BOOST_TEST(r.report.levels.at(1).stores > 0u);
        BOOST_TEST(fast.copies > 0u);
        BOOST_TEST(slow.copies > 0u);
    }
}

namespace {
// A level that wraps another and does not pass use_copier on.
struct opaque_level {
    host_store inner;
    [[nodiscard]] level_capacity capacity() const { return inner.capacity(); }
    void write(slot_t slot, step_t step, const_bytes src) { inner.write(slot, step, src); }
    void read(slot_t slot, step_t step, mutable_bytes dst) { inner.read(slot, step, dst); }
    void release(slot_t slot) { inner.release(slot); }
    void release_all() noexcept { inner.release_all(); }
    [[nodiscard]] std::size_t snapshot_bytes(slot_t slot) const { return inner.snapshot_bytes(slot); }
    [[nodiscard]] level_stats stats() const { return inner.stats(); }
};
} // namespace

BOOST_AUTO_TEST_CASE(a_level_that_cannot_take_the_copier_is_refused_not_skipped)
{
    copy_log a;
    try {
        tiered_store store(logging_copier(a), host_store(2), opaque_level{host_store(4)});
        BOOST_ERROR("the copier was dropped silently");
    } catch (const argument_error& e) {
        BOOST_TEST(std::string(e.what()).find("level 1") != std::string::npos, e.what());
    }
    // Without a copier to hand on, such a level is fine.
    tiered_store plain(host_store(2), opaque_level{host_store(4)});
    BOOST_TEST(plain.level_count() == 2);
}
