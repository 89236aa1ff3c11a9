// The device level's logic without a GPU: slots, capacities, errors and statistics on the host runtime
// (what remat::cuda::device_store is on Thrust's CPU back ends), and its ordering against the user's
// kernels on a simulator that runs queued GPU work in random orders. References: a store-everything
// host run of the same problem (gradients must be bit-identical) and the values written.
#define BOOST_TEST_MODULE device_store
#include <boost/test/unit_test.hpp>

#include "reaction_diffusion.hpp"
#include "stream_simulator.hpp"

#include "remat/cuda/basic_device_store.hpp"
#include "remat/cuda/host_runtime.hpp"
#include "remat/driver/run.hpp"
#include "remat/schedule/revolve.hpp"
#include "remat/schedule/uniform.hpp"
#include "remat/store/host_store.hpp"

#include <array>
#include <cstring>
#include <numeric>
#include <span>
#include <string>
#include <vector>

using namespace remat;
using cuda::basic_device_store;
using cuda::host_runtime;
using test::rd_gradient;
using test::reaction_diffusion;
using test::runtime_fault;
using test::same_bits;
using test::simulated_runtime;
using test::stream_simulator;

namespace {

using host_device_store = basic_device_store<host_runtime>;
using sim_store = basic_device_store<simulated_runtime>;

std::vector<double> pattern(std::size_t n, double base)
{
    std::vector<double> v(n);
    for (std::size_t i = 0; i < n; ++i)
        v[i] = base + static_cast<double>(i);
    return v;
}

const_bytes view(const std::vector<double>& v, memory_space space = memory_space::host)
{
    return {reinterpret_cast<const std::byte*>(v.data()), v.size() * sizeof(double), space};
}
mutable_bytes view(std::vector<double>& v, memory_space space = memory_space::host)
{
    return {reinterpret_cast<std::byte*>(v.data()), v.size() * sizeof(double), space};
}

/// A host runtime that counts its allocations (the store must allocate its slots once).
struct counting_runtime : host_runtime {
    int* allocations = nullptr;
    int* live = nullptr;
    void* allocate(std::size_t bytes)
    {
        ++*allocations;
        ++*live;
        return host_runtime::allocate(bytes);
    }
    void deallocate(void* p, std::size_t bytes) noexcept
    {
        --*live;
        host_runtime::deallocate(p, bytes);
    }
};

} // namespace

static_assert(storage_level<host_device_store>);
static_assert(storage_level<sim_store>);
static_assert(!store_prefetches<host_device_store>);

BOOST_AUTO_TEST_SUITE(slots_and_errors)

BOOST_AUTO_TEST_CASE(every_slot_round_trips_its_snapshot)
{
    host_device_store store(5);
    BOOST_TEST(store.slot_count() == 0u); // sized by the first write
    for (slot_t s = 0; s < 5; ++s)
        store.write(s, 10 * s, view(pattern(100, static_cast<double>(s) * 1000)));
    BOOST_TEST(store.slot_count() == 5u);
    BOOST_TEST(store.slot_bytes() == 800u);
    for (slot_t s = 4; s >= 0; --s) {
        std::vector<double> out(100);
        BOOST_TEST(store.snapshot_bytes(s) == 800u);
        store.read(s, 10 * s, view(out));
        BOOST_TEST(same_bits(out, pattern(100, static_cast<double>(s) * 1000)));
    }
    const level_stats st = store.stats();
    BOOST_TEST(st.name == "device");
    BOOST_TEST(st.stores == 5u);
    BOOST_TEST(st.restores == 5u);
    BOOST_TEST(st.bytes_written == 4000u);
    BOOST_TEST(st.bytes_read == 4000u);
    BOOST_TEST(st.slots_in_use == 5u);
    BOOST_TEST(st.peak_bytes == 4000u);
    store.release(2);
    BOOST_TEST(store.snapshot_bytes(2) == 0u);
    BOOST_TEST(store.stats().slots_in_use == 4u);
    store.write(2, 7, view(pattern(50, -1))); // a smaller snapshot reuses the slot
    std::vector<double> out(50);
    store.read(2, 7, view(out));
    BOOST_TEST(same_bits(out, pattern(50, -1)));
    BOOST_TEST(store.stats().peak_slots == 5u);
}

