// One snapshot written and read through an hdf5_store again and again, each transfer timed: what
// calibrate_disk and time_store_transfers measure of the disk level, in one place so that both time the same
// work.
#pragma once

#include "remat/hdf5/hdf5_store.hpp"
#include "remat/store/snapshot_view.hpp"
#include "remat/types.hpp"

#include <filesystem>

namespace remat::detail {

/// Drops a file's pages from the page cache (after fdatasync), so that the next read comes from the disk.
/// Throws io_error when the file cannot be opened.
void drop_page_cache(const std::filesystem::path& file);

/// A one-slot hdf5_store in `file` (made, replacing nothing but an earlier probe's file) holding the
/// snapshot being timed. The caller removes the file.
class store_probe {
public:
    /// Makes the store and writes `src` once, untimed, so that the timed writes overwrite allocated space.
    store_probe(const std::filesystem::path& file, const_bytes src);

    /// Seconds of hdf5_store::write of `src` as x_step (durable: fdatasync included), after freeing the slot.
    double write(step_t step, const_bytes src);
    /// Seconds of hdf5_store::read of x_step into `dst` (checksum checked), the file's page cache dropped
    /// first. Throws integrity_error when the bytes read differ from `expected`.
    double read(step_t step, mutable_bytes dst, const_bytes expected);

    [[nodiscard]] bool direct_io() const noexcept { return store_.direct_io(); }

private:
    std::filesystem::path file_;
    hdf5_store store_;
};

} // namespace remat::detail
