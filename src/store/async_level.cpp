// The asynchronous level: a FIFO of jobs served by one worker thread, staging buffers with explicit
// states, and the caller's bookkeeping of what each slot will hold once the queue has run.
//
// Buffer states:  free -> queued_write -> writing -> ready|free   (a write, then cached; or skipped)
//                 free -> reading -> ready -> free                 (a prefetch; freed when its slot is
//                                                                  freed or the buffer is evicted)
// Only the calling thread takes free buffers; only the worker moves queued_write/writing/reading on.
// A buffer's bytes are read or written outside the lock only in a state that pins its owner.
#include "remat/store/async_level.hpp"

#include "remat/error.hpp"
#include "remat/store/detail/describe_snapshot.hpp"
#include "remat/store/detail/slot_checks.hpp"
#include "remat/store/detail/store_capacity.hpp"

#include <algorithm>
#include <chrono>
#include <optional>
#include <ranges>
#include <string>
#include <utility>

namespace remat {
namespace {

// A page: a disk level that moves bytes with O_DIRECT (hdf5_store) takes a staging buffer so aligned straight,
// without copying it through pieces of its own (1 MiB reads: 0.96 against 1.12 ms, medians of 300, in two
// runs of three; docs/stress.md).
constexpr std::size_t staging_alignment = 4096;
using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point start)
{
    return std::chrono::duration<double>(clock_type::now() - start).count();
}

// Runs `transfer` on the level with the engine's lock released (the level has a lock of its own) and
// returns its failure, if any, with the engine's lock held again.
template <class Transfer>
std::exception_ptr unlocked_on_level(std::unique_lock<std::mutex>& lock, std::mutex& level_mutex, Transfer&& transfer)
{
    lock.unlock();
    std::exception_ptr failure;
    try {
        std::scoped_lock level_lock(level_mutex);
        transfer();
    } catch (...) {
        failure = std::current_exception();
    }
    lock.lock();
    return failure;
}

} // namespace

async_level::async_level(std::unique_ptr<detail::level_interface> level, async_options options, byte_copier copy,
                         bool level_waits)
    : level_(std::move(level)), options_(options), copy_(copy), level_waits_(level_waits)
{
    if (!level_)
        throw argument_error("async_level needs a level");
    if (options_.staging_buffers == 0)
        throw argument_error("async_level needs at least 1 staging buffer, got 0");
    if (options_.staging_memory == nullptr || copy_.target() == nullptr)
        throw argument_error("async_level options need a staging memory resource and a copy function");
    capacity_ = level_->capacity();
    name_ = level_->stats().name;
    counts_ = level_accounting(name_);
    buffers_.resize(options_.staging_buffers);
    queue_.resize(2 * options_.staging_buffers + 8);
    worker_ = std::thread([this] { worker_loop(); });
}

async_level::~async_level()
{
    {
        std::unique_lock lock(mutex_);
        push(job{job_kind::stop});
    }
    changed_.notify_all();
    worker_.join();
    for (buffer& b : buffers_)
        if (b.data != nullptr)
            options_.staging_memory->deallocate(b.data, b.allocated, staging_alignment);
}

// --- the worker ------------------------------------------------------------------------------------

void async_level::worker_loop()
{
    std::unique_lock lock(mutex_);
    for (;;) {
        changed_.wait(lock, [&] { return queue_size_ > 0; });
        const job j = queue_[queue_head_];
        queue_head_ = (queue_head_ + 1) % queue_.size();
        --queue_size_;
        if (j.kind == job_kind::stop)
            return;
        busy_ = true;
        run_job(j, lock);
        busy_ = false;
        changed_.notify_all();
    }
}

