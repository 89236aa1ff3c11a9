// The GPU level on a GPU (label gpu; skipped without a device): RAII types, copy_bytes in every
// direction, round trips through the device store and through a pinned host store, and the ordering and
// overlap of the store's copies with the user's kernels, made deterministic with gate kernels that hold
// a stream until the host opens them.
#define BOOST_TEST_MODULE cuda_device_store
#define BOOST_TEST_NO_MAIN
#include <boost/test/unit_test.hpp>

#include "same_bits.hpp"
#include "test_kernels.hpp"

#include "remat/cuda/copy.hpp"
#include "remat/cuda/device_buffer.hpp"
#include "remat/cuda/device_span.hpp"
#include "remat/cuda/device_store.hpp"
#include "remat/cuda/error.hpp"
#include "remat/cuda/event.hpp"
#include "remat/cuda/pinned_buffer.hpp"
#include "remat/cuda/pinned_memory_resource.hpp"
#include "remat/cuda/stream.hpp"
#include "remat/store/host_store.hpp"
#include "remat/store/tiered_store.hpp"

#include <cuda_runtime_api.h>

#include <chrono>
#include <cstring>
#include <memory_resource>
#include <string>
#include <thread>
#include <vector>

using namespace remat;
using remat::cuda::device_buffer;
using remat::cuda::device_store;
using remat::cuda::pinned_buffer;
using test::gate;
using test::pattern;
using test::same_bits;
using test::to_host;
using test::within;

namespace {

constexpr std::size_t n = 1 << 16; // doubles per state: 512 KiB
constexpr std::size_t bytes = n * sizeof(double);

double* doubles(const device_buffer& b)
{
    return reinterpret_cast<double*>(b.data());
}
double* doubles(const pinned_buffer& b)
{
    return reinterpret_cast<double*>(b.data());
}

mutable_bytes device_view(const device_buffer& b)
{
    return b.bytes();
}

cudaMemoryType memory_type(const void* p)
{
    cudaPointerAttributes attributes{};
    BOOST_REQUIRE(cudaPointerGetAttributes(&attributes, p) == cudaSuccess);
    return attributes.type;
}

/// A store sized up front: a cudaMalloc during a held kernel could wait for it.
device_store preallocated(slot_t slots, cudaStream_t user = nullptr)
{
    return device_store(level_capacity{.slots = slots}, {.slot_bytes = bytes, .user_stream = user});
}

/// Checks every pinned allocation a host store makes.
class checked_pinned final : public std::pmr::memory_resource {
public:
    int allocations = 0;
    int not_pinned = 0;

private:
    remat::cuda::pinned_memory_resource pinned_;
    void* do_allocate(std::size_t size, std::size_t alignment) override
    {
        void* p = pinned_.allocate(size, alignment);
        ++allocations;
        cudaPointerAttributes attributes{};
        if (cudaPointerGetAttributes(&attributes, p) != cudaSuccess || attributes.type != cudaMemoryTypeHost)
            ++not_pinned;
        return p;
    }
    void do_deallocate(void* p, std::size_t size, std::size_t alignment) override
    {
        pinned_.deallocate(p, size, alignment);
    }
    [[nodiscard]] bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override
    {
        return this == &other;
    }
};

} // namespace

BOOST_AUTO_TEST_SUITE(resources)

