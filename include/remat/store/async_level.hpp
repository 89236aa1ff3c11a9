// remat/store/async_level.hpp — a slow storage level behind a worker thread: write-behind and read-ahead.
//
// The calling thread never touches the wrapped level (but for its wait_for_user, which storage_level lets
// run beside transfers); one worker thread does, in the order the calls were made. A write copies the snapshot into a
// staging buffer and returns; the worker writes it to the level. A prefetch starts reading a snapshot into a staging
// buffer; the restore that follows takes it from there (or from a write still in staging) and waits only when the data
// is not ready. A snapshot freed before the worker reached its write is never written at all.
//
// A written or prefetched snapshot stays in its buffer afterwards, as a cache for the next restores of
// the same checkpoint, until the slot is freed or the buffer is needed (least recently used first).
//
// A failure on the worker (disk full, I/O error) is raised once on the calling thread, at its next call
// on this level, and again by any read of the snapshot it lost; snapshots written before it stay
// readable. Used by remat::tiered_store; one calling
// thread at a time.
#pragma once

#include "remat/store/detail/level_interface.hpp"
#include "remat/store/detail/part_layout.hpp"
#include "remat/store/level_accounting.hpp"
#include "remat/store/snapshot_store.hpp"
#include "remat/store/snapshot_view.hpp"
#include "remat/store/store_stats.hpp"
#include "remat/types.hpp"

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <memory_resource>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

namespace remat {

/// Options of an asynchronous level.
struct async_options {
    /// Staging buffers of one snapshot each, in host memory: writes in flight, prefetched and cached
    /// snapshots. More hide more transfer time (bench/tiered_overlap) at that many snapshots of RAM.
    std::size_t staging_buffers = 8;
    /// Memory for the staging buffers (pinned memory lets device states be staged by DMA).
    std::pmr::memory_resource* staging_memory = std::pmr::new_delete_resource();
};

/// What the asynchronous engine did, for tests and tuning.
struct async_counters {
    std::uint64_t staging_hits = 0;   ///< restores served from a write still in staging
    std::uint64_t cache_hits = 0;     ///< restores served from a ready buffer (prefetched, or kept after its write)
    std::uint64_t demand_reads = 0;   ///< restores that had to read the level on demand
    std::uint64_t prefetches = 0;     ///< reads started by the driver's hints
    std::uint64_t skipped_writes = 0; ///< snapshots freed before they were written: never written
    double busy_seconds = 0;          ///< worker time in the level's transfers
    double wait_seconds = 0;          ///< caller time blocked on this level
};

/// A level whose transfers run on a worker thread (see the header comment).
///
///     remat::host_store slow(100);   // stands in for a disk level
///     remat::async_level disk(std::make_unique<remat::detail::level_adapter<remat::host_store>>(slow), {});
///
/// `copy` moves bytes between the caller's views and the staging buffers (tiered_store gives it the
/// store's copier). `level_waits`: wait_for_user() asks the wrapped level as well as `copy` (a device
/// level waits for its user stream); tiered_store passes false for a level whose wait is its copier's,
/// which is `copy`'s.
class async_level final : public detail::level_interface {
public:
    async_level(std::unique_ptr<detail::level_interface> level, async_options options, byte_copier copy = host_copy,
                bool level_waits = true);
    ~async_level() override;
    async_level(const async_level&) = delete;
    async_level& operator=(const async_level&) = delete;

