#include "stream_simulator.hpp"

#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

namespace remat::test {

stream_simulator::stream_simulator(std::uint64_t seed, int max_burst) : rng_(seed), max_burst_(max_burst)
{
    streams_.emplace_back(); // stream 0: the default stream
    events_.emplace_back();  // event 0: never recorded
}

int stream_simulator::create_stream()
{
    streams_.emplace_back();
    return static_cast<int>(streams_.size() - 1);
}

int stream_simulator::create_event()
{
    events_.emplace_back();
    return static_cast<int>(events_.size() - 1);
}

void stream_simulator::enqueue(int stream, std::function<void()> work)
{
    streams_.at(static_cast<std::size_t>(stream)).push_back({kind::work, std::move(work), 0, 0});
}

void stream_simulator::record(int event, int stream)
{
    event_state& e = events_.at(static_cast<std::size_t>(event));
    ++e.recorded;
    e.completed.push_back(false);
    streams_.at(static_cast<std::size_t>(stream)).push_back({kind::record, {}, event, e.recorded});
}

void stream_simulator::wait(int stream, int event)
{
    const std::uint64_t generation = events_.at(static_cast<std::size_t>(event)).recorded;
    streams_.at(static_cast<std::size_t>(stream)).push_back({kind::wait, {}, event, generation});
}

bool stream_simulator::complete(int event, std::uint64_t generation) const
{
    return events_[static_cast<std::size_t>(event)].completed[generation];
}

bool stream_simulator::ready(int event) const
{
    return complete(event, events_.at(static_cast<std::size_t>(event)).recorded);
}

bool stream_simulator::runnable(const std::deque<operation>& queue) const
{
    return !queue.empty() &&
           (queue.front().what != kind::wait || complete(queue.front().event, queue.front().generation));
}

void stream_simulator::run_head(std::deque<operation>& queue)
{
    operation op = std::move(queue.front());
    queue.pop_front();
    if (op.what == kind::work)
        op.work();
    else if (op.what == kind::record)
        events_[static_cast<std::size_t>(op.event)].completed[op.generation] = true;
    ++operations_run_;
}

bool stream_simulator::run_one()
{
    std::vector<std::size_t> candidates;
    for (std::size_t s = 0; s < streams_.size(); ++s)
        if (runnable(streams_[s]))
            candidates.push_back(s);
    if (candidates.empty())
        return false;
    std::uniform_int_distribution<std::size_t> pick(0, candidates.size() - 1);
    run_head(streams_[candidates[pick(rng_)]]);
    return true;
}

void stream_simulator::progress()
{
    std::uniform_int_distribution<int> burst(0, max_burst_);
    for (int n = burst(rng_); n > 0 && run_one(); --n) {
    }
}

void stream_simulator::synchronize(int event)
{
    const std::uint64_t generation = events_.at(static_cast<std::size_t>(event)).recorded;
    while (!complete(event, generation))
        if (!run_one())
            throw std::logic_error("stream simulator: deadlock waiting for event " + std::to_string(event));
}

void stream_simulator::synchronize_stream(int stream)
{
    const auto& queue = streams_.at(static_cast<std::size_t>(stream));
    while (!queue.empty())
        if (!run_one())
            throw std::logic_error("stream simulator: deadlock draining stream " + std::to_string(stream));
}

void stream_simulator::drain()
{
    while (run_one()) {
    }
    for (const auto& queue : streams_)
        if (!queue.empty())
            throw std::logic_error("stream simulator: deadlock: work left that can never run");
}

void* simulated_runtime::allocate(std::size_t bytes)
{
    if (live_allocations != nullptr)
        ++*live_allocations;
    return ::operator new(bytes, std::align_val_t{256});
}

void simulated_runtime::deallocate(void* p, std::size_t) noexcept
{
    if (live_allocations != nullptr)
        --*live_allocations;
    ::operator delete(p, std::align_val_t{256});
}

void simulated_runtime::copy(void* dst, memory_space, const void* src, memory_space, std::size_t size, int stream)
{
    sim->enqueue(stream, [dst, src, size] {
        if (size != 0)
            std::memcpy(dst, src, size);
    });
    sim->progress();
}

void simulated_runtime::record(int event, int stream)
{
    sim->record(event, stream);
    sim->progress();
}

void simulated_runtime::wait(int stream, int event)
{
    const bool user = stream == user_stream;
    if ((fault == runtime_fault::user_stream_never_waits && user) ||
        (fault == runtime_fault::store_streams_never_wait && !user))
        return;
    sim->wait(stream, event);
    sim->progress();
}

} // namespace remat::test