BOOST_AUTO_TEST_CASE(a_byte_budget_becomes_whole_slots)
{
    host_device_store store(level_capacity{.bytes = 2048});
    BOOST_TEST(store.capacity().slots == level_capacity::unlimited_slots); // unknown until sized
    const std::vector<double> x = pattern(40, 0); // 320 bytes -> 512-byte slots -> 4 slots in 2048 bytes
    for (slot_t s = 0; s < 4; ++s)
        store.write(s, s, view(x));
    BOOST_TEST(store.capacity().slots == 4u);
    BOOST_TEST(store.capacity().bytes == 2048u);
    BOOST_CHECK_THROW(store.write(4, 4, view(x)), capacity_error); // beyond what the byte budget holds

    host_device_store both(level_capacity{3, 1 << 20}); // the smaller limit wins
    both.write(0, 0, view(x));
    BOOST_TEST(both.capacity().slots == 3u);
}

BOOST_AUTO_TEST_CASE(slot_bytes_preallocates_once_and_never_again)
{
    int allocations = 0;
    int live = 0;
    const reaction_diffusion problem{.points = 64};
    {
        basic_device_store<counting_runtime> store(level_capacity{.slots = 6},
                                                   {.slot_bytes = problem.points * sizeof(double)},
                                                   counting_runtime{{}, &allocations, &live});
        BOOST_TEST(allocations == 1);
        BOOST_TEST(store.slot_count() == 6u);
        const rd_gradient g = test::run_host_gradient(problem, revolve(200, 6), store);
        BOOST_TEST(allocations == 1); // the whole run: no allocation per snapshot
        BOOST_TEST(same_bits(g, test::store_all_gradient(problem, 200)));
        basic_device_store<counting_runtime> moved(std::move(store));
        BOOST_TEST(moved.slot_count() == 6u);
        BOOST_TEST(live == 1);
    }
    BOOST_TEST(live == 0); // freed exactly once, by the moved-to store
}

BOOST_AUTO_TEST_CASE(errors_name_the_bad_value_and_leave_the_slot_unchanged)
{
    BOOST_CHECK_THROW(host_device_store(0), argument_error);
    BOOST_CHECK_THROW(host_device_store(level_capacity{}), argument_error); // unbounded
    BOOST_CHECK_THROW(host_device_store(level_capacity{4, 0}), argument_error);
    BOOST_CHECK_THROW(host_device_store(level_capacity{4, 100}, {.slot_bytes = 1000}), capacity_error);

    host_device_store store(level_capacity{.slots = 3}, {.slot_bytes = 800});
    const std::vector<double> x = pattern(100, 1);
    BOOST_CHECK_THROW(store.write(3, 0, view(x)), schedule_error); // a slot the store lacks
    BOOST_CHECK_THROW(store.write(-1, 0, view(x)), schedule_error);
    BOOST_CHECK_THROW(store.write(0, 0, view(pattern(101, 0))), capacity_error); // larger than a slot
    BOOST_TEST(store.snapshot_bytes(0) == 0u);
    BOOST_TEST(store.stats().stores == 0u);

    store.write(0, 5, view(x));
    BOOST_CHECK_THROW(store.write(0, 6, view(x)), schedule_error); // occupied
    std::vector<double> out(100);
    BOOST_CHECK_THROW(store.read(0, 4, view(out)), integrity_error); // wrong step
    std::vector<double> shorter(99);
    BOOST_CHECK_THROW(store.read(0, 5, view(shorter)), integrity_error); // wrong size
    BOOST_CHECK_THROW(store.read(1, 5, view(out)), schedule_error);      // empty slot
    BOOST_CHECK_THROW(store.release(1), schedule_error);
    try {
        store.read(0, 4, view(out));
    } catch (const integrity_error& e) {
        BOOST_TEST(std::string(e.what()).find("x_5") != std::string::npos);
        BOOST_TEST(std::string(e.what()).find("x_4") != std::string::npos);
    }
    store.read(0, 5, view(out));
    BOOST_TEST(same_bits(out, x));

    host_device_store unsized(2);
    BOOST_CHECK_THROW(unsized.read(0, 0, view(out)), schedule_error); // never written
    store.release_all();
    BOOST_TEST(store.snapshot_bytes(0) == 0u);
    BOOST_TEST(store.stats().slots_in_use == 0u);
}

