// remat/hdf5/calibrate.hpp — what one snapshot costs on this machine's disk level.
//
// Measures, in one run and on the same files system: writing and reading a snapshot through hdf5_store
// (writes until durable, reads with the file's page cache dropped), the same bytes through a raw
// sequential O_DIRECT write and read (the baseline: what the disk gives), and a host memory copy. These
// are the per-level costs a multi-level schedule needs; `remat calibrate --disk DIR` prints them.
// time_store_transfers repeats the store's part alone, for holding a long run's disk level against the
// disk as it is during the run.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

namespace remat {

/// Median seconds per snapshot, from calibrate_disk.
struct disk_calibration {
    std::uint64_t snapshot_bytes = 0;
    int repeats = 0;
    double write_seconds = 0;     ///< hdf5_store::write, durable (fdatasync included)
    double read_seconds = 0;      ///< hdf5_store::read, checksum checked, page cache dropped first
    double raw_write_seconds = 0; ///< pwrite of the same bytes with O_DIRECT, then fdatasync
    double raw_read_seconds = 0;  ///< pread with O_DIRECT, page cache dropped first
    double host_copy_seconds = 0; ///< memcpy into a host buffer not in the caches, as into a RAM slot
    bool direct_io = false;       ///< the store moved its bytes with O_DIRECT
    bool raw_direct_io = false;   ///< the baseline could use O_DIRECT (else page cache, dropped)

    [[nodiscard]] double write_bytes_per_s() const { return rate(write_seconds); }
    [[nodiscard]] double read_bytes_per_s() const { return rate(read_seconds); }
    [[nodiscard]] double raw_write_bytes_per_s() const { return rate(raw_write_seconds); }
    [[nodiscard]] double raw_read_bytes_per_s() const { return rate(raw_read_seconds); }
    [[nodiscard]] double host_copy_bytes_per_s() const { return rate(host_copy_seconds); }

private:
    [[nodiscard]] double rate(double seconds) const
    {
        return seconds > 0 ? static_cast<double>(snapshot_bytes) / seconds : 0;
    }
};

/// Measures snapshots of `snapshot_bytes` in directory `dir` (`repeats` times each, interleaving the
/// store and the baseline so that both see the same disk conditions); the temporary files are removed.
/// Throws argument_error for zero bytes or repeats, capacity_error when three buffers of `snapshot_bytes`
/// (and 64 MiB for the host copy's destinations) do not fit in the machine's memory, io_error when `dir` is not a
/// writable directory.
///
///     remat::disk_calibration c = remat::calibrate_disk("/scratch", 64 << 20, 5);
///     double ratio = c.write_bytes_per_s() / c.raw_write_bytes_per_s(); // about 1 on a good setup
disk_calibration calibrate_disk(const std::filesystem::path& dir, std::uint64_t snapshot_bytes, int repeats);

/// Every timed transfer of time_store_transfers, in the order taken.
struct store_transfer_samples {
    std::uint64_t snapshot_bytes = 0;
    std::vector<double> write_seconds; ///< hdf5_store::write, durable, as calibrate_disk times it
    std::vector<double> read_seconds;  ///< hdf5_store::read, page cache dropped first, as calibrate_disk times it

    /// Bytes over the seconds of all samples: the figure to hold a level's throughput (the bytes it moved
    /// over the time its calls took) against. A median, as calibrate_disk reports, leaves the slow
    /// transfers out: above it when some are slow (a disk whose cache flush sometimes takes milliseconds).
    [[nodiscard]] double write_bytes_per_s() const { return rate(write_seconds); }
    [[nodiscard]] double read_bytes_per_s() const { return rate(read_seconds); }
    /// Appends another measurement's samples (of the same snapshot size).
    void append(const store_transfer_samples& more);

private:
    [[nodiscard]] double rate(const std::vector<double>& seconds) const;
};

/// The store's part of calibrate_disk alone: `repeats` durable writes and reads of a snapshot of
/// `snapshot_bytes` through an hdf5_store in a scratch file in `dir` (removed afterwards), timed as
/// calibrate_disk times them, with two buffers of that size and no host-copy or raw-disk baseline. For
/// measuring the disk again and again during a long run (remat-stress does, between rounds). Throws as
/// calibrate_disk does.
///
///     remat::store_transfer_samples s = remat::time_store_transfers("/scratch", 16 << 20, 4);
///     s.append(remat::time_store_transfers("/scratch", 16 << 20, 4)); // later in the run
///     double rate = s.write_bytes_per_s();
store_transfer_samples time_store_transfers(const std::filesystem::path& dir, std::uint64_t snapshot_bytes,
                                            int repeats);

} // namespace remat