BOOST_AUTO_TEST_CASE(raii_types_own_what_they_say)
{
    device_buffer d(bytes);
    pinned_buffer h(bytes);
    BOOST_TEST((memory_type(d.data()) == cudaMemoryTypeDevice));
    BOOST_TEST((memory_type(h.data()) == cudaMemoryTypeHost));
    BOOST_TEST((d.bytes().space == memory_space::device));
    BOOST_TEST((h.bytes().space == memory_space::host));

    device_buffer moved(std::move(d));
    BOOST_TEST(d.data() == nullptr); // NOLINT(bugprone-use-after-move): the moved-from state is specified
    BOOST_TEST(moved.size() == bytes);

    remat::cuda::stream s;
    remat::cuda::event start(remat::cuda::event::timing::on);
    remat::cuda::event end(remat::cuda::event::timing::on);
    start.record(s.get());
    test::fill(doubles(moved), n, 3.0, s.get());
    BOOST_REQUIRE(cudaMemcpyAsync(h.data(), moved.data(), bytes, cudaMemcpyDeviceToHost, s.get()) == cudaSuccess);
    end.record(s.get());
    end.synchronize();
    BOOST_TEST(end.ready());
    BOOST_TEST(s.idle());
    BOOST_TEST(remat::cuda::elapsed_seconds(start, end) > 0.0);
    BOOST_TEST(same_bits(std::vector<double>(doubles(h), doubles(h) + n), pattern(n, 3.0)));

    const cudaEvent_t handle = start.get();
    remat::cuda::event taken(std::move(start));
    BOOST_TEST(taken.get() == handle);
    BOOST_TEST(start.get() == nullptr); // NOLINT(bugprone-use-after-move): the moved-from state is specified

    // A failing call names itself: elapsed time needs events made with timing on.
    remat::cuda::event untimed_a, untimed_b;
    untimed_a.record(s.get());
    untimed_b.record(s.get());
    untimed_b.synchronize();
    try {
        (void)remat::cuda::elapsed_seconds(untimed_a, untimed_b);
        BOOST_FAIL("elapsed time of events without timing must fail");
    } catch (const remat::cuda::cuda_error& e) {
        BOOST_TEST(std::string(e.what()).find("cudaEventElapsedTime") != std::string::npos);
        BOOST_TEST(e.code() != 0);
    }
}

BOOST_AUTO_TEST_CASE(running_out_of_memory_is_a_capacity_error_and_leaves_the_device_usable)
{
    BOOST_CHECK_THROW(device_buffer(std::size_t{1} << 52), capacity_error);
    BOOST_CHECK_THROW(device_store(level_capacity{.slots = 1u << 20}, {.slot_bytes = 1u << 30}), capacity_error);
    device_buffer fine(bytes);
    test::fill(doubles(fine), n, 1.0, nullptr);
    BOOST_TEST(same_bits(to_host(doubles(fine), n), pattern(n, 1.0)));
    remat::cuda::pinned_memory_resource pinned;
    BOOST_CHECK_THROW((void)pinned.allocate(64, 8192), argument_error);
}