void async_level::run_job(const job& j, std::unique_lock<std::mutex>& lock)
{
    std::exception_ptr failure;
    const auto start = clock_type::now();
    if (j.kind == job_kind::write) {
        buffer& b = buffers_[static_cast<std::size_t>(j.buffer)];
        if (b.cancelled) { // freed before we got to it: nothing to write, nothing to release
            ++skipped_writes_;
            free_buffer(j.buffer);
            return;
        }
        b.state = buffer_state::writing;
        // The parts one after the other in the buffer, as the caller gave them.
        const std::span<const std::size_t> sizes = b.parts.sizes();
        if (worker_out_.size() < sizes.size())
            worker_out_.resize(sizes.size());
        for (std::size_t i = 0, at = 0; i < sizes.size(); at += sizes[i++])
            worker_out_[i] = const_bytes{b.data + at, sizes[i], memory_space::host};
        const const_parts out(worker_out_.data(), sizes.size());
        failure = unlocked_on_level(lock, level_mutex_, [&] { level_->write(j.slot, j.step, out); });
        if (failure && !failure_)
            failure_ = failure;
        bool cached = false;
        if (slot_info* s = find(j.slot); s != nullptr && s->staged == j.buffer) {
            s->staged = -1;
            if (failure) {
                s->failed = failure;
            } else if (s->prefetched < 0) {
                // Keep the written bytes as the slot's cache: a snapshot is often restored soon after it
                // is stored, before any hint could have asked for it.
                s->prefetched = j.buffer;
                b.state = buffer_state::ready;
                b.last_use = ++uses_;
                cached = true;
            }
        }
        if (!cached)
            free_buffer(j.buffer);
    } else if (j.kind == job_kind::read) {
        mutable_parts target = j.direct;
        if (j.buffer >= 0) {
            const buffer& b = buffers_[static_cast<std::size_t>(j.buffer)];
            const std::span<const std::size_t> sizes = b.parts.sizes();
            if (worker_in_.size() < sizes.size())
                worker_in_.resize(sizes.size());
            for (std::size_t i = 0, at = 0; i < sizes.size(); at += sizes[i++])
                worker_in_[i] = mutable_bytes{b.data + at, sizes[i], memory_space::host};
            target = mutable_parts(worker_in_.data(), sizes.size());
        }
        failure = unlocked_on_level(lock, level_mutex_, [&] { level_->read(j.slot, j.step, target); });
        if (j.buffer < 0) {
            demand_failure_ = failure;
            demand_done_ = true;
        } else {
            buffer& b = buffers_[static_cast<std::size_t>(j.buffer)];
            b.failure = failure;
            if (b.discard)
                free_buffer(j.buffer);
            else
                b.state = buffer_state::ready;
        }
    } else if (j.kind == job_kind::release) {
        failure = unlocked_on_level(lock, level_mutex_, [&] { level_->release(j.slot); });
        if (failure && !failure_)
            failure_ = failure;
    }
    busy_seconds_ += seconds_since(start);
}

// --- helpers (called with the lock held) ------------------------------------------------------------

void async_level::push(const job& j)
{
    if (queue_size_ == queue_.size()) { // grow the ring, keeping the order
        std::vector<job> larger(queue_.size() * 2);
        for (std::size_t i = 0; i < queue_size_; ++i)
            larger[i] = queue_[(queue_head_ + i) % queue_.size()];
        queue_ = std::move(larger);
        queue_head_ = 0;
    }
    queue_[(queue_head_ + queue_size_) % queue_.size()] = j;
    ++queue_size_;
    changed_.notify_all();
}

void async_level::wait(std::unique_lock<std::mutex>& lock, auto&& ready)
{
    if (ready())
        return;
    const auto start = clock_type::now();
    changed_.wait(lock, ready);
    counts_.waited(seconds_since(start));
}

int async_level::free_or_evictable() noexcept
{
    int oldest = -1;
    for (std::size_t i = 0; i < buffers_.size(); ++i) {
        const buffer& b = buffers_[i];
        if (b.state == buffer_state::free)
            return static_cast<int>(i);
        if (b.state == buffer_state::ready &&
            (oldest < 0 || b.last_use < buffers_[static_cast<std::size_t>(oldest)].last_use))
            oldest = static_cast<int>(i);
    }
    return oldest;
}

int async_level::acquire_buffer(std::unique_lock<std::mutex>& lock, std::size_t size)
{
    // A free buffer, or else the least recently used ready one (a prefetch or cached restore: its next
    // restore will read again). Writes and reads in flight finish by themselves, so this cannot deadlock.
    int chosen = -1;
    wait(lock, [&] { return (chosen = free_or_evictable()) >= 0; });
    buffer& b = buffers_[static_cast<std::size_t>(chosen)];
    if (slot_info* s = find(b.slot); b.state == buffer_state::ready && s != nullptr && s->prefetched == chosen)
        s->prefetched = -1;
    if (b.allocated < size) {
        void* fresh = options_.staging_memory->allocate(size, staging_alignment);
        if (b.data != nullptr)
            options_.staging_memory->deallocate(b.data, b.allocated, staging_alignment);
        b.data = static_cast<std::byte*>(fresh);
        b.allocated = size;
    }
    b.size = size;
    b.cancelled = false;
    b.discard = false;
    b.failure = nullptr;
    b.last_use = ++uses_;
    b.state = buffer_state::queued_write; // claimed: the worker ignores it until a job names it
    return chosen;
}

