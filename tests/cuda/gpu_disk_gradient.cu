#include "gpu_disk_gradient.hpp"

#include "reaction_diffusion_thrust.hpp"

#include "remat/cuda/copy.hpp"
#include "remat/cuda/device_store.hpp"
#include "remat/cuda/pinned_memory_resource.hpp"
#include "remat/cuda/thrust_traits.hpp"
#include "remat/hdf5/hdf5_store.hpp"
#include "remat/schedule/multilevel.hpp"
#include "remat/store/host_store.hpp"
#include "remat/store/tiered_store.hpp"

namespace remat::test {

rd_gradient gpu_three_level_gradient(const reaction_diffusion& problem, step_t steps, slot_t device_slots,
                                     slot_t host_slots, const std::filesystem::path& file, bool asynchronous,
                                     run_report& report, schedule_cost& planned)
{
    const std::size_t bytes = problem.points * sizeof(double);
    const cost_model model{
        {{"device", device_slots, 0, 0}, {"host", host_slots, 1, 1}, {"disk", level_spec::unlimited, 4, 4}}};
    cuda::pinned_memory_resource pinned;
    // Device states reach the slower levels by DMA into pinned memory: staging buffers when a level is
    // asynchronous, the host store's own slots and the disk store's copies otherwise. The store's one
    // copier does every copy, and the device level takes its (default) stream from it.
    const tier_options slow{.asynchronous = asynchronous, .async = {.staging_buffers = 3, .staging_memory = &pinned}};
    hdf5_store::options disk;
    disk.durable_writes = false;
    tiered_store<cuda::device_store, host_store, hdf5_store> store(
        cuda::copier(), {tier_options{}, slow, slow},
        cuda::device_store(level_capacity{.slots = device_slots}, {.slot_bytes = bytes}),
        host_store(level_capacity{.slots = host_slots}, {.memory = &pinned}), hdf5_store(file, level_capacity{}, disk));
    const multilevel plan(steps, model);
    planned = plan.cost();
    return run_thrust_gradient(problem, plan, store, &report);
}

} // namespace remat::test
