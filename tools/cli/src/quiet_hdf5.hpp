// For the tool's HDF5 commands (inspect, calibrate): HDF5 prints nothing of its own (internal to the tool).
//
// The tool reports every failure itself, in one line, with HDF5's explanation in it. HDF5 1.10 also prints
// at exit, while its error printing is on: after it failed to load a damaged object header it keeps that
// file's internals, with no identifier left for remat to close (all of remat's are closed), and its
// library close then says "HDF5: infinite loop closing library" and a line of interface names. The
// library (remat::hdf5) turns HDF5's printing off only during its own calls, since a program using it owns
// that setting; the tool owns its process, and turns it off for good.
#pragma once

#include <hdf5.h>

namespace remat::cli {

/// Turns HDF5's automatic error printing off for the rest of the process (on this, the main, thread, which
/// is the one that closes the library at exit).
inline void quiet_hdf5()
{
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

} // namespace remat::cli
