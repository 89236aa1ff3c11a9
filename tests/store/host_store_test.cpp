// The host store on its own: capacities in slots and bytes, integrity checks on every read (on the inline
// single-view path too), a copier of one's own on every copy, and a failed write that changes nothing.
#define BOOST_TEST_MODULE host_store
#include <boost/test/unit_test.hpp>

#include "remat/error.hpp"
#include "remat/store/host_store.hpp"

#include <array>
#include <cstring>
#include <memory_resource>
#include <string>
#include <utility>
#include <vector>

using namespace remat;

// One storage level: no level argument, and a call with one does not compile.
template <class S>
concept takes_a_level = requires(S& s, const_bytes b) { s.write(level_t{0}, slot_t{0}, step_t{0}, b); };
static_assert(storage_level<host_store> && !takes_a_level<host_store>);

namespace {

mutable_bytes view_of(std::vector<double>& v)
{
    return {reinterpret_cast<std::byte*>(v.data()), v.size() * sizeof(double), memory_space::host};
}

template <class E>
void expect_error(auto&& f, const std::string& words)
{
    try {
        f();
        BOOST_ERROR("no exception; expected: " << words);
    } catch (const E& e) {
        BOOST_TEST(std::string(e.what()).find(words) != std::string::npos, e.what());
    }
}

} // namespace

BOOST_AUTO_TEST_CASE(round_trip_and_counters)
{
    host_store store(3);
    std::vector<double> a{1, 2, 3}, b{4, 5, 6}, out(3);
    store.write(0, 0, view_of(a));
    store.write(2, 7, view_of(b));
    BOOST_TEST(store.snapshot_bytes(2) == 24u);
    BOOST_TEST(store.snapshot_bytes(1) == 0u);
    store.read(2, 7, view_of(out));
    BOOST_TEST((out == b));
    store.read(0, 0, view_of(out));
    BOOST_TEST((out == a));
    const level_stats s = store.stats();
    BOOST_TEST(s.name == "host");
    BOOST_TEST(s.stores == 2u);
    BOOST_TEST(s.restores == 2u);
    BOOST_TEST(s.bytes_written == 48u);
    BOOST_TEST(s.bytes_read == 48u);
    BOOST_TEST(s.slots_in_use == 2u);
    BOOST_TEST(s.peak_bytes == 48u);
    store.release(0);
    BOOST_TEST(store.stats().slots_in_use == 1u);
    store.write(0, 9, view_of(b)); // the freed slot is reused
    store.release_all();
    BOOST_TEST(store.stats().slots_in_use == 0u);
    BOOST_TEST(store.stats().bytes_in_use == 0u);
}

BOOST_AUTO_TEST_CASE(integrity_checks_on_read)
{
    host_store store(2);
    std::vector<double> a{1, 2, 3}, out(3), wrong(4);
    store.write(1, 5, view_of(a));
    expect_error<integrity_error>([&] { store.read(1, 6, view_of(out)); }, "holds x_5, not x_6");
    expect_error<integrity_error>([&] { store.read(1, 5, view_of(wrong)); },
                                  "holds 24 bytes of x_5, but the state has 32");
    store.write(0, 0, view_of(a));
    store.release(0);
    // An empty slot is the schedule's error (nothing was stored there), not the bytes'.
    expect_error<schedule_error>([&] { store.read(0, 0, view_of(out)); }, "host slot 0, which holds no snapshot");
}

BOOST_AUTO_TEST_CASE(capacity_in_slots_and_bytes)
{
    host_store slots_only(2);
    std::vector<double> a(10, 1.0);
    // A slot the store lacks is the schedule's error; running out of bytes is a capacity_error.
    expect_error<schedule_error>([&] { slots_only.write(2, 0, view_of(a)); }, "outside the host store's 2 slots");
    expect_error<schedule_error>([&] { slots_only.write(-1, 0, view_of(a)); }, "slot -1");

    host_store bytes_only(level_capacity{.bytes = 200});
    bytes_only.write(0, 0, view_of(a)); // 80 bytes
    bytes_only.write(1, 1, view_of(a)); // 160
    expect_error<capacity_error>([&] { bytes_only.write(2, 2, view_of(a)); }, "200-byte budget");
    // The failed write changed nothing: slot 2 is empty, the others intact, and freeing makes room.
    BOOST_TEST(bytes_only.snapshot_bytes(2) == 0u);
    BOOST_TEST(bytes_only.stats().slots_in_use == 2u);
    bytes_only.release(1);
    bytes_only.write(1, 3, view_of(a)); // reuses slot 1's memory
    std::vector<double> out(10);
    bytes_only.read(0, 0, view_of(out));
    BOOST_TEST((out == a));
    // Refused with the count as given, never wrapped to a huge count or printed as one.
    expect_error<argument_error>([] { host_store{0}; }, "needs at least 1 slot, got 0");
    expect_error<argument_error>([] { host_store{-1}; }, "needs at least 1 slot, got -1");
    expect_error<argument_error>([] { host_store{-3}; }, "got -3");
    expect_error<argument_error>([] { host_store(level_capacity{5, 0}); }, "got 5 slots and 0 bytes");
    expect_error<argument_error>([] { host_store(level_capacity{.slots = 0}); }, "got 0 slots and unlimited bytes");
}