BOOST_AUTO_TEST_CASE(gradients_through_the_driver_are_bit_identical_to_store_all)
{
    const reaction_diffusion problem{.points = 96};
    for (const step_t steps : {1, 2, 17, 150}) {
        const rd_gradient expected = test::store_all_gradient(problem, steps);
        for (const slot_t slots : {1, 2, 5}) {
            host_device_store store(slots);
            const rd_gradient g = test::run_host_gradient(problem, revolve(steps, slots), store);
            BOOST_TEST(same_bits(g, expected), "T=" << steps << " s=" << slots);
        }
    }
    const uniform periodic(100, 15);
    host_device_store store(periodic.cost().peak_slots);
    const rd_gradient g = test::run_host_gradient(problem, periodic, store);
    BOOST_TEST(same_bits(g, test::store_all_gradient(problem, 100)));
}

BOOST_AUTO_TEST_SUITE_END()

// --- ordering against the user's kernels, on simulated asynchronous streams ------------------------------

namespace {

/// A state in the simulator's "device" memory: its views say memory_space::device, so the store treats
/// it like GPU memory (no host synchronisation).
struct sim_state {
    std::vector<double> values;
};

} // namespace

template <>
struct remat::snapshot_traits<sim_state> {
    static const_bytes bytes(const sim_state& s) noexcept { return view(s.values, memory_space::device); }
    static mutable_bytes bytes(sim_state& s) noexcept { return view(s.values, memory_space::device); }
};

namespace {

struct sim_setup {
    bool own_user_stream = false; // the user's kernels on a stream of their own instead of stream 0
    runtime_fault fault = runtime_fault::none;
};

/// The simulated device level without wait_for_user: the driver's wait for the user's stream at the end of
/// each step would order every copy after the user's kernels by itself and hide a missing wait of the
/// store's own, which these tests exist to catch. Everything else goes to the level.
class without_user_wait {
public:
    explicit without_user_wait(sim_store& level) : level_(level) {}
    [[nodiscard]] level_capacity capacity() const { return level_.capacity(); }
    void write(slot_t n, step_t k, const_bytes src) { level_.write(n, k, src); }
    void read(slot_t n, step_t k, mutable_bytes dst) { level_.read(n, k, dst); }
    void write(slot_t n, step_t k, const_parts src) { level_.write(n, k, src); }
    void read(slot_t n, step_t k, mutable_parts dst) { level_.read(n, k, dst); }
    [[nodiscard]] std::span<const std::size_t> part_sizes(slot_t n) const { return level_.part_sizes(n); }
    void release(slot_t n) { level_.release(n); }
    void release_all() noexcept { level_.release_all(); }
    [[nodiscard]] std::size_t snapshot_bytes(slot_t n) const { return level_.snapshot_bytes(n); }
    [[nodiscard]] const level_stats& stats() const noexcept { return level_.stats(); }
    void restart_peaks() noexcept { level_.restart_peaks(); }

private:
    sim_store& level_;
};
static_assert(gathering_level<without_user_wait>);

/// The problem's steps as kernels queued on the user's stream: they run whenever the simulator picks
/// them, reading and writing the state's buffer then.
rd_gradient simulated_gradient(const reaction_diffusion& problem, step_t steps, slot_t slots, std::uint64_t seed,
                               sim_setup setup)
{
    stream_simulator sim(seed);
    const int user = setup.own_user_stream ? sim.create_stream() : 0;
    simulated_runtime runtime{&sim, setup.fault, user};
    sim_store level(level_capacity{.slots = slots}, {.user_stream = user}, runtime);
    without_user_wait store(level);

    rd_gradient g{problem.objective_gradient(problem.final_field(steps)), std::vector<double>(problem.points, 0.0)};
    sim_state x{problem.initial_field()};
    std::vector<double> scratch;
    (void)run(revolve(steps, slots), store, x, remat::forward_step([&](step_t, sim_state& s) {
                  sim.enqueue(user, [&] { problem.step(s.values.data(), scratch); });
                  sim.progress();
              }),
              remat::adjoint_step([&](step_t, sim_state& s) {
                  sim.enqueue(user, [&] { problem.adjoint_step(s.values.data(), g.initial, g.nu_points, scratch); });
                  sim.progress();
              }));
    sim.drain();
    return g;
}

} // namespace