void async_level::free_buffer(int index)
{
    buffer& b = buffers_[static_cast<std::size_t>(index)];
    b.state = buffer_state::free;
    b.slot = -1;
    b.step = -1;
    b.cancelled = false;
    b.discard = false;
    b.failure = nullptr;
}

void async_level::raise_failure(std::unique_lock<std::mutex>&)
{
    if (failure_)
        std::rethrow_exception(std::exchange(failure_, nullptr));
}

async_level::slot_info& async_level::info(slot_t slot)
{
    if (slot < 0 || slot >= capacity_.slots)
        throw schedule_error("slot " + std::to_string(slot) + " is outside level " + name_ + "'s " +
                             detail::describe_slots(capacity_.slots) + " slots");
    if (static_cast<std::size_t>(slot) >= slots_.size())
        detail::grow_slot_table(slots_, slot, name_.c_str());
    return slots_[static_cast<std::size_t>(slot)];
}

async_level::slot_info* async_level::find(slot_t slot) noexcept
{
    return slot >= 0 && static_cast<std::size_t>(slot) < slots_.size() ? &slots_[static_cast<std::size_t>(slot)]
                                                                       : nullptr;
}

const async_level::slot_info* async_level::find(slot_t slot) const noexcept
{
    return const_cast<async_level*>(this)->find(slot);
}

// --- the calling thread ------------------------------------------------------------------------------

void async_level::scatter(mutable_parts dst, const std::byte* from) const
{
    std::size_t at = 0;
    for (const mutable_bytes& p : dst) {
        copy_(p.data, p.space, from + at, memory_space::host, p.size);
        at += p.size;
    }
}

void async_level::write(slot_t slot, step_t step, const_parts parts)
{
    const const_bytes src{nullptr, total_bytes(parts), memory_space::host}; // the whole snapshot, for its size
    std::unique_lock lock(mutex_);
    raise_failure(lock);
    slot_info& s = info(slot);
    detail::require_slot_takes(s.step, step, "store",
                               [&] { return "slot " + std::to_string(slot) + " of level " + name_; });
    if (capacity_.bytes != level_capacity::unlimited_bytes && bytes_in_use_ + src.size > capacity_.bytes)
        throw capacity_error("level " + name_ + "'s " + std::to_string(capacity_.bytes) +
                             "-byte capacity cannot hold another snapshot of " + std::to_string(src.size) + " bytes (" +
                             std::to_string(bytes_in_use_) + " in use)");
    const int b = acquire_buffer(lock, src.size);
    std::byte* data = buffers_[static_cast<std::size_t>(b)].data;
    lock.unlock();
    try {
        std::size_t at = 0;
        for (const const_bytes& p : parts) {
            copy_(data + at, memory_space::host, p.data, p.space, p.size);
            at += p.size;
        }
    } catch (...) {
        lock.lock();
        free_buffer(b);
        changed_.notify_all();
        throw;
    }
    lock.lock();
    buffer& buf = buffers_[static_cast<std::size_t>(b)];
    buf.slot = slot;
    buf.step = step;
    buf.parts.assign(parts);
    s.step = step; // slots_ is resized only by this thread, so `s` still stands
    s.size = src.size;
    s.parts.assign(parts);
    s.staged = b;
    bytes_in_use_ += src.size;
    counts_.wrote(src.size);
    push(job{job_kind::write, slot, step, b});
}

