// Moving snapshot bytes between memory and a region of the snapshot file, checksumming them on the way.
//
// HDF5 places and describes each contiguous snapshot dataset; its bytes move here, with O_DIRECT where
// possible. A transfer goes in pieces through three aligned host buffers: while a helper thread has the
// disk write (or read) queued pieces, the caller copies the next one (from device memory too, through the
// store's byte_copier) and hashes it a cache-sized part at a time, right after copying it. So the disk
// stays busy and the checksum and copies hide behind it. Pieces grow from 1 MiB at the start and shrink
// at the end, so that the disk starts early and little work is left after it finishes. A caller's buffer
// that is itself 4096-byte aligned moves without any copy. The helper thread only ever calls
// pwrite/pread on remat's own file descriptor, never HDF5.
#pragma once

#include "remat/hdf5/hdf5_store.hpp"
#include "remat/store/snapshot_view.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>

namespace remat::detail {

/// pwrite until all `n` bytes are written; 0 or the errno (EINTR retried, EIO for a write of 0 bytes).
int write_all(int fd, const std::byte* p, std::size_t n, std::uint64_t offset);
/// pread until `n` bytes are read or the file ends; 0 or the errno, and the bytes read in `done`.
int read_all(int fd, std::byte* p, std::size_t n, std::uint64_t offset, std::size_t& done);

class raw_file {
public:
    /// Opens `path` for reading and writing (and with O_DIRECT unless `mode` is buffered). Throws io_error;
    /// with mode direct, also when the file system refuses O_DIRECT.
    raw_file(const std::filesystem::path& path, hdf5_store::io_path mode, std::size_t piece_bytes);
    ~raw_file();
    raw_file(const raw_file&) = delete;
    raw_file& operator=(const raw_file&) = delete;

    /// Writes the parts one after the other from byte `offset` (gathered into the pieces, or straight from a
    /// lone aligned host part) and returns the XXH64 of all their bytes. Throws io_error naming the OS error.
    std::uint64_t write(std::uint64_t offset, const_parts src, byte_copier copy);
    /// Reads the parts' bytes from `offset` on back into the parts and returns the XXH64 of all of them.
    /// Throws io_error for an OS error, integrity_error when the file ends before the bytes do.
    std::uint64_t read(std::uint64_t offset, mutable_parts dst, byte_copier copy);
    /// fdatasync: everything written to the file so far (by HDF5 too) is on stable storage.
    void sync();
    /// Gives the file blocks for [offset, offset + size) now, so that a full disk or a file size limit
    /// shows here (io_error) rather than half way through a snapshot. A no-op where unsupported.
    void reserve(std::uint64_t offset, std::uint64_t size);
    /// Whether O_DIRECT is in use.
    [[nodiscard]] bool direct() const noexcept;

private:
    struct state;
    std::unique_ptr<state> s_;
};

} // namespace remat::detail
