// remat/hdf5/hdf5_store.hpp — snapshots in an HDF5 file: the disk level, the level of last resort.
//
// One file per store; each snapshot is a dataset /snapshots/slot_NNNNNN with attributes (step, bytes,
// element type, schema version, XXH64 checksum, state), readable by h5dump and any HDF5 >= 1.8 program.
// Every read checks the attributes and the checksum, so a corrupt, truncated, foreign or stale file is
// refused with remat::integrity_error naming the file, the dataset and what differs. docs/hdf5.md
// describes the layout and the guarantees:
//
// - A snapshot becomes visible only once complete: its data is written (and, by default, on stable
//   storage) before the attributes that declare it complete; a process killed at any point leaves a file
//   that opens and in which every snapshot completed before reads back correctly.
// - A failed write (disk full, file size limit, I/O error) throws remat::io_error; the snapshots written
//   before stay readable, through the same store and after reopening the file.
// - Durability: write() returns once the snapshot is on stable storage (fdatasync), unless
//   options::durable_writes is false, in which case flush() makes everything written so far durable.
//
// Threads: a store may be used from any thread, one call at a time (the multi-level store's I/O thread
// calls it while the main thread computes). remat serialises all of its own HDF5 calls process-wide with
// one lock (snapshot bytes move outside it), so several stores may be used from several threads; if the
// program also calls HDF5 itself from other threads at the same time, HDF5 must be built thread-safe
// (H5is_library_threadsafe).
#pragma once

#include "remat/store/snapshot_view.hpp"
#include "remat/store/storage_level.hpp"
#include "remat/store/store_stats.hpp"
#include "remat/types.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace remat {

namespace detail {
struct hdf5_store_access;
}

/// The element type a snapshot's dataset is declared with, so that h5dump and other HDF5 readers show
/// numbers rather than bytes. The bytes are stored exactly as given (native byte order).
enum class hdf5_element { uint8, int32, int64, float32, float64 };

/// "uint8", "int32", "int64", "float32" or "float64" — the `element_type` attribute's text.
///
///     remat::to_string(remat::hdf5_element::float64); // "float64"
[[nodiscard]] std::string_view to_string(hdf5_element e) noexcept;
/// Bytes of one element: a snapshot's size must be a multiple of it.
///
///     remat::element_bytes(remat::hdf5_element::float32); // 4
[[nodiscard]] std::size_t element_bytes(hdf5_element e) noexcept;

/// A storage level ("disk") in one HDF5 file. Models remat::storage_level.
///
///     remat::hdf5_store disk("/scratch/run.h5", remat::level_capacity{.slots = 64});
///     remat::run(remat::revolve(T, 64), disk, x, remat::forward_step(forward), remat::adjoint_step(adjoint));
///
///     // after a crash: the complete snapshots are still there
///     remat::hdf5_store again("/scratch/run.h5", remat::level_capacity{.slots = 64},
///                             {.mode = remat::hdf5_store::open_mode::resume});
///     remat::step_t k = again.snapshot_step(3); // -1 when slot 3 holds nothing complete
class hdf5_store {
public:
    /// What happens to a file already at the path.
    enum class open_mode {
        /// Start empty: create the file, or replace a remat snapshot file. A file that is something else
        /// (a foreign HDF5 file, any other non-empty file) is never replaced: io_error.
        replace,
        /// Open an existing remat snapshot file and keep its complete snapshots (slots outside the
        /// capacity are ignored); io_error when the file does not exist.
        resume,
    };
    /// How snapshot bytes move between memory and the file.
    enum class io_path {
        automatic, ///< O_DIRECT where the file system supports it, page-cache I/O elsewhere
        direct,    ///< O_DIRECT or io_error
        buffered,  ///< through the page cache
    };

    struct options {
        open_mode mode = open_mode::replace;
        /// true: write() returns once the snapshot is on stable storage (fdatasync). false: it returns once
        /// the operating system holds it (safe against the process dying, not against power loss) and
        /// flush() makes it durable; about one fdatasync less per snapshot.
        bool durable_writes = true;
        io_path io = io_path::automatic;
        /// 0: contiguous datasets written with direct I/O (fast). 1..9: chunked datasets with the shuffle
        /// and deflate filters at that level, written through HDF5 (much slower; for very compressible
        /// states). Compressed snapshots are rewritten as new datasets, never in place.
        int compression = 0;
        hdf5_element element = hdf5_element::uint8;
        /// Snapshots move with O_DIRECT in pieces of up to this many bytes (rounded to 4096), three at a
        /// time: queued for the disk while the next is copied and checksummed. Memory: three pieces per
        /// store, unless the state's own buffer is 4096-byte aligned, which then moves without a copy.
        std::size_t transfer_bytes = std::size_t{4} << 20;
        /// Copies into and out of host pieces; host_copy unless device states are snapshotted (a
        /// tiered_store hands its own copier to the level instead, see use_copier).
        byte_copier copy = host_copy;
        /// Level name in reports.
        const char* name = "disk";
        /// What wrote the file: which schedule and which state type (remat::run_identity makes one). A new
        /// file records it; in resume mode a non-empty identity must equal the recorded one, or the store
        /// refuses the file (argument_error naming both), so that a resumed run never continues another
        /// run's snapshots. At most 255 bytes.
        std::string run_identity{};
    };