void async_level::read(slot_t slot, step_t step, mutable_parts dst)
{
    std::unique_lock lock(mutex_);
    raise_failure(lock);
    slot_info* found = find(slot);
    if (slot < 0 || slot >= capacity_.slots)
        throw schedule_error("slot " + std::to_string(slot) + " is outside level " + name_ + "'s " +
                             detail::describe_slots(capacity_.slots) + " slots");
    if (found == nullptr || found->step < 0)
        throw schedule_error("restore of x_" + std::to_string(step) + " from slot " + std::to_string(slot) +
                             " of level " + name_ + ", which holds no snapshot");
    if (found->step != step)
        throw integrity_error("slot " + std::to_string(slot) + " of level " + name_ + " holds " +
                              detail::describe_snapshot(found->step) + ", not x_" + std::to_string(step));
    slot_info& s = *found;
    if (s.failed)
        std::rethrow_exception(s.failed);
    if (const std::optional<std::string> why = detail::part_mismatch(s.parts.sizes(), dst, step))
        throw integrity_error("slot " + std::to_string(slot) + " of level " + name_ + " holds " + *why);
    const std::size_t size = s.size;
    if (s.staged >= 0) {
        // Still in staging (queued or being written): read it from there. The buffer's bytes stay put
        // until this thread hands the buffer out again, so the copy may run unlocked.
        const std::byte* data = buffers_[static_cast<std::size_t>(s.staged)].data;
        ++staging_hits_;
        lock.unlock();
        scatter(dst, data);
        counts_.read(size);
        return;
    }
    if (s.prefetched >= 0) {
        const int p = s.prefetched;
        wait(lock, [&] { return buffers_[static_cast<std::size_t>(p)].state == buffer_state::ready; });
        buffer& b = buffers_[static_cast<std::size_t>(p)];
        if (b.failure) {
            const std::exception_ptr e = b.failure;
            s.prefetched = -1;
            free_buffer(p);
            changed_.notify_all();
            std::rethrow_exception(e);
        }
        // The buffer stays attached as a cache: checkpoints are restored again and again. A ready
        // buffer is only reused by this thread, so its bytes cannot change during the unlocked copy.
        ++cache_hits_;
        b.last_use = ++uses_;
        const std::byte* data = b.data;
        lock.unlock();
        scatter(dst, data);
        counts_.read(size);
        return;
    }
    ++demand_reads_;
    if (std::ranges::all_of(dst, [](const mutable_bytes& p) { return p.space == memory_space::host; })) {
        // straight into the caller's memory
        demand_done_ = false;
        demand_failure_ = nullptr;
        push(job{job_kind::read, slot, step, -1, dst});
        wait(lock, [&] { return demand_done_; });
        if (demand_failure_)
            std::rethrow_exception(std::exchange(demand_failure_, nullptr));
        counts_.read(size);
        return;
    }
    const int p = acquire_buffer(lock, size);
    buffer& b = buffers_[static_cast<std::size_t>(p)];
    b.state = buffer_state::reading;
    b.slot = slot;
    b.step = step;
    b.parts.assign(s.parts.sizes());
    push(job{job_kind::read, slot, step, p});
    wait(lock, [&] { return buffers_[static_cast<std::size_t>(p)].state == buffer_state::ready; });
    if (buffers_[static_cast<std::size_t>(p)].failure) {
        const std::exception_ptr e = buffers_[static_cast<std::size_t>(p)].failure;
        free_buffer(p);
        std::rethrow_exception(e);
    }
    const std::byte* data = buffers_[static_cast<std::size_t>(p)].data;
    lock.unlock();
    scatter(dst, data);
    lock.lock();
    free_buffer(p);
    changed_.notify_all();
    counts_.read(size);
}

void async_level::prefetch(slot_t slot, step_t step)
{
    std::unique_lock lock(mutex_);
    slot_info* found = find(slot);
    if (failure_ || found == nullptr)
        return;
    slot_info& s = *found;
    if (s.step != step || s.staged >= 0 || s.prefetched >= 0)
        return; // not (yet) on the level, or already coming
    if (free_or_evictable() < 0)
        return; // a hint never waits
    const int p = acquire_buffer(lock, s.size);
    buffer& b = buffers_[static_cast<std::size_t>(p)];
    b.state = buffer_state::reading;
    b.slot = slot;
    b.step = step;
    b.parts.assign(s.parts.sizes());
    s.prefetched = p;
    ++prefetches_;
    push(job{job_kind::read, slot, step, p});
}

