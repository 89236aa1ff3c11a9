// remat/hdf5/inspect.hpp — what a remat snapshot file holds, and whether it reads back intact.
//
// `remat inspect FILE [--verify]` prints this. Inspection opens the file read-only, through HDF5's own
// dataset reads (not the store's direct I/O path), so it is also an independent check of what a store
// wrote.
#pragma once

#include "remat/types.hpp"

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace remat {

/// The state of one snapshot dataset in a file.
enum class hdf5_snapshot_status {
    complete,    ///< its record is consistent and declares it complete (and, verified, its data matches)
    interrupted, ///< its write was cut short (the process died, the disk filled): never valid
    damaged,     ///< unreadable or inconsistent metadata, or (verified) data that fails its checksum
    superseded,  ///< an older object of a slot that holds a newer one (left by a repaired crash); unused
};

/// "complete", "interrupted", "damaged" or "superseded".
[[nodiscard]] const char* to_string(hdf5_snapshot_status s) noexcept;

/// One dataset under /snapshots.
struct hdf5_snapshot_info {
    std::string dataset;        ///< "/snapshots/slot_000003"
    slot_t slot = -1;           ///< from the record (-1 when unreadable)
    step_t step = -1;           ///< the x_k it holds
    std::uint64_t bytes = 0;    ///< its size
    std::string element_type;   ///< "float64", ...
    std::uint32_t schema = 0;   ///< the layout version it was written with
    std::uint64_t checksum = 0; ///< stored XXH64 of its bytes (all parts, one after the other)
    /// The sizes of its parts, for a snapshot of a multi-part state (empty for one part). In a parallel
    /// file, every rank's, rank 0's first, rank_part_counts saying how many are each rank's.
    std::vector<std::uint64_t> part_bytes;
    /// A parallel file's part count per rank (empty when every rank's state is one part).
    std::vector<std::uint64_t> rank_part_counts;
    hdf5_snapshot_status status = hdf5_snapshot_status::damaged;
    /// A parallel snapshot file's checksums, one per rank's hyperslab (checksum is then rank 0's).
    std::vector<std::uint64_t> rank_checksums;
    bool verified = false; ///< its data was re-read and matched the checksum
    std::string problem;   ///< why it is not complete (or failed verification); "" otherwise
};

/// A remat snapshot file's contents, snapshots in slot order.
struct hdf5_file_contents {
    std::filesystem::path path;
    std::uint32_t schema = 0;
    std::string checksum_algorithm; ///< "xxh64"
    /// "remat snapshot file", or "remat parallel snapshot file" (remat::mpi::parallel_hdf5_store's)
    std::string format = "remat snapshot file";
    /// A parallel file's decomposition: each rank's {offset, bytes} in every snapshot, rank 0 first.
    std::vector<std::pair<std::uint64_t, std::uint64_t>> decomposition;
    std::vector<hdf5_snapshot_info> snapshots;
    /// Slots the file's write intent names: a write into them was in progress (or left them torn) when the
    /// writer stopped, so they hold no committed snapshot; damage in them is listed as interrupted.
    std::vector<slot_t> slots_in_writing;
};

/// Lists the snapshots of `file` (a serial store's or a parallel store's: each rank's part is then verified
/// against its own checksum); with `verify`, re-reads every complete one and checks its checksum
/// (a mismatch makes it damaged, with the problem named). Objects a store set aside (a damaged header it
/// could not delete after a crash, replaced by a newer generation) are listed as superseded. Torn metadata in a
/// slot the file's write intent names (a writer killed inside an HDF5 flush) is listed as interrupted. Throws io_error
/// when the file is missing or unreadable, integrity_error when it is not HDF5, not a remat snapshot file, of an
/// unknown schema, truncated or otherwise unopenable.
///
///     remat::hdf5_file_contents c = remat::hdf5_inspect("run.h5", true);
///     for (const auto& s : c.snapshots)
///         if (s.status != remat::hdf5_snapshot_status::complete)
///             std::printf("%s: %s\n", s.dataset.c_str(), s.problem.c_str());
hdf5_file_contents hdf5_inspect(const std::filesystem::path& file, bool verify = false);

} // namespace remat
