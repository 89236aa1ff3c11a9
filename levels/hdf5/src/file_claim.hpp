// One hdf5_store per snapshot file in a process. HDF5's file lock refuses a second process, but not a
// second store in the same one: that store would replace the file (or share HDF5's handle to it), and the
// first would go on writing to an unlinked file whose slots then read as empty. Internal to remat::hdf5.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace remat::detail {

/// A process-wide claim on a file, by its absolute path and by its device and inode (so that another
/// spelling of the path, or a hard link, finds it too). Released by the destructor; movable.
class file_claim {
public:
    file_claim() = default;
    /// Claims `path`. Throws remat::io_error when a store
    /// of this process holds the file ("already open by another hdf5_store in this process").
    explicit file_claim(const std::filesystem::path& path);
    ~file_claim();
    file_claim(file_claim&& other) noexcept;
    file_claim& operator=(file_claim&& other) noexcept;
    file_claim(const file_claim&) = delete;
    file_claim& operator=(const file_claim&) = delete;

    /// Records the file now at the claimed path (after it was created, or replaced by a rename).
    void refresh();

private:
    void release() noexcept;
    std::uint64_t id_ = 0; // 0: nothing claimed
};

} // namespace remat::detail