    /// Opens or creates `file`. Throws argument_error for a bad capacity (naming it) or options, io_error when the file
    /// cannot be created or opened, integrity_error when (in resume mode) it is not a readable remat
    /// snapshot file.
    hdf5_store(std::filesystem::path file, level_capacity capacity, options opts);
    hdf5_store(std::filesystem::path file, level_capacity capacity);
    hdf5_store(std::filesystem::path file, slot_t slots);
    /// Closes the file (flushing it); errors at this point cannot be reported and are dropped — call
    /// close() to see them.
    ~hdf5_store();
    hdf5_store(const hdf5_store&) = delete;
    hdf5_store& operator=(const hdf5_store&) = delete;
    hdf5_store(hdf5_store&&) noexcept;
    hdf5_store& operator=(hdf5_store&&) noexcept;

    /// Reads are synchronous: the driver needs no lookahead for this store (an asynchronous multi-level
    /// store reads ahead on its own thread).
    static constexpr bool prefetches = false;

    /// The capacity given at construction.
    [[nodiscard]] level_capacity capacity() const noexcept;
    /// Writes x_step into `slot`. Throws schedule_error (slot outside the capacity, or still holding a
    /// snapshot), capacity_error (bytes over budget), argument_error (bytes not a whole number of elements),
    /// io_error (disk full, I/O error; the slot is then empty and the file still consistent).
    ///
    ///     std::vector<double> x(1 << 20);
    ///     disk.write(3, 1200, remat::host_bytes(std::as_bytes(std::span(x)))); // x_1200 into slot 3
    void write(slot_t slot, step_t step, const_bytes src);
    /// Reads x_step from `slot` into dst, checking the file's record against (slot, step, dst.size) and the
    /// data against its checksum: integrity_error names the file, the dataset and the difference;
    /// schedule_error for a slot outside the capacity or one that holds no snapshot (one the file found
    /// damaged on a resume is integrity_error, naming why).
    ///
    ///     disk.read(3, 1200, remat::host_bytes(std::as_writable_bytes(std::span(x))));
    void read(slot_t slot, step_t step, mutable_bytes dst);
    /// Gathers the parts of a multi-part state, one after the other, into the slot's one dataset (host
    /// parts straight to the disk, device parts through options::copy into the transfer pieces; no
    /// serialisation buffer), recording their sizes (attribute part_bytes) under the record's checksum;
    /// the data checksum covers all parts. Throws as the single-view write does.
    ///
    ///     std::array<remat::const_bytes, 2> hc{remat::host_bytes(std::as_bytes(std::span(h))),
    ///                                          remat::host_bytes(std::as_bytes(std::span(c)))};
    ///     disk.write(3, 1200, remat::const_parts(hc));
    void write(slot_t slot, step_t step, const_parts src);
    /// Scatters x_step back into the parts, checking the record, the part sizes (integrity_error naming the
    /// part and both sizes) and the checksum of all of them.
    void read(slot_t slot, step_t step, mutable_parts dst);
    /// Sizes of the parts the slot holds (one for a single view; empty when it holds none).
    [[nodiscard]] std::span<const std::size_t> part_sizes(slot_t slot) const;
    /// The slot may be written again (schedule_error when it holds nothing). Its bytes stay in the file,
    /// still a valid snapshot, until the slot is written again.
    void release(slot_t slot);
    /// Releases every slot (after a failed run); the file is not touched.
    void release_all() noexcept;
    /// Bytes of the snapshot `slot` holds, 0 when it holds none.
    [[nodiscard]] std::size_t snapshot_bytes(slot_t slot) const;
    /// Counters of the level (named options::name, "disk" by default); wait_seconds is the time spent
    /// in write, read and flush.
    [[nodiscard]] const level_stats& stats() const noexcept;
    /// The peaks count from what the level holds now (the driver calls it as a run starts).
    void restart_peaks() noexcept;
    /// Waits for the user's work on the stream of the copier (a remat::cuda::copier's); nothing for
    /// host_copy. The driver calls it when a user step returns (docs/driver.md, "Accounting").
    void wait_for_user() const;

    /// The step whose snapshot `slot` holds, or -1 when it holds none.
    [[nodiscard]] step_t snapshot_step(slot_t slot) const;
    /// Makes every snapshot written so far durable (needed only with durable_writes = false).
    void flush();
    /// The copier of the store this level is part of (tiered_store calls it): taken when the level has the
    /// default copier or the same one; argument_error when options::copy gave it another one.
    void use_copier(byte_copier copy);
    /// The copier the level copies with.
    [[nodiscard]] byte_copier copier() const noexcept;
    /// Flushes and closes the file now, reporting failures (io_error); afterwards the store holds nothing
    /// and write, read and flush throw argument_error.
    void close();
    /// The snapshot file.
    [[nodiscard]] const std::filesystem::path& path() const noexcept;
    /// Whether snapshots move with O_DIRECT (see io_path).
    [[nodiscard]] bool direct_io() const noexcept;
    /// The run identity the file records ("" when none; see options::run_identity).
    [[nodiscard]] const std::string& run_identity() const noexcept;

private:
    friend struct detail::hdf5_store_access; // test-only fault injection
                                             // (levels/hdf5_internal/include/remat/hdf5_internal/fault_hook.hpp)
    struct impl;
    std::unique_ptr<impl> impl_;
};

static_assert(gathering_level<hdf5_store>);

} // namespace remat
