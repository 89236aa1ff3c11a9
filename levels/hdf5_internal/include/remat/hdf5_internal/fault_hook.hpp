// Test-only fault injection into an hdf5_store: I/O errors on demand, and where committed snapshots lie
// so that a test can damage them on disk between their write and their read.
//
// Internal: not installed, not part of remat's API. remat-stress (tools/stress) and the tests use it for the
// faults that cannot be caused for real without privileges a test should not need (an EIO from the disk).
// A store without a hook (every store a user makes) pays one null-pointer test per transfer.
//
//     struct fail_third_read : remat::detail::hdf5_fault_hook {
//         int reads = 0;
//         int before_transfer(bool write, remat::slot_t, remat::step_t, std::uint64_t, std::size_t) override
//         { return !write && ++reads == 3 ? EIO : 0; }
//     } hook;
//     remat::detail::hdf5_store_access::set_fault_hook(store, &hook);
#pragma once

#include "remat/types.hpp"

#include <cstddef>
#include <cstdint>

namespace remat {
class hdf5_store; // remat/hdf5/hdf5_store.hpp; its hdf5_store.cpp defines set_fault_hook
}

namespace remat::detail {

class hdf5_fault_hook {
public:
    virtual ~hdf5_fault_hook() = default;
    /// Called (on the thread calling the store) just before a snapshot's bytes move between memory and the
    /// file at `offset`: 0 lets the transfer go on; an errno makes it fail exactly as the operating system
    /// failing the first pread/pwrite with that error would.
    virtual int before_transfer(bool /*write*/, slot_t /*slot*/, step_t /*step*/, std::uint64_t /*offset*/,
                                std::size_t /*bytes*/)
    {
        return 0;
    }
    /// x_step is committed (and, with durable writes, on stable storage) in `slot`, its bytes at
    /// [offset, offset + bytes) of the file. Only for contiguous (uncompressed) snapshots.
    virtual void committed(slot_t /*slot*/, step_t /*step*/, std::uint64_t /*offset*/, std::uint64_t /*bytes*/) {}
};

struct hdf5_store_access {
    /// Installs `hook` (null removes it); the store does not own it. Set it while no transfer runs.
    static void set_fault_hook(hdf5_store& store, hdf5_fault_hook* hook) noexcept;
};

} // namespace remat::detail