void async_level::release(slot_t slot)
{
    std::unique_lock lock(mutex_);
    raise_failure(lock);
    slot_info* found = find(slot);
    if (found == nullptr || found->step < 0)
        throw schedule_error("free of slot " + std::to_string(slot) + " of level " + name_ +
                             ", which holds no snapshot");
    slot_info& s = *found;
    if (s.prefetched >= 0) {
        buffer& p = buffers_[static_cast<std::size_t>(s.prefetched)];
        if (p.state == buffer_state::ready)
            free_buffer(s.prefetched);
        else
            p.discard = true;
        s.prefetched = -1;
    }
    bool on_level = true;
    if (s.staged >= 0) {
        buffer& b = buffers_[static_cast<std::size_t>(s.staged)];
        if (b.state == buffer_state::queued_write) {
            b.cancelled = true; // the worker skips it, and the level never sees this snapshot
            on_level = false;
        }
        s.staged = -1;
    }
    bytes_in_use_ -= std::min(bytes_in_use_, static_cast<std::uint64_t>(s.size));
    counts_.released(s.size);
    if (s.failed) // the level never got it
        on_level = false;
    s = slot_info{};
    if (on_level)
        push(job{job_kind::release, slot});
    changed_.notify_all();
}

void async_level::release_all() noexcept
{
    std::unique_lock lock(mutex_);
    for (buffer& b : buffers_)
        if (b.state == buffer_state::queued_write)
            b.cancelled = true;
        else if (b.state == buffer_state::reading)
            b.discard = true;
    changed_.wait(lock, [&] { return queue_size_ == 0 && !busy_; });
    {
        // The worker is idle and the queue empty: this thread may touch the level.
        std::scoped_lock level_lock(level_mutex_);
        level_->release_all();
    }
    for (std::size_t i = 0; i < buffers_.size(); ++i)
        free_buffer(static_cast<int>(i));
    for (slot_info& s : slots_)
        s = slot_info{};
    bytes_in_use_ = 0;
    counts_.released_all();
    failure_ = nullptr;
    demand_failure_ = nullptr;
    changed_.notify_all();
}

void async_level::flush()
{
    std::unique_lock lock(mutex_);
    wait(lock, [&] { return queue_size_ == 0 && !busy_; });
    raise_failure(lock);
}

void async_level::adopt(slot_t slot, step_t step, std::size_t size)
{
    std::scoped_lock lock(mutex_);
    slot_info& s = info(slot);
    if (s.step >= 0)
        throw schedule_error("cannot adopt x_" + std::to_string(step) + " into slot " + std::to_string(slot) +
                             " of level " + name_ + ", which holds x_" + std::to_string(s.step));
    s.step = step;
    s.size = size;
    {
        // The level knows how its snapshot was split (a resumed file records its parts).
        std::scoped_lock level_lock(level_mutex_);
        const std::span<const std::size_t> held = level_->part_sizes(slot);
        std::size_t total = 0;
        for (const std::size_t n : held)
            total += n;
        if (!held.empty() && total == size)
            s.parts.assign(held);
        else
            s.parts.assign_single(size);
    }
    bytes_in_use_ += size;
    counts_.holds(size);
}

std::span<const std::size_t> async_level::part_sizes(slot_t slot) const
{
    std::scoped_lock lock(mutex_);
    const slot_info* s = find(slot);
    return s != nullptr && s->step >= 0 ? s->parts.sizes() : std::span<const std::size_t>{};
}

std::size_t async_level::snapshot_bytes(slot_t slot) const
{
    std::scoped_lock lock(mutex_);
    const slot_info* s = find(slot);
    return s != nullptr && s->step >= 0 ? s->size : 0;
}

level_stats async_level::stats() const
{
    // The level as the caller sees it: what it handed over, held and waited for; the wrapped level's own
    // stats count what reached it. Its transfers run on the worker, so their time not waited for was
    // hidden behind the caller's compute.
    std::scoped_lock lock(mutex_);
    level_stats s = counts_.stats();
    s.overlapped_seconds = std::max(0.0, busy_seconds_ - s.wait_seconds);
    return s;
}

void async_level::restart_peaks() noexcept
{
    counts_.restart_peaks();
}

async_counters async_level::counters() const
{
    std::scoped_lock lock(mutex_);
    return {staging_hits_,
            cache_hits_,
            demand_reads_,
            prefetches_,
            skipped_writes_,
            busy_seconds_,
            counts_.stats().wait_seconds};
}

} // namespace remat
