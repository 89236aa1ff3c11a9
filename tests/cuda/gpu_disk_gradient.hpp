// A gradient on the GPU through all three levels (tests only): device slots, pinned host slots and an
// HDF5 file, in a tiered store along a three-level plan. Compiled by nvcc; needs remat::hdf5.
#pragma once

#include "reaction_diffusion.hpp"

#include "remat/driver/run_report.hpp"
#include "remat/schedule/action.hpp"
#include "remat/schedule/cost.hpp"

#include <filesystem>

namespace remat::test {

/// thrust::device_vector state; `device_slots` on the GPU, `host_slots` in pinned host memory and any
/// number in `file`, the host and disk levels behind worker threads when `asynchronous`. The plan prices
/// host transfers at 1 forward step and disk transfers at 4; `planned` gets that plan's cost.
rd_gradient gpu_three_level_gradient(const reaction_diffusion& problem, step_t steps, slot_t device_slots,
                                     slot_t host_slots, const std::filesystem::path& file, bool asynchronous,
                                     run_report& report, schedule_cost& planned);

} // namespace remat::test
