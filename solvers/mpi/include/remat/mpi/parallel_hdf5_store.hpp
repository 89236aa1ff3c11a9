// remat/mpi/parallel_hdf5_store.hpp — the parallel HDF5 level: one file for the whole job, one dataset per
// snapshot, each rank writing and reading its own hyperslab with collective MPI-IO (target remat::mpi_hdf5,
// built on the MPI build of HDF5, libhdf5-openmpi-dev; <hdf5.h> stays private to it).
//
// Every call except release, release_all and the queries is collective: every rank calls it with the same
// slot and step (they run the same schedule). Before any collective HDF5 call the ranks agree on what they
// were asked and whether each could do it, and after each phase whether it worked everywhere, so an error
// on one rank (a slot outside the capacity, a part of the wrong size, a full disk, a bad checksum) throws
// the same exception on every rank, naming the ranks that failed, and no rank is left waiting. The file
// records the decomposition (ranks, each rank's offset and size); a file written by another decomposition
// is refused. docs/mpi.md describes the layout and the guarantees.
#pragma once

#include <remat/store/snapshot_view.hpp>
#include <remat/store/storage_level.hpp>
#include <remat/store/store_stats.hpp>
#include <remat/types.hpp>

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <vector>

namespace remat::mpi {

/// One rank's part of every snapshot in the file: bytes [offset, offset + bytes) of each dataset.
struct part_extent {
    std::uint64_t offset = 0;
    std::uint64_t bytes = 0;
    friend bool operator==(const part_extent&, const part_extent&) = default;
};

/// A storage level ("parallel disk") in one HDF5 file shared by all ranks of `comm`.
///
///     remat::mpi::parallel_hdf5_store disk(MPI_COMM_WORLD, "/scratch/run.h5", 64, u.size() * sizeof(double));
///     remat::mpi::run(MPI_COMM_WORLD, remat::revolve(T, 64), disk, u, remat::forward_step(f), remat::adjoint_step(g));
class parallel_hdf5_store {
public:
    enum class open_mode {
        /// Start empty: create the file, or replace a remat parallel snapshot file (never anything else).
        replace,
        /// Open an existing file written by the same decomposition and keep its complete snapshots.
        resume,
    };
    struct options {
        open_mode mode = open_mode::replace;
        /// true: write() returns once the snapshot is on stable storage (MPI_File_sync through H5Fflush).
        bool durable_writes = true;
        /// Level name in reports.
        const char* name = "parallel disk";
    };

    /// Collective: opens or creates `file` with `slots` slots, this rank's part of every snapshot being
    /// `part_bytes` (parts may differ between ranks). Throws argument_error (no slot, a part of 0 bytes, ranks
    /// disagreeing on the slots or the path; a resumed file of another decomposition, naming the ranks whose
    /// parts differ), io_error (cannot create or open; a file that is not a remat parallel snapshot file is
    /// never replaced), integrity_error (a damaged or foreign file on resume) — the same on every rank.
    parallel_hdf5_store(MPI_Comm comm, std::filesystem::path file, slot_t slots, std::uint64_t part_bytes,
                        options opts);
    parallel_hdf5_store(MPI_Comm comm, std::filesystem::path file, slot_t slots, std::uint64_t part_bytes);
    /// Collective: closes the file (errors cannot be reported here; call close() to see them).
    ~parallel_hdf5_store();
    parallel_hdf5_store(const parallel_hdf5_store&) = delete;
    parallel_hdf5_store& operator=(const parallel_hdf5_store&) = delete;

    static constexpr bool prefetches = false;

    /// The slots given at construction (bytes: this rank's part per slot).
    [[nodiscard]] level_capacity capacity() const noexcept;
    /// Collective: writes this rank's part of x_step into `slot` (its hyperslab of the slot's dataset),
    /// then records the step, every rank's XXH64 and the state "complete". Throws schedule_error (slot
    /// outside the capacity or in use), argument_error (src not this rank's part size or not in host
    /// memory), io_error (a failed write: the slot is then empty and the file consistent).
    void write(slot_t slot, step_t step, const_bytes src) { write(slot, step, const_parts(&src, 1)); }
    /// Collective: reads this rank's part of x_step from `slot`, checking the record (complete, slot, step,
    /// sizes, its own checksum) and the bytes against this rank's checksum. integrity_error on every rank,
    /// naming the ranks whose part failed and why (also for a slot whose record a resumed file found
    /// damaged or interrupted, as hdf5_store does); schedule_error for a slot outside the capacity or
    /// holding no snapshot, argument_error for a state in device memory.
    void read(slot_t slot, step_t step, mutable_bytes dst) { read(slot, step, mutable_parts(&dst, 1)); }
    /// Collective: a state of several parts (a solver's field plus a few scalars), gathered one after the
    /// other into this rank's hyperslab with no staging copy (one collective write per part; ranks may
    /// have different numbers of parts). The record keeps every rank's part sizes (attributes part_counts
    /// and part_bytes, under record_checksum). The parts' sizes must add up to this rank's part; throws as
    /// the single-view write does.
    ///
    ///     std::array<remat::const_bytes, 2> state{remat::host_bytes(std::as_bytes(std::span(u))),
    ///                                             remat::host_bytes(std::as_bytes(std::span(&t, 1)))};
    ///     disk.write(3, 17, remat::const_parts(state));
    void write(slot_t slot, step_t step, const_parts src);
    /// Collective: scatters this rank's part of x_step back into the parts; integrity_error on every rank
    /// naming the rank, the part and both sizes when they do not match those written.
    void read(slot_t slot, step_t step, mutable_parts dst);
    /// This rank's part sizes in `slot` (one for a single view; empty when it holds no snapshot).
    [[nodiscard]] std::span<const std::size_t> part_sizes(slot_t slot) const;
    /// The slot may be written again (local; every rank releases the same slots).
    void release(slot_t slot);
    void release_all() noexcept;
    /// Bytes of this rank's part of the snapshot in `slot`, 0 when it holds none.
    [[nodiscard]] std::size_t snapshot_bytes(slot_t slot) const;
    /// The step whose snapshot `slot` holds (complete), or -1.
    [[nodiscard]] step_t snapshot_step(slot_t slot) const;
    [[nodiscard]] const level_stats& stats() const noexcept;
    /// The peaks count from what this rank's level holds now (the driver calls it as a run starts).
    void restart_peaks() noexcept;
    /// Every rank's part, rank 0 first.
    [[nodiscard]] const std::vector<part_extent>& decomposition() const noexcept;
    /// Collective: makes everything written durable.
    void flush();
    /// Collective: flushes and closes the file, reporting failures (io_error on every rank).
    void close();
    [[nodiscard]] const std::filesystem::path& path() const noexcept;

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

static_assert(gathering_level<parallel_hdf5_store>);

} // namespace remat::mpi