BOOST_AUTO_TEST_CASE(allocation_failure_leaves_the_slot_untouched)
{
    // A memory resource that refuses its second allocation.
    struct refusing_resource : std::pmr::memory_resource {
        int count = 0;
        void* do_allocate(std::size_t bytes, std::size_t align) override
        {
            if (++count == 2)
                throw std::bad_alloc();
            return std::pmr::new_delete_resource()->allocate(bytes, align);
        }
        void do_deallocate(void* p, std::size_t bytes, std::size_t align) override
        {
            std::pmr::new_delete_resource()->deallocate(p, bytes, align);
        }
        bool do_is_equal(const memory_resource& other) const noexcept override { return this == &other; }
    } resource;
    host_store store(level_capacity{.slots = 4},
                     host_store::options{.memory = &resource, .copy = host_copy, .name = "pool"});
    std::vector<double> a{1, 2}, out(2);
    store.write(0, 0, view_of(a));
    // Out of memory is a capacity_error naming the slot and the bytes, not a bare std::bad_alloc.
    BOOST_CHECK_EXCEPTION(store.write(1, 1, view_of(a)), capacity_error, [](const capacity_error& e) {
        const std::string m = e.what();
        return m.find("out of memory") != std::string::npos && m.find("16 bytes") != std::string::npos &&
               m.find("host slot 1") != std::string::npos;
    });
    BOOST_TEST(store.snapshot_bytes(1) == 0u);
    BOOST_TEST(store.stats().slots_in_use == 1u);
    BOOST_TEST(store.stats().name == "pool");
    store.write(1, 1, view_of(a)); // the third allocation succeeds
    store.read(1, 1, view_of(out));
    BOOST_TEST((out == a));
}

BOOST_AUTO_TEST_CASE(device_memory_is_refused_without_cuda)
{
    host_store store(1);
    std::array<std::byte, 8> bytes{};
    expect_error<argument_error>([&] { store.write(0, 0, const_bytes{bytes.data(), 8, memory_space::device}); },
                                 "device memory");
    BOOST_TEST(store.snapshot_bytes(0) == 0u);
}

// A single host view into a slot already allocated for it, with the default copier, is copied inline
// (host_store.hpp); every case that path does not take is the general path's, with its checks and messages.
BOOST_AUTO_TEST_CASE(the_inline_single_view_path_checks_what_the_general_path_checks)
{
    host_store store(2);
    std::vector<double> a{1, 2, 3}, b{4, 5}, out(3), wide(4);
    store.write(0, 4, view_of(wide)); // slot 0 allocated for 32 bytes
    store.release(0);
    store.write(0, 5, view_of(a)); // 24 bytes into it: inline
    expect_error<schedule_error>([&] { store.write(0, 6, view_of(a)); }, "still holds x_5");
    expect_error<integrity_error>([&] { store.read(0, 6, view_of(out)); }, "holds x_5, not x_6");
    expect_error<integrity_error>([&] { store.read(0, 5, view_of(wide)); }, "holds 24 bytes of x_5");
    expect_error<argument_error>([&] { store.read(0, 5, mutable_bytes{view_of(out).data, 24, memory_space::device}); },
                                 "device memory");
    store.read(0, 5, view_of(out));
    BOOST_TEST((out == a));
    store.release(0);
    expect_error<schedule_error>([&] { store.read(0, 5, view_of(out)); }, "which holds no snapshot");
    expect_error<schedule_error>([&] { store.read(0, -1, view_of(out)); }, "which holds no snapshot");
    expect_error<schedule_error>([&] { store.release(0); }, "free of host slot 0, which holds no snapshot");
    expect_error<schedule_error>([&] { store.release(2); }, "outside");
    expect_error<schedule_error>([&] { store.release(-1); }, "outside");
    expect_error<argument_error>([&] { store.write(0, 7, const_bytes{view_of(a).data, 24, memory_space::device}); },
                                 "device memory");
    BOOST_TEST(store.snapshot_bytes(0) == 0u);
    // Two parts of 24 bytes in all are not one part of 24.
    const std::array<const_bytes, 2> parts{const_bytes{view_of(a).data, 8, memory_space::host},
                                           const_bytes{view_of(b).data, 16, memory_space::host}};
    store.write(1, 8, const_parts(parts));
    expect_error<integrity_error>([&] { store.read(1, 8, view_of(out)); }, "2 parts (8, 16 bytes)");
    const level_stats s = store.stats();
    BOOST_TEST(s.stores == 3u);
    BOOST_TEST(s.restores == 1u);
    BOOST_TEST(s.bytes_written == 32u + 24u + 24u);
    BOOST_TEST(s.slots_in_use == 1u);
}

namespace {

// Counts the bytes it copies (host to host).
struct counted_copies {
    std::size_t bytes = 0;
    static void copy(void* self, void* dst, memory_space, const void* src, memory_space, std::size_t size)
    {
        static_cast<counted_copies*>(self)->bytes += size;
        std::memcpy(dst, src, size);
    }
    byte_copier copier() { return {&counted_copies::copy, this}; }
};

} // namespace

// The inline path is the default copier's alone: a copier given when the store is made, given later by the
// store it becomes a level of (use_copier), or carried by a moved store copies every snapshot.
BOOST_AUTO_TEST_CASE(a_copier_of_ones_own_copies_every_single_view)
{
    std::vector<double> a{1, 2, 3}, out(3);
    const auto round_trips = [&](host_store& store) {
        for (step_t k = 0; k < 3; ++k) {
            store.write(0, k, view_of(a));
            store.read(0, k, view_of(out));
            store.release(0);
        }
    };
    counted_copies given, later, moved;
    host_store first(1, {.copy = given.copier()});
    round_trips(first);
    host_store second(1);
    round_trips(second); // slot 0 allocated with the default copier
    second.use_copier(later.copier());
    round_trips(second);
    host_store third(1, {.copy = moved.copier()});
    host_store taken(std::move(third));
    round_trips(taken);
    BOOST_TEST(given.bytes == 6 * 24u);
    BOOST_TEST(later.bytes == 6 * 24u);
    BOOST_TEST(moved.bytes == 6 * 24u);
}