BOOST_AUTO_TEST_CASE(copy_bytes_in_every_direction)
{
    const std::vector<double> source = pattern(n, 11.0);
    std::vector<double> host(n, 0.0);
    device_buffer a(bytes), b(bytes);
    remat::cuda::copy_bytes(a.data(), memory_space::device, source.data(), memory_space::host, bytes);
    remat::cuda::copy_bytes(b.data(), memory_space::device, a.data(), memory_space::device, bytes);
    remat::cuda::copy_bytes(host.data(), memory_space::host, b.data(), memory_space::device, bytes);
    BOOST_TEST(same_bits(host, source));
    std::vector<double> again(n, 0.0);
    remat::cuda::copy_bytes(again.data(), memory_space::host, host.data(), memory_space::host, bytes);
    BOOST_TEST(same_bits(again, source));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(round_trips)

BOOST_AUTO_TEST_CASE(every_slot_of_the_device_store)
{
    const slot_t slots = 6;
    device_store store(slots);
    device_buffer state(bytes), out(bytes);
    for (slot_t s = 0; s < slots; ++s) {
        test::fill(doubles(state), n, 100.0 * static_cast<double>(s), nullptr);
        store.write(s, s + 1, device_view(state));
    }
    test::fill(doubles(state), n, -1.0, nullptr); // the state moves on; the snapshots must not
    BOOST_TEST(store.slot_bytes() == bytes);
    BOOST_TEST(store.slot_count() == static_cast<std::uint64_t>(slots));
    BOOST_TEST((memory_type(store.snapshot(0).data) == cudaMemoryTypeDevice));
    for (slot_t s = slots - 1; s >= 0; --s) {
        store.read(s, s + 1, device_view(out));
        BOOST_TEST(same_bits(to_host(doubles(out), n), pattern(n, 100.0 * static_cast<double>(s))), "slot " << s);
    }
    // Host memory in and out, synchronously.
    std::vector<double> host = pattern(n, 7.0);
    store.release(2);
    store.write(2, 30, {reinterpret_cast<const std::byte*>(host.data()), bytes, memory_space::host});
    std::fill(host.begin(), host.end(), 0.0);
    store.read(2, 30, {reinterpret_cast<std::byte*>(host.data()), bytes, memory_space::host});
    BOOST_TEST(same_bits(host, pattern(n, 7.0)));
    // Errors as on the CPU back end.
    BOOST_CHECK_THROW(store.write(slots, 0, device_view(state)), schedule_error); // a slot the store lacks
    BOOST_CHECK_THROW(store.read(0, 2, device_view(out)), integrity_error);
    BOOST_CHECK_THROW(store.write(0, 2, device_view(state)), schedule_error);
    const level_stats st = store.stats();
    BOOST_TEST(st.stores == 7u);
    BOOST_TEST(st.restores == 7u);
}

BOOST_AUTO_TEST_CASE(device_states_in_a_pinned_host_store)
{
    checked_pinned memory;
    host_store store(level_capacity{.slots = 4}, {.memory = &memory, .copy = remat::cuda::copier()});
    device_buffer state(bytes), out(bytes);
    for (slot_t s = 0; s < 4; ++s) {
        test::fill(doubles(state), n, 10.0 * static_cast<double>(s), nullptr);
        store.write(s, s, device_view(state));
    }
    for (slot_t s = 0; s < 4; ++s) {
        store.read(s, s, device_view(out));
        BOOST_TEST(same_bits(to_host(doubles(out), n), pattern(n, 10.0 * static_cast<double>(s))));
    }
    BOOST_TEST(memory.allocations == 4);
    BOOST_TEST(memory.not_pinned == 0);
}

// remat::cuda::copier(stream) copies on the user's stream: after the user's kernel there, even on a
// non-blocking stream that the legacy stream (copy_bytes, copier()) does not wait for. A tiered store
// hands the stream to its device level; a device level given another user_stream is refused.
BOOST_AUTO_TEST_CASE(the_copier_copies_on_the_users_stream_and_configures_the_device_level)
{
    remat::cuda::stream user; // non-blocking
    checked_pinned memory;
    host_store store(level_capacity{.slots = 1}, {.memory = &memory, .copy = remat::cuda::copier(user.get())});
    device_buffer state(bytes);
    test::fill(doubles(state), n, 1.0, user.get());
    BOOST_REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    gate g;
    g.hold_then_fill(user.get(), doubles(state), n, 42.0); // the user's kernel produces x_3, when opened
    std::thread opener([&g] {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        g.open();
    });
    store.write(0, 3, device_view(state)); // its copy waits for the kernel on the user's stream
    opener.join();
    std::vector<double> back(n, 0.0);
    store.read(0, 3, {reinterpret_cast<std::byte*>(back.data()), bytes, memory_space::host});
    BOOST_TEST(same_bits(back, pattern(n, 42.0)));
    BOOST_TEST(!g.timed_out());
    BOOST_TEST((remat::cuda::copier_stream(remat::cuda::copier(user.get())) == user.get()));
    BOOST_TEST(!remat::cuda::copier_stream(host_copy).has_value());

    tiered_store tiered(remat::cuda::copier(user.get()), preallocated(1), host_store(2, {.memory = &memory}));
    BOOST_TEST((tiered.level<0>().user_stream() == user.get()));
    remat::cuda::stream other;
    BOOST_CHECK_THROW((void)tiered_store(remat::cuda::copier(user.get()), preallocated(1, other.get()), host_store(2)),
                      argument_error);
}

// CUDA's legacy default stream has two names, nullptr and cudaStreamLegacy: a device level given either takes
// a copier made for either (the same stream), and says nullptr for it, as copier_stream does.
BOOST_AUTO_TEST_CASE(a_device_level_on_cuda_stream_legacy_takes_the_default_copier)
{
    for (cudaStream_t given : {cudaStreamLegacy, cudaStream_t{}})
        for (cudaStream_t copier_given : {cudaStreamLegacy, cudaStream_t{}}) {
            tiered_store tiered(remat::cuda::copier(copier_given), preallocated(1, given), host_store(2));
            BOOST_TEST((tiered.level<0>().user_stream() == cudaStream_t{}));
        }
    device_store store = preallocated(1, cudaStreamLegacy);
    BOOST_TEST((store.user_stream() == cudaStream_t{}));
    store.use_copier(remat::cuda::copier());
    remat::cuda::stream other;
    store.set_user_stream(other.get());
    BOOST_TEST((store.user_stream() == other.get()));
    store.set_user_stream(cudaStreamLegacy);
    BOOST_TEST((store.user_stream() == cudaStream_t{}));
    // the per-thread default stream is another stream: a level on it refuses the legacy stream's copier
    BOOST_CHECK_THROW((void)tiered_store(remat::cuda::copier(), preallocated(1, cudaStreamPerThread), host_store(2)),
                      argument_error);
}

BOOST_AUTO_TEST_CASE(copy_out_and_copy_in_move_snapshots_between_levels)
{
    device_store store = preallocated(2);
    device_buffer state(bytes), out(bytes);
    pinned_buffer host(bytes);
    test::fill(doubles(state), n, 5.0, nullptr);
    store.write(0, 4, device_view(state));
    store.copy_out(0, 4, host.bytes());
    store.release(0); // reusable at once: the next copy into the slot waits for the copy out
    test::fill(doubles(state), n, 9.0, nullptr);
    store.write(0, 5, device_view(state));
    store.wait_slot(0);
    BOOST_TEST(same_bits(std::vector<double>(doubles(host), doubles(host) + n), pattern(n, 5.0)));

    store.copy_in(1, 4, host.bytes()); // read-ahead into a free slot
    store.read(1, 4, device_view(out));
    BOOST_TEST(same_bits(to_host(doubles(out), n), pattern(n, 5.0)));
    store.read(0, 5, device_view(out));
    BOOST_TEST(same_bits(to_host(doubles(out), n), pattern(n, 9.0)));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(ordering_with_the_users_kernels)

// write() enqueues its copy behind the user's kernel and returns without waiting for it.
BOOST_AUTO_TEST_CASE(write_waits_for_the_users_kernel_on_the_gpu_not_on_the_host)
{
    for (const bool own_stream : {false, true}) {
        remat::cuda::stream user;
        const cudaStream_t s = own_stream ? user.get() : nullptr;
        device_store store = preallocated(2, s);
        device_buffer state(bytes), out(bytes);
        gate g;
        g.hold_then_fill(s, doubles(state), n, 42.0); // the user's kernel produces x_3, when opened
        store.write(1, 3, device_view(state));        // returns at once
        BOOST_TEST(!store.slot_ready(1));             // the copy waits for the kernel
        g.open();
        store.wait_slot(1);
        store.read(1, 3, device_view(out));
        BOOST_TEST(same_bits(to_host(doubles(out), n), pattern(n, 42.0)), (own_stream ? "own stream" : "stream 0"));
        BOOST_TEST(!g.timed_out());
    }
}

// The user's next kernel may modify the state right after write() returns: it waits for the copy.
BOOST_AUTO_TEST_CASE(the_users_next_kernel_waits_for_the_copy_of_the_state)
{
    device_store store = preallocated(2);
    device_buffer state(bytes), out(bytes);
    test::fill(doubles(state), n, 1.0, nullptr);
    BOOST_REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    gate g;
    g.hold(store.copy_stream()); // the store's copy stream is busy until opened
    store.write(0, 0, device_view(state));
    test::fill(doubles(state), n, 2.0, nullptr); // the next forward step overwrites the state
    remat::cuda::event next_step;
    next_step.record(nullptr);
    BOOST_TEST(!within(0.2, [&] { return next_step.ready(); })); // held behind the copy
    g.open();
    next_step.synchronize();
    store.read(0, 0, device_view(out));
    BOOST_TEST(same_bits(to_host(doubles(out), n), pattern(n, 1.0)));
    BOOST_TEST(same_bits(to_host(doubles(state), n), pattern(n, 2.0)));
    BOOST_TEST(!g.timed_out());
}

// read() waits for the kernels still using the state, and the next kernel sees the restored state.
BOOST_AUTO_TEST_CASE(read_is_ordered_after_earlier_and_before_later_kernels)
{
    device_store store = preallocated(2);
    device_buffer state(bytes), seen_before(bytes), seen_after(bytes);
    test::fill(doubles(state), n, 8.0, nullptr);
    store.write(0, 6, device_view(state));
    test::fill(doubles(state), n, 3.0, nullptr); // the state before the restore
    gate g;
    g.hold(nullptr, doubles(seen_before), doubles(state), n); // an adjoint still reading x, when opened
    store.read(0, 6, device_view(state));                     // returns at once
    test::copy(doubles(seen_after), doubles(state), n, nullptr);
    BOOST_TEST(!store.slot_ready(0));
    g.open();
    BOOST_TEST(same_bits(to_host(doubles(seen_before), n), pattern(n, 3.0))); // not overwritten under it
    BOOST_TEST(same_bits(to_host(doubles(seen_after), n), pattern(n, 8.0)));  // restored for the next kernel
    BOOST_TEST(!g.timed_out());
}

// A write-behind copy runs while the user's kernel runs: it completes while the kernel is held.
BOOST_AUTO_TEST_CASE(copy_out_overlaps_the_users_kernel)
{
    device_store store = preallocated(1);
    device_buffer state(bytes);
    pinned_buffer host(bytes);
    test::fill(doubles(state), n, 6.0, nullptr);
    store.write(0, 2, device_view(state));
    remat::cuda::event kernel_start(remat::cuda::event::timing::on);
    remat::cuda::event kernel_end(remat::cuda::event::timing::on);
    remat::cuda::event copy_start(remat::cuda::event::timing::on);
    remat::cuda::event copy_end(remat::cuda::event::timing::on);
    gate g;
    kernel_start.record(nullptr);
    g.hold(nullptr); // the user's next kernel, on the user's stream
    kernel_end.record(nullptr);
    copy_start.record(store.transfer_stream());
    store.copy_out(0, 2, host.bytes());
    copy_end.record(store.transfer_stream());
    const bool copied_while_kernel_ran = within(5.0, [&] { return store.slot_ready(0); });
    const bool kernel_still_running = !kernel_end.ready();
    g.open();
    kernel_end.synchronize();
    copy_end.synchronize();
    BOOST_TEST(copied_while_kernel_ran);
    BOOST_TEST(kernel_still_running);
    BOOST_TEST(remat::cuda::elapsed_seconds(copy_end, kernel_end) > 0.0);
    BOOST_TEST_MESSAGE("copy of " << bytes << " bytes took " << remat::cuda::elapsed_seconds(copy_start, copy_end)
                                  << " s, entirely inside the kernel's "
                                  << remat::cuda::elapsed_seconds(kernel_start, kernel_end) << " s");
    BOOST_TEST(same_bits(std::vector<double>(doubles(host), doubles(host) + n), pattern(n, 6.0)));
    BOOST_TEST(!g.timed_out());
}

BOOST_AUTO_TEST_SUITE_END()
