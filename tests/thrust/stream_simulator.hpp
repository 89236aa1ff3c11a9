// A model of asynchronous GPU streams on the CPU, for checking that a device level orders its copies
// against the user's kernels: work is queued per stream and runs later, one operation at a time, in a
// random order that respects only stream order and event waits — the freedom a GPU has. A missing wait
// shows up as a kernel running before (or after) a copy it depends on, and so as a wrong result.
#pragma once

#include "remat/cuda/device_runtime.hpp"
#include "remat/store/snapshot_view.hpp"

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <random>
#include <vector>

namespace remat::test {

/// Streams, events and queued work; single-threaded. Stream 0 is the default stream; event 0 is never
/// recorded (always complete).
class stream_simulator {
public:
    /// `max_burst`: after each call the simulated GPU runs 0..max_burst ready operations.
    explicit stream_simulator(std::uint64_t seed, int max_burst = 3);

    int create_stream();
    int create_event();
    /// Queues `work` on `stream`; it runs when it reaches the head and the simulator picks it.
    void enqueue(int stream, std::function<void()> work);
    /// CUDA semantics: the event completes when the work queued on `stream` so far has run.
    void record(int event, int stream);
    /// Later work on `stream` waits for the latest record of `event` as of this call.
    void wait(int stream, int event);
    /// The host blocks: runs operations (in random order) until the event's latest record completed.
    /// Throws std::logic_error when nothing can run any more (a deadlock).
    void synchronize(int event);
    void synchronize_stream(int stream);
    [[nodiscard]] bool ready(int event) const;
    /// Lets the simulated GPU run a random number (0..max_burst) of ready operations.
    void progress();
    /// Runs everything queued.
    void drain();
    [[nodiscard]] std::uint64_t operations_run() const noexcept { return operations_run_; }

private:
    enum class kind { work, record, wait };
    struct operation {
        kind what = kind::work;
        std::function<void()> work;
        int event = 0;
        std::uint64_t generation = 0;
    };
    struct event_state {
        std::uint64_t recorded = 0;
        std::vector<bool> completed{true}; // generation 0: never recorded
    };
    [[nodiscard]] bool complete(int event, std::uint64_t generation) const;
    [[nodiscard]] bool runnable(const std::deque<operation>& queue) const;
    bool run_one(); // false when no stream can make progress
    void run_head(std::deque<operation>& queue);

    std::vector<std::deque<operation>> streams_;
    std::vector<event_state> events_;
    std::mt19937_64 rng_;
    int max_burst_;
    std::uint64_t operations_run_ = 0;
};

/// Faults to inject, to show that the ordering tests can fail.
enum class runtime_fault {
    none,
    user_stream_never_waits,  ///< the user's kernels do not wait for the store's copies
    store_streams_never_wait, ///< the store's copies wait for nothing
};

/// A remat::cuda::device_runtime over a stream_simulator: copies are queued memcpy's, "device" memory
/// is host memory labelled device (so host-space views are foreign host memory, as on a GPU).
struct simulated_runtime {
    using stream_handle = int;
    using event_handle = int;
    static constexpr memory_space device_memory = memory_space::device;

    stream_simulator* sim = nullptr;
    runtime_fault fault = runtime_fault::none;
    int user_stream = 0;             // which stream the faults treat as the user's
    int* live_allocations = nullptr; // optional: counts allocate minus deallocate

    void* allocate(std::size_t bytes);
    void deallocate(void* p, std::size_t bytes) noexcept;
    int create_stream() { return sim->create_stream(); }
    void destroy_stream(int) noexcept {}
    int create_event() { return sim->create_event(); }
    void destroy_event(int) noexcept {}
    void copy(void* dst, memory_space, const void* src, memory_space, std::size_t size, int stream);
    void record(int event, int stream);
    void wait(int stream, int event);
    void synchronize(int event) { sim->synchronize(event); }
    void synchronize_stream(int stream) { sim->synchronize_stream(stream); }
    [[nodiscard]] bool ready(int event) const { return sim->ready(event); }
};

static_assert(cuda::device_runtime<simulated_runtime>);

} // namespace remat::test