namespace {

/// A state of two parts in the simulator's "device" memory: the field and the field of the step before
/// (written by the same kernel); with HostPart, a third part in host memory: a step counter.
template <bool HostPart>
struct sim_parts_state {
    std::vector<double> values;
    std::vector<double> previous;
    std::array<std::int64_t, 1> counter{};
};

} // namespace

template <bool HostPart>
struct remat::snapshot_traits<sim_parts_state<HostPart>> {
    static constexpr std::size_t count = HostPart ? 3 : 2;
    static std::array<const_bytes, count> parts(const sim_parts_state<HostPart>& s) noexcept
    {
        if constexpr (HostPart)
            return {view(s.values, memory_space::device), view(s.previous, memory_space::device),
                    const_bytes{reinterpret_cast<const std::byte*>(s.counter.data()), sizeof s.counter,
                                memory_space::host}};
        else
            return {view(s.values, memory_space::device), view(s.previous, memory_space::device)};
    }
    static std::array<mutable_bytes, count> parts(sim_parts_state<HostPart>& s) noexcept
    {
        if constexpr (HostPart)
            return {
                view(s.values, memory_space::device), view(s.previous, memory_space::device),
                mutable_bytes{reinterpret_cast<std::byte*>(s.counter.data()), sizeof s.counter, memory_space::host}};
        else
            return {view(s.values, memory_space::device), view(s.previous, memory_space::device)};
    }
};

namespace {

/// simulated_gradient with a multi-part state: the device parts are copied on the store's streams in
/// whatever order the simulator picks, a host part at once (and the host then waits for the copy). Also
/// counts the x_k whose second or third part the adjoint found wrong.
template <bool HostPart>
rd_gradient simulated_parts_gradient(const reaction_diffusion& problem, step_t steps, slot_t slots, std::uint64_t seed,
                                     runtime_fault fault, int& wrong_parts)
{
    std::vector<std::vector<double>> fields{problem.initial_field()}; // x_k's field, k = 0..T
    {
        std::vector<double> u = problem.initial_field(), scratch;
        for (step_t k = 0; k < steps; ++k) {
            problem.step(u.data(), scratch);
            fields.push_back(u);
        }
    }
    stream_simulator sim(seed);
    simulated_runtime runtime{&sim, fault, 0};
    sim_store level(level_capacity{.slots = slots}, {.user_stream = 0}, runtime);
    without_user_wait store(level);
    rd_gradient g{problem.objective_gradient(problem.final_field(steps)), std::vector<double>(problem.points, 0.0)};
    sim_parts_state<HostPart> x{problem.initial_field(), problem.initial_field(), {0}};
    std::vector<double> scratch;
    using state = sim_parts_state<HostPart>;
    (void)run(revolve(steps, slots), store, x, remat::forward_step([&](step_t, state& s) {
                  sim.enqueue(0, [&] {
                      s.previous = s.values;
                      problem.step(s.values.data(), scratch);
                  });
                  ++s.counter[0]; // the host's own part: no kernel
                  sim.progress();
              }),
              remat::adjoint_step([&](step_t k, state& s) {
                  if (HostPart && s.counter[0] != k)
                      ++wrong_parts;
                  sim.enqueue(0, [&, k] {
                      if (s.previous != fields[static_cast<std::size_t>(k == 0 ? 0 : k - 1)])
                          ++wrong_parts;
                      problem.adjoint_step(s.values.data(), g.initial, g.nu_points, scratch);
                  });
                  sim.progress();
              }));
    sim.drain();
    return g;
}

} // namespace

BOOST_AUTO_TEST_SUITE(ordering)

BOOST_AUTO_TEST_CASE(gradients_are_bit_identical_under_every_interleaving)
{
    const reaction_diffusion problem{.points = 48};
    const rd_gradient expected = test::store_all_gradient(problem, 60);
    for (const bool own_stream : {false, true})
        for (std::uint64_t seed = 1; seed <= 40; ++seed) {
            const rd_gradient g = simulated_gradient(problem, 60, 4, seed, {own_stream, runtime_fault::none});
            BOOST_TEST(same_bits(g, expected), "seed " << seed << (own_stream ? ", own user stream" : ""));
        }
}

