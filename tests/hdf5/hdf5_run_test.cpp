// The disk level under the driver: every kind of state goes through remat::run with an hdf5_store, and
// the gradients are bit-identical to runs with a host_store and to store-everything runs. And the store
// used from a worker thread while the main thread computes, as the multi-level store's asynchronous
// engine will use it.
#define BOOST_TEST_MODULE hdf5_run
#include <boost/test/unit_test.hpp>

#include "test_states.hpp"

#include "hdf5_test_support.hpp"

#include "burgers.hpp"
#include "burgers_gradient.hpp"
#include "lorenz63.hpp"

#include "remat/driver/capacity_for.hpp"
#include "remat/driver/run.hpp"
#include "remat/hdf5/hdf5_store.hpp"
#include "remat/hdf5/inspect.hpp"
#include "remat/schedule/any_schedule.hpp"
#include "remat/schedule/revolve.hpp"
#include "remat/schedule/uniform.hpp"
#include "remat/store/host_store.hpp"

#include <array>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

using namespace remat;
using remat::test::pattern_bytes;
using remat::test::scratch_dir;
using remat::test::view;
using test::mesh_state;
using test::particle;

namespace {

// The exact x_k seen by each adjoint step, in order k = T-1..0, as raw bytes.
template <class State, class Store>
std::vector<std::vector<std::byte>> states_seen(Store& store, State x, step_t steps, slot_t slots,
                                                const std::function<void(step_t, State&)>& forward,
                                                const std::function<std::vector<std::byte>(const State&)>& bytes)
{
    std::vector<std::vector<std::byte>> seen;
    (void)run(revolve(steps, slots), store, x, remat::forward_step(forward),
              remat::adjoint_step([&](step_t, State& s) { seen.push_back(bytes(s)); }));
    return seen;
}

template <class State>
void same_states_as_host_store(const State& x0, step_t steps, slot_t slots,
                               const std::function<void(step_t, State&)>& forward,
                               const std::function<std::vector<std::byte>(const State&)>& bytes,
                               hdf5_store::options opts = {})
{
    scratch_dir dir;
    host_store ram(slots);
    hdf5_store disk(dir / "run.h5", level_capacity{.slots = slots}, opts);
    const auto expected = states_seen<State>(ram, x0, steps, slots, forward, bytes);
    const auto got = states_seen<State>(disk, x0, steps, slots, forward, bytes);
    BOOST_TEST_REQUIRE(got.size() == static_cast<std::size_t>(steps));
    BOOST_TEST((got == expected));
    const level_stats s = disk.stats();
    BOOST_TEST(s.stores > 0u);
    BOOST_TEST(s.restores > 0u);
    BOOST_TEST(s.slots_in_use == 0u); // the driver freed every slot
}

template <class T>
std::vector<std::byte> object_bytes(const T& t)
{
    const auto* p = reinterpret_cast<const std::byte*>(&t);
    return {p, p + sizeof(T)};
}

} // namespace

BOOST_AUTO_TEST_CASE(every_state_type_round_trips_through_run)
{
    // std::vector<double>
    std::vector<double> v0(3000);
    for (std::size_t i = 0; i < v0.size(); ++i)
        v0[i] = 0.001 * static_cast<double>(i);
    same_states_as_host_store<std::vector<double>>(
        v0, 60, 5,
        [](step_t k, std::vector<double>& s) {
            for (double& e : s)
                e = e * 0.999 + 1e-3 * static_cast<double>(k);
        },
        [](const std::vector<double>& s) {
            const auto b = std::as_bytes(std::span(s));
            return std::vector<std::byte>(b.begin(), b.end());
        },
        {.element = hdf5_element::float64});
    // std::array<double, 3>
    same_states_as_host_store<std::array<double, 3>>(
        {1.0, 2.0, 3.0}, 80, 4, [](step_t, std::array<double, 3>& s) { s = {s[1], s[2], s[0] * 0.5 + s[1]}; },
        object_bytes<std::array<double, 3>>);
    // a trivially copyable struct
    same_states_as_host_store<particle>(
        {0.0, 1.0, 0}, 50, 3,
        [](step_t, particle& p) {
            p.x += p.v * 0.1;
            if (p.x > 1) {
                p.v = -p.v;
                ++p.collisions;
            }
        },
        // Its members' bytes: the struct has 4 bytes of padding, whose value is indeterminate.
        [](const particle& p) {
            std::vector<std::byte> out = object_bytes(p.x);
            for (const auto& member : {object_bytes(p.v), object_bytes(p.collisions)})
                out.insert(out.end(), member.begin(), member.end());
            return out;
        });
    // a state serialised through snapshot_traits (two buffers of different element types)
    mesh_state m0{std::vector<float>(500, 1.0f), std::vector<double>(700, 2.0)};
    same_states_as_host_store<mesh_state>(
        m0, 40, 6,
        [](step_t k, mesh_state& m) {
            for (float& d : m.density)
                d = d * 1.01f + static_cast<float>(k);
            for (double& u : m.velocity)
                u = u * 0.99 - static_cast<double>(k);
        },
        [](const mesh_state& m) {
            std::vector<std::byte> out(snapshot_traits<mesh_state>::size_bytes(m));
            snapshot_traits<mesh_state>::save(m, out);
            return out;
        });
}