    void write(slot_t slot, step_t step, const_bytes src) override { write(slot, step, const_parts(&src, 1)); }
    void read(slot_t slot, step_t step, mutable_bytes dst) override { read(slot, step, mutable_parts(&dst, 1)); }
    /// Gathers the parts into a staging buffer (device parts through the copier) and returns; the
    /// worker writes them to the level as the same parts.
    void write(slot_t slot, step_t step, const_parts src) override;
    /// Scatters x_step into the parts, from staging or from the level; integrity_error naming the part
    /// and both sizes when they do not match those written.
    void read(slot_t slot, step_t step, mutable_parts dst) override;
    [[nodiscard]] std::span<const std::size_t> part_sizes(slot_t slot) const override;
    void release(slot_t slot) override;
    void release_all() noexcept override;
    void prefetch(slot_t slot, step_t step) override;
    /// Waits until every queued transfer has reached the level; raises a pending failure.
    void flush() override;
    /// The wrapped level already holds x_step in `slot` (a resumed run): reads of it go to the level.
    /// Throws schedule_error when this engine has the slot in use.
    void adopt(slot_t slot, step_t step, std::size_t size) override;
    [[nodiscard]] std::size_t snapshot_bytes(slot_t slot) const override;
    [[nodiscard]] level_capacity capacity() const override { return capacity_; }
    /// The level as the caller sees it: the snapshots handed to it (those freed before the worker wrote
    /// them included: counters().skipped_writes), held and read, the time the caller waited and the
    /// transfer time overlapped. The wrapped level's own stats() count what reached it.
    [[nodiscard]] level_stats stats() const override;
    void restart_peaks() noexcept override;
    /// Waits for the user's work that the staging copies are ordered after (the copier's stream) and, with
    /// `level_waits`, that the wrapped level's copies are (a device level's user stream): called on the
    /// calling thread while the worker may be in a transfer (storage_level allows it), so that the user's
    /// GPU time is the step's, never the worker's nor a wait of the caller's.
    void wait_for_user() override
    {
        copy_.wait_for_user();
        if (level_waits_)
            level_->wait_for_user();
    }
    [[nodiscard]] async_counters counters() const;

private:
    enum class buffer_state { free, queued_write, writing, reading, ready };
    enum class job_kind { write, read, release, stop };
    struct buffer {
        std::byte* data = nullptr;
        std::size_t allocated = 0;
        std::size_t size = 0;
        buffer_state state = buffer_state::free;
        slot_t slot = -1;
        step_t step = -1;
        bool cancelled = false;     // a queued write whose slot was freed: skip it
        bool discard = false;       // a read nobody wants any more: free it when done
        std::exception_ptr failure; // a failed read, raised when consumed
        std::uint64_t last_use = 0; // for evicting the least recently used ready buffer
        detail::part_layout parts;  // the sizes of the snapshot's parts, one after the other in data
    };
    struct slot_info {
        step_t step = -1; // the snapshot the slot holds once every queued job has run; -1 empty
        std::size_t size = 0;
        int staged = -1;           // buffer holding the slot's write (queued or in progress)
        int prefetched = -1;       // buffer holding (or receiving) a read of the slot
        std::exception_ptr failed; // its write failed: reading it raises that failure
        detail::part_layout parts; // the sizes of its parts
    };
    struct job {
        job_kind kind = job_kind::stop;
        slot_t slot = -1;
        step_t step = -1;
        int buffer = -1;
        mutable_parts direct{}; // a demand read straight into the caller's host memory (it waits)
    };

    void worker_loop();
    void run_job(const job& j, std::unique_lock<std::mutex>& lock);
    void push(const job& j);
    int acquire_buffer(std::unique_lock<std::mutex>& lock, std::size_t size);
    int free_or_evictable() noexcept;
    void free_buffer(int index);
    void raise_failure(std::unique_lock<std::mutex>& lock);
    slot_info& info(slot_t slot);
    /// The slot's record, or null for a slot this level has never seen (or a negative one).
    [[nodiscard]] slot_info* find(slot_t slot) noexcept;
    [[nodiscard]] const slot_info* find(slot_t slot) const noexcept;
    void wait(std::unique_lock<std::mutex>& lock, auto&& ready);
    void scatter(mutable_parts dst, const std::byte* from) const;

    std::unique_ptr<detail::level_interface> level_;
    async_options options_;
    byte_copier copy_;
    bool level_waits_;
    level_capacity capacity_;
    std::string name_;

    mutable std::mutex mutex_;       // the bookkeeping below
    mutable std::mutex level_mutex_; // the wrapped level: the worker, or the caller when the worker idles
    std::condition_variable changed_;
    std::vector<buffer> buffers_;
    std::vector<slot_info> slots_;
    std::vector<job> queue_; // a ring, grown when full
    std::size_t queue_head_ = 0;
    std::size_t queue_size_ = 0;
    bool busy_ = false;
    std::exception_ptr failure_; // the first failed write or release, raised at the next call
    bool demand_done_ = false;
    std::exception_ptr demand_failure_;
    std::uint64_t bytes_in_use_ = 0;
    std::uint64_t uses_ = 0;
    level_accounting counts_; // the calling thread's: only it reports here
    double busy_seconds_ = 0;
    std::uint64_t staging_hits_ = 0;
    std::uint64_t cache_hits_ = 0;
    std::uint64_t prefetches_ = 0;
    std::uint64_t demand_reads_ = 0;
    std::uint64_t skipped_writes_ = 0;
    std::vector<const_bytes> worker_out_;  // the worker's views of a buffer's parts (grow, never shrink)
    std::vector<mutable_bytes> worker_in_; //   so that no transfer allocates
    std::thread worker_;
};

} // namespace remat