// The test above can fail: with either half of the ordering removed, some interleaving breaks the gradient.
BOOST_AUTO_TEST_CASE(a_missing_wait_is_caught)
{
    const reaction_diffusion problem{.points = 48};
    const rd_gradient expected = test::store_all_gradient(problem, 60);
    for (const runtime_fault fault :
         {runtime_fault::user_stream_never_waits, runtime_fault::store_streams_never_wait}) {
        int wrong = 0;
        for (std::uint64_t seed = 1; seed <= 40; ++seed)
            wrong += same_bits(simulated_gradient(problem, 60, 4, seed, {false, fault}), expected) ? 0 : 1;
        BOOST_TEST_MESSAGE("fault " << static_cast<int>(fault) << ": " << wrong << " of 40 interleavings wrong");
        BOOST_TEST(wrong > 0, "fault " << static_cast<int>(fault) << " went unnoticed");
    }
}

BOOST_AUTO_TEST_CASE(parts_are_gathered_and_scattered_under_every_interleaving)
{
    // A state of two device parts and a host part: each part copied straight into its place in the slot
    // on the store's streams, ordered against the user's kernels like a single view.
    const reaction_diffusion problem{.points = 40};
    const rd_gradient expected = test::store_all_gradient(problem, 50);
    for (std::uint64_t seed = 1; seed <= 30; ++seed) {
        int wrong_parts = 0;
        const rd_gradient g = simulated_parts_gradient<true>(problem, 50, 4, seed, runtime_fault::none, wrong_parts);
        BOOST_TEST(same_bits(g, expected), "seed " << seed);
        const rd_gradient d = simulated_parts_gradient<false>(problem, 50, 4, seed, runtime_fault::none, wrong_parts);
        BOOST_TEST(same_bits(d, expected), "seed " << seed << ", device parts only");
        BOOST_TEST(wrong_parts == 0, "seed " << seed);
    }
    // And the check can fail: without the waits some interleaving breaks a part or the gradient (with
    // device parts only: a host part makes the host wait for each copy, which hides a missing wait).
    for (const runtime_fault fault :
         {runtime_fault::user_stream_never_waits, runtime_fault::store_streams_never_wait}) {
        int broken = 0;
        for (std::uint64_t seed = 1; seed <= 30; ++seed) {
            int wrong_parts = 0;
            const rd_gradient g = simulated_parts_gradient<false>(problem, 50, 4, seed, fault, wrong_parts);
            broken += (!same_bits(g, expected) || wrong_parts != 0) ? 1 : 0;
        }
        BOOST_TEST_MESSAGE("fault " << static_cast<int>(fault) << ": " << broken << " of 30 interleavings wrong");
        BOOST_TEST(broken > 0, "fault " << static_cast<int>(fault) << " went unnoticed");
    }
}

BOOST_AUTO_TEST_CASE(device_parts_round_trip_and_wrong_sizes_are_refused)
{
    host_device_store store(2);
    std::vector<double> a = pattern(5, 1.0), b = pattern(3, 100.0);
    const std::array<const_bytes, 2> out{view(a, memory_space::device), view(b)};
    store.write(1, 8, const_parts(out));
    BOOST_TEST(store.snapshot_bytes(1) == 8 * sizeof(double));
    BOOST_TEST_REQUIRE(store.part_sizes(1).size() == 2u);
    BOOST_TEST(store.part_sizes(1)[1] == 3 * sizeof(double));
    std::vector<double> c(5), d(3);
    const std::array<mutable_bytes, 2> in{view(c, memory_space::device), view(d)};
    store.read(1, 8, mutable_parts(in));
    BOOST_TEST(c == a);
    BOOST_TEST(d == b);
    std::vector<double> e(4), f(4);
    const std::array<mutable_bytes, 2> wrong{view(e), view(f)};
    try {
        store.read(1, 8, mutable_parts(wrong));
        BOOST_FAIL("parts of the wrong sizes were accepted");
    } catch (const integrity_error& err) {
        BOOST_TEST(std::string(err.what()) == "device slot 1 holds x_8 in 2 parts (40, 24 bytes), but part 0 of the "
                                              "state has 32 bytes where the snapshot's has 40");
    }
    // A single view written later into the other slot is one part.
    store.write(0, 9, view(a));
    BOOST_TEST(store.part_sizes(0).size() == 1u);
}

