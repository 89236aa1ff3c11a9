// Creating a snapshot file atomically against another process creating or replacing the same path.
// Internal to remat::hdf5.
//
// A new file is built under a temporary name and then put at its path. Checking the path first and
// renaming over it later let two processes both succeed (issue 37: 18 of 30 trials): the second rename
// replaced the first one's file, which then wrote into an unlinked file. The guard closes that window:
// where nothing stood at the path, the new file is linked there without replacing anything (so the
// second creator's link fails); where a file stood, it is locked (flock) from before the check until
// after the rename, and the rename happens only while that very file is still the one at the path.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>

namespace remat::detail {

/// Why a file is not replaced while another process has it open (HDF5's lock, or a creator's).
inline constexpr const char* in_use_elsewhere =
    "another process has it open (a store using it, or another creating a file there)";

/// Which file a path names: its device and inode.
struct file_identity {
    dev_t device = 0;
    ino_t inode = 0;
    friend bool operator==(const file_identity&, const file_identity&) = default;
};

/// The file now at `path`; nothing when there is none. Throws remat::io_error when the path cannot be
/// looked up (a directory on the way that may not be searched, for instance).
std::optional<file_identity> identify_file(const std::filesystem::path& path);

/// Held from before a creator checks what is at a path until its new file is in place.
///
///     const std::optional<file_identity> seen = identify_file(path);
///     // ... check that what is there may be replaced ...
///     creation_guard guard(path, seen);     // io_error when another process has the file or replaced it
///     // ... build the new file under `temporary` ...
///     guard.install(temporary);             // io_error naming `path` when another creator was first
class creation_guard {
public:
    /// Locks the file `seen` at `path` (nothing to lock when `seen` is empty). Throws remat::io_error
    /// naming the file when another process holds it open (a store using it, another creator replacing
    /// it, a reader) or when `path` no longer names `seen`.
    creation_guard(const std::filesystem::path& path, std::optional<file_identity> seen);
    ~creation_guard();
    creation_guard(const creation_guard&) = delete;
    creation_guard& operator=(const creation_guard&) = delete;

    /// Puts the complete file `temporary` at the path: without replacing anything where nothing was
    /// there (renameat2 RENAME_NOREPLACE, or link() where the file system lacks it), over the locked
    /// file otherwise. Throws remat::io_error naming the path when another process created or replaced
    /// it meanwhile (the loser of a race); `temporary` is then left for the caller to remove.
    void install(const std::filesystem::path& temporary);

private:
    std::string where_;
    std::optional<file_identity> seen_;
    int fd_ = -1; // the locked file, when `seen_`
};

} // namespace remat::detail
