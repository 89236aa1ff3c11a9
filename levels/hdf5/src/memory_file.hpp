// An HDF5 file built in memory, for remat to write to disk itself (internal to remat::hdf5).
//
// When H5Fcreate or a flush fails on a full disk, HDF5 1.10 keeps the half-made file in its state, with no
// identifier to close it by, and prints "infinite loop closing library" (or crashes) when the process
// exits. A file built in memory and written with one write() fails, on a full disk, in remat's own call.
#pragma once

#include <hdf5.h>

#include <functional>
#include <string>
#include <vector>

namespace remat::detail {

/// The bytes of the file that `build` makes in a new HDF5 file held in memory (HDF5's core driver, no
/// backing file), created with the access properties `fapl` otherwise. `name` is only for messages.
/// Throws remat::io_error when HDF5 fails.
///
///     std::vector<unsigned char> bytes = build_in_memory(fapl.get(), where, [&](hid_t file) { ... });
std::vector<unsigned char> build_in_memory(hid_t fapl, const std::string& name,
                                           const std::function<void(hid_t file)>& build);

} // namespace remat::detail