BOOST_AUTO_TEST_CASE(a_span_over_the_users_buffer_round_trips)
{
    scratch_dir dir;
    std::vector<double> buffer(256, 1.0), expected_buffer(256, 1.0);
    auto forward = [](step_t k, std::span<double>& s) {
        for (double& e : s)
            e = e * 1.5 - static_cast<double>(k);
    };
    std::vector<double> seen_disk, seen_ram;
    std::span<double> x(buffer), y(expected_buffer);
    hdf5_store disk(dir / "span.h5", level_capacity{3});
    host_store ram(3);
    (void)run(revolve(30, 3), disk, x, remat::forward_step(forward),
              remat::adjoint_step([&](step_t, std::span<double>& s) { seen_disk.push_back(s[7]); }));
    (void)run(revolve(30, 3), ram, y, remat::forward_step(forward),
              remat::adjoint_step([&](step_t, std::span<double>& s) { seen_ram.push_back(s[7]); }));
    BOOST_TEST(seen_disk.size() == 30u);
    BOOST_TEST(std::memcmp(seen_disk.data(), seen_ram.data(), seen_ram.size() * sizeof(double)) == 0);
}

BOOST_AUTO_TEST_CASE(lorenz_gradients_are_bit_identical_to_host_runs)
{
    const examples::lorenz63 model;
    const step_t steps = 600;
    auto gradient = [&](auto& store, const any_schedule& plan) {
        examples::vec3 x{1.0, 1.0, 1.0};
        examples::vec3 lambda{0, 0, 1}, dp{};
        (void)run(plan, store, x, remat::forward_step([&](step_t, examples::vec3& s) { model.step(s); }),
                  remat::adjoint_step([&](step_t, examples::vec3& s) { model.adjoint_step(s, lambda, dp); }));
        return std::array<examples::vec3, 2>{lambda, dp};
    };
    scratch_dir dir;
    host_store all(steps);
    const auto reference = gradient(all, store_all(steps, steps - 1));
    for (const slot_t slots : {2, 9, 40}) {
        // (Durability is not what is tested here; fdatasync per snapshot would only slow the test.)
        hdf5_store disk(dir / ("l" + std::to_string(slots) + ".h5"), level_capacity{.slots = slots},
                        {.durable_writes = false});
        const auto g = gradient(disk, revolve(steps, slots));
        BOOST_TEST(std::memcmp(&g, &reference, sizeof g) == 0, "slots " << slots);
    }
}

BOOST_AUTO_TEST_CASE(burgers_gradients_are_bit_identical_to_host_runs)
{
    examples::burgers model;
    model.points = 2000;
    const step_t steps = 200;
    auto gradient = [&](auto& store, const any_schedule& plan) {
        return test::burgers_gradient(model, plan, store).gradient;
    };
    scratch_dir dir;
    host_store ram(8);
    const std::vector<double> reference = gradient(ram, revolve(steps, 8));
    for (const any_schedule& plan : {any_schedule(revolve(steps, 8)), any_schedule(uniform(steps, 25))}) {
        hdf5_store disk(dir / "b.h5", capacity_for(plan), {.durable_writes = false, .element = hdf5_element::float64});
        const std::vector<double> g = gradient(disk, plan);
        BOOST_TEST_REQUIRE(g.size() == reference.size());
        BOOST_TEST(std::memcmp(g.data(), reference.data(), g.size() * sizeof(double)) == 0);
    }
}

BOOST_AUTO_TEST_CASE(a_failing_step_leaves_the_store_reusable)
{
    scratch_dir dir;
    hdf5_store disk(dir / "fail.h5", level_capacity{4});
    std::vector<double> x(100, 1.0);
    BOOST_CHECK_THROW(run(revolve(50, 4), disk, x, remat::forward_step([](step_t k, std::vector<double>& s) {
                              if (k == 37)
                                  throw std::runtime_error("solver diverged");
                              s[0] += 1;
                          }),
                          remat::adjoint_step([](step_t, std::vector<double>&) {})),
                      step_error);
    BOOST_TEST(disk.stats().slots_in_use == 0u);
    x.assign(100, 1.0);
    std::size_t reversed = 0;
    (void)run(revolve(50, 4), disk, x, remat::forward_step([](step_t, std::vector<double>& s) { s[0] += 1; }),
              remat::adjoint_step([&](step_t k, std::vector<double>& s) {
                  BOOST_TEST(s[0] == 1.0 + static_cast<double>(k));
                  ++reversed;
              }));
    BOOST_TEST(reversed == 50u);
}

