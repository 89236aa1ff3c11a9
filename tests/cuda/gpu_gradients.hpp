// Gradient runs of the reaction-diffusion problem (tests/thrust/reaction_diffusion.hpp) on the GPU, with
// each kind of device state and store; compiled by nvcc (kernels built with --fmad=false so that they
// round exactly like the host reference), called from the g++ test code.
#pragma once

#include "reaction_diffusion.hpp"

#include "remat/driver/run_report.hpp"
#include "remat/schedule/action.hpp"

#include <cstdint>

namespace remat::test {

enum class gpu_store_kind {
    device_store,      ///< remat::cuda::device_store (slots in GPU memory)
    pinned_host_store, ///< remat::host_store on pinned memory with remat::cuda::copier()
};

enum class gpu_schedule_kind { revolve, store_all };

/// thrust::device_vector state, Thrust kernels on the legacy default stream.
rd_gradient gpu_thrust_gradient(const reaction_diffusion& problem, step_t steps, slot_t slots, gpu_store_kind store,
                                gpu_schedule_kind schedule, run_report* report = nullptr);

/// remat::cuda::device_span state over the user's own buffer, raw kernels on a non-blocking stream of
/// the user's (the device store is told about it through options::user_stream).
rd_gradient gpu_span_gradient(const reaction_diffusion& problem, step_t steps, slot_t slots,
                              run_report* report = nullptr);

/// thrust::device_vector state through a tiered store: `device_slots` GPU slots first, then
/// `host_slots` pinned host slots (behind a worker thread when `asynchronous`), along the multi-level
/// schedule that prices host transfers at `host_cost` forward steps each.
rd_gradient gpu_tiered_gradient(const reaction_diffusion& problem, step_t steps, slot_t device_slots, slot_t host_slots,
                                double host_cost, bool asynchronous, run_report* report = nullptr);

/// A state of several parts, (x_k, x_{k-1}) as two thrust::device_vector<double>, and with `host_part` a
/// step counter in host memory too (tests/thrust/reaction_diffusion_thrust.hpp): gathered into one slot
/// of `store` (the tiered kind: `slots` GPU slots, then pinned host slots behind a worker thread) and
/// scattered back. Adds to `wrong_parts` the x_k whose second (or third) part came back wrong.
enum class gpu_parts_store { device_store, pinned_host_store, tiered_async };
rd_gradient gpu_parts_gradient(const reaction_diffusion& problem, step_t steps, slot_t slots, gpu_parts_store store,
                               bool host_part, std::uint64_t& wrong_parts);

} // namespace remat::test