BOOST_AUTO_TEST_CASE(a_slot_reused_during_a_copy_out_keeps_both_snapshots)
{
    for (const runtime_fault fault : {runtime_fault::none, runtime_fault::store_streams_never_wait}) {
        int wrong = 0;
        for (std::uint64_t seed = 1; seed <= 40; ++seed) {
            stream_simulator sim(seed);
            sim_store store(level_capacity{.slots = 2}, {}, simulated_runtime{&sim, fault});
            sim_state x{pattern(64, 1)};
            const sim_state y{pattern(64, 1000)};
            std::vector<double> behind(64, 0.0);
            store.write(0, 3, snapshot_traits<sim_state>::bytes(std::as_const(x)));
            store.copy_out(0, 3, view(behind)); // write-behind, asynchronous
            store.release(0);
            store.write(0, 4, snapshot_traits<sim_state>::bytes(y));                    // reuse at once
            sim.enqueue(0, [&] { std::fill(x.values.begin(), x.values.end(), -7.0); }); // the next kernel
            sim.progress();
            store.read(0, 4, snapshot_traits<sim_state>::bytes(x));
            sim.drain();
            const bool right = same_bits(behind, pattern(64, 1)) && same_bits(x.values, pattern(64, 1000));
            if (fault == runtime_fault::none)
                BOOST_TEST(right, "seed " << seed);
            wrong += right ? 0 : 1;
        }
        if (fault != runtime_fault::none)
            BOOST_TEST(wrong > 0);
    }
}

BOOST_AUTO_TEST_CASE(a_read_after_a_copy_in_sees_its_bytes)
{
    for (std::uint64_t seed = 1; seed <= 40; ++seed) {
        stream_simulator sim(seed);
        sim_store store(level_capacity{.slots = 2}, {}, simulated_runtime{&sim});
        const std::vector<double> from_host = pattern(32, 5);
        store.copy_in(1, 9, view(from_host, memory_space::device)); // read-ahead from (pinned) host memory
        BOOST_TEST(store.snapshot_bytes(1) == 32 * sizeof(double));
        sim_state x{std::vector<double>(32, 0.0)};
        store.read(1, 9, snapshot_traits<sim_state>::bytes(x));
        std::vector<double> seen;
        sim.enqueue(0, [&] { seen = x.values; }); // the user's next kernel
        sim.drain();
        BOOST_TEST(same_bits(seen, from_host), "seed " << seed);
    }
}

BOOST_AUTO_TEST_CASE(only_host_memory_and_wait_slot_block_the_host)
{
    for (std::uint64_t seed = 1; seed <= 20; ++seed) {
        stream_simulator sim(seed, 0); // the simulated GPU runs nothing unless the host waits
        sim_store store(level_capacity{.slots = 2}, {}, simulated_runtime{&sim});
        // Device memory in and out: the host never waits (nothing has run yet).
        sim_state x{pattern(16, 4)};
        store.write(1, 0, snapshot_traits<sim_state>::bytes(std::as_const(x)));
        store.read(1, 0, snapshot_traits<sim_state>::bytes(x));
        BOOST_TEST(sim.operations_run() == 0u);
        BOOST_TEST(!store.slot_ready(1));
        std::vector<double> host = pattern(16, 2);
        store.write(0, 1, view(host)); // host memory: the caller may reuse it at once
        std::fill(host.begin(), host.end(), 0.0);
        std::vector<double> behind(16, 0.0);
        store.copy_out(0, 1, view(behind, memory_space::device));
        BOOST_TEST(!store.slot_ready(0)); // nothing ran: still in flight
        store.wait_slot(0);
        BOOST_TEST(store.slot_ready(0));
        BOOST_TEST(same_bits(behind, pattern(16, 2)));
        std::vector<double> back(16, 0.0);
        store.read(0, 1, view(back)); // into host memory: complete on return
        BOOST_TEST(same_bits(back, pattern(16, 2)));
    }
}

BOOST_AUTO_TEST_SUITE_END()