namespace {

// A stand-in for the multi-level store's asynchronous engine: one I/O thread owns every call into the
// store; the main thread hands it work and goes on computing.
class io_worker {
public:
    explicit io_worker(hdf5_store& store) : store_(store), thread_([this] { loop(); }) {}
    ~io_worker()
    {
        {
            std::lock_guard lock(mutex_);
            stop_ = true;
        }
        wake_.notify_one();
        thread_.join();
    }
    io_worker(const io_worker&) = delete;
    io_worker& operator=(const io_worker&) = delete;

    void post(std::function<void(hdf5_store&)> job)
    {
        {
            std::lock_guard lock(mutex_);
            jobs_.push_back(std::move(job));
        }
        wake_.notify_one();
    }
    void drain()
    {
        std::unique_lock lock(mutex_);
        idle_.wait(lock, [this] { return jobs_.empty() && !busy_; });
    }

private:
    void loop()
    {
        std::unique_lock lock(mutex_);
        for (;;) {
            wake_.wait(lock, [this] { return stop_ || !jobs_.empty(); });
            if (jobs_.empty())
                return;
            auto job = std::move(jobs_.front());
            jobs_.pop_front();
            busy_ = true;
            lock.unlock();
            job(store_);
            lock.lock();
            busy_ = false;
            idle_.notify_all();
        }
    }

    hdf5_store& store_;
    std::mutex mutex_;
    std::condition_variable wake_, idle_;
    std::deque<std::function<void(hdf5_store&)>> jobs_;
    bool busy_ = false;
    bool stop_ = false;
    std::thread thread_;
};

} // namespace

BOOST_AUTO_TEST_CASE(a_worker_thread_drives_the_store_while_the_main_thread_computes)
{
    scratch_dir dir;
    constexpr slot_t slots = 6;
    constexpr std::size_t size = 300000;
    hdf5_store store(dir / "async.h5", level_capacity{slots}, {.transfer_bytes = 65536});
    std::vector<std::vector<std::byte>> expected(slots);
    std::vector<std::vector<std::byte>> read_back(slots);
    double busy_work = 0;
    {
        io_worker io(store);
        // Forward: the main thread makes each state and hands a copy to the I/O thread.
        for (slot_t s = 0; s < slots; ++s) {
            expected[static_cast<std::size_t>(s)] = pattern_bytes(static_cast<std::uint64_t>(s), size);
            io.post(
                [s, copy = expected[static_cast<std::size_t>(s)]](hdf5_store& st) { st.write(s, 10 * s, view(copy)); });
            for (int i = 0; i < 200000; ++i) // compute meanwhile
                busy_work += 1e-9 * i;
        }
        // Reverse: reads are queued ahead, results land in buffers the main thread owns.
        for (slot_t s = slots - 1; s >= 0; --s) {
            read_back[static_cast<std::size_t>(s)].resize(size);
            io.post([s, &read_back](hdf5_store& st) {
                st.read(s, 10 * s, view(read_back[static_cast<std::size_t>(s)]));
                st.release(s);
            });
        }
        io.drain();
    }
    BOOST_TEST(busy_work > 0);
    BOOST_TEST((read_back == expected));
    const level_stats st = store.stats();
    BOOST_TEST(st.stores == static_cast<std::uint64_t>(slots));
    BOOST_TEST(st.restores == static_cast<std::uint64_t>(slots));
    BOOST_TEST(st.slots_in_use == 0u);
}

BOOST_AUTO_TEST_CASE(two_stores_on_two_threads_at_once)
{
    // remat serialises its HDF5 calls process-wide; each store's bytes stay its own.
    scratch_dir dir;
    auto work = [&](int id) {
        hdf5_store store(dir / ("t" + std::to_string(id) + ".h5"), level_capacity{3});
        for (int round = 0; round < 20; ++round)
            for (slot_t s = 0; s < 3; ++s) {
                if (store.snapshot_step(s) >= 0)
                    store.release(s);
                const auto seed = static_cast<std::uint64_t>(id * 100000 + round * 10 + s);
                store.write(s, round, view(pattern_bytes(seed, 70000 + static_cast<std::size_t>(s))));
                std::vector<std::byte> back(70000 + static_cast<std::size_t>(s));
                store.read(s, round, view(back));
                if (back != pattern_bytes(seed, back.size()))
                    throw std::runtime_error("thread " + std::to_string(id) + " read back other bytes");
            }
    };
    std::exception_ptr failure;
    std::mutex m;
    std::vector<std::thread> threads;
    for (int id = 0; id < 2; ++id)
        threads.emplace_back([&, id] {
            try {
                work(id);
            } catch (...) {
                std::lock_guard lock(m);
                failure = std::current_exception();
            }
        });
    for (std::thread& t : threads)
        t.join();
    BOOST_TEST(!failure);
    for (int id = 0; id < 2; ++id)
        for (const hdf5_snapshot_info& s : hdf5_inspect(dir / ("t" + std::to_string(id) + ".h5"), true).snapshots)
            BOOST_TEST(s.verified, s.dataset);
}
