// One round of the stress run: the gradient of the reaction-diffusion loop through host RAM and an HDF5
// file (remat::multilevel over a tiered store, the disk level asynchronous), above them GPU memory when
// device slots are asked for, and the same gradient by another schedule in RAM alone (the reference),
// compared bit for bit.
#pragma once

#include "capped_memory.hpp"
#include "reaction_diffusion.hpp"
#include "timed_level.hpp"

#include "remat/driver/run_report.hpp"
#include "remat/types.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace remat::detail {
class hdf5_fault_hook;
}

namespace remat::stress {

/// What one round computes and where.
struct round_setup {
    std::size_t state_bytes = 0; ///< a multiple of 8
    step_t steps = 0;
    slot_t host_slots = 0;      ///< RAM slots of the tested run
    slot_t reference_slots = 0; ///< RAM slots of the reference run (what fits under the cap)
    double disk_write_cost = 1; ///< forward steps per disk write, for the multi-level plan
    double disk_read_cost = 1;  ///< forward steps per disk read
    std::uint64_t seed = 0;     ///< picks x_0
    std::filesystem::path file; ///< the HDF5 snapshot file
    /// Open `file` if an earlier round of the same plan left it, free its slots and rewrite their datasets
    /// in place, as a long run on one file does (otherwise the file is replaced: every write lands in new
    /// space, which costs this VM's disk half as much again per MiB, docs/stress.md).
    bool reuse_file = false;
    std::size_t staging_buffers = 4; ///< the disk level's asynchronous staging (RAM: this many states)
    slot_t device_slots = 0;         ///< GPU slots above RAM (0: no device level; needs device_level_built())
    double device_cost = 0;          ///< forward steps per device transfer, for the multi-level plan
};

/// Ways a fault scenario reaches into a tested run.
struct round_hooks {
    std::function<void(step_t)> on_forward{}; ///< before each forward step (may throw, may signal)
    std::function<void(step_t)> on_adjoint{}; ///< before each adjoint step
    detail::hdf5_fault_hook* disk_faults = nullptr;
    bool resume = false; ///< continue the run a killed process left in setup.file
};

/// What a tested run did.
struct tested_run {
    gradient g;
    run_report report;
    std::vector<transfer_time> times;      ///< per level of the tested store: [device,] host, disk
    bool resumed = false;                  ///< it continued from a snapshot in the file
    step_t resumed_from = 0;               ///< ... x_k
    std::uint64_t forward_steps_saved = 0; ///< forward steps the resume did not run again
};

/// The gradient by remat::revolve in `reference_slots` RAM slots (from `memory`).
gradient reference_gradient(const round_setup& setup, capped_memory& memory);

/// The gradient by remat::multilevel over RAM (from `memory`) and the HDF5 file, the file's level
/// asynchronous. The file records the run's identity; with hooks.resume it is opened in resume mode and
/// the run continues from the most advanced usable snapshot (or from x_0 when there is none).
tested_run tested_gradient(const round_setup& setup, capped_memory& memory, const round_hooks& hooks = {});

/// Whether two gradients are the same bits.
bool same_bits(const gradient& a, const gradient& b);

/// XXH64 of a gradient's bits, for remembering references without keeping them.
std::uint64_t gradient_hash(const gradient& g);

/// Whether this build has the device level (remat::cuda was built), and a GPU to put it on: an empty
/// string, or why not.
std::string device_level_missing();

/// Seconds of one device-level transfer of a host state of this size (the median of five writes and reads
/// through a one-slot device store, half of each pair).
double device_transfer_seconds(std::size_t state_bytes);

/// Most disk slots the round's plan holds at once.
slot_t planned_disk_slots(const round_setup& setup);

/// The reaction-diffusion model for a state size.
reaction_diffusion model_for(std::size_t state_bytes);

} // namespace remat::stress
