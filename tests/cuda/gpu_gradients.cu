#include "gpu_gradients.hpp"

#include "reaction_diffusion_thrust.hpp"
#include "vector_schedule.hpp"

#include "remat/cuda/copy.hpp"
#include "remat/cuda/detail/check.hpp"
#include "remat/cuda/device_buffer.hpp"
#include "remat/cuda/device_span.hpp"
#include "remat/cuda/device_store.hpp"
#include "remat/cuda/pinned_memory_resource.hpp"
#include "remat/cuda/stream.hpp"
#include "remat/cuda/thrust_traits.hpp"
#include "remat/driver/run.hpp"
#include "remat/schedule/multilevel.hpp"
#include "remat/schedule/revolve.hpp"
#include "remat/schedule/uniform.hpp"
#include "remat/store/host_store.hpp"
#include "remat/store/tiered_store.hpp"

#include <vector>

namespace remat::test {
namespace {

constexpr unsigned threads = 256;

template <class Store>
rd_gradient with_schedule(const reaction_diffusion& problem, step_t steps, slot_t slots, gpu_schedule_kind schedule,
                          Store& store, run_report* report)
{
    if (schedule == gpu_schedule_kind::store_all)
        return run_thrust_gradient(problem, store_all(steps, static_cast<slot_t>(steps)), store, report);
    return run_thrust_gradient(problem, revolve(steps, slots), store, report);
}

__global__ void forward_kernel(const double* u, double* out, rd_params p)
{
    const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
    if (i < p.n)
        out[i] = rd_forward(u, i, p);
}

__global__ void adjoint_kernel(const double* u, const double* a, double* a_out, double* g, rd_params p)
{
    const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
    if (i < p.n) {
        g[i] = rd_nu_gradient(u, a, g[i], i, p);
        a_out[i] = rd_adjoint(u, a, i, p);
    }
}

} // namespace

rd_gradient gpu_thrust_gradient(const reaction_diffusion& problem, step_t steps, slot_t slots, gpu_store_kind store,
                                gpu_schedule_kind schedule, run_report* report)
{
    const slot_t used = schedule == gpu_schedule_kind::store_all ? static_cast<slot_t>(steps) : slots;
    if (store == gpu_store_kind::device_store) {
        cuda::device_store device(level_capacity{.slots = used}, {.slot_bytes = problem.points * sizeof(double)});
        return with_schedule(problem, steps, slots, schedule, device, report);
    }
    cuda::pinned_memory_resource pinned;
    host_store host(level_capacity{.slots = used}, {.memory = &pinned, .copy = cuda::copier()});
    return with_schedule(problem, steps, slots, schedule, host, report);
}

rd_gradient gpu_span_gradient(const reaction_diffusion& problem, step_t steps, slot_t slots, run_report* report)
{
    const rd_params p = problem.params();
    const std::size_t bytes = p.n * sizeof(double);
    const unsigned blocks = static_cast<unsigned>((p.n + threads - 1) / threads);
    cuda::stream user; // the solver's own non-blocking stream
    cuda::device_buffer state(bytes), scratch(bytes), adjoint(bytes), adjoint_next(bytes), nu_points(bytes);
    auto* u = reinterpret_cast<double*>(state.data());
    auto* tmp = reinterpret_cast<double*>(scratch.data());
    auto* a = reinterpret_cast<double*>(adjoint.data());
    auto* a_next = reinterpret_cast<double*>(adjoint_next.data());
    auto* g = reinterpret_cast<double*>(nu_points.data());

    const std::vector<double> x0 = problem.initial_field();
    const std::vector<double> aT = problem.objective_gradient(problem.final_field(steps));
    cuda::detail::check(cudaMemcpy(u, x0.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
    cuda::detail::check(cudaMemcpy(a, aT.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
    cuda::detail::check(cudaMemset(g, 0, bytes), "cudaMemset");
    // Those ran on the legacy stream, which the user's non-blocking stream does not wait for.
    cuda::detail::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");

    cuda::device_store store(level_capacity{.slots = slots}, {.slot_bytes = bytes, .user_stream = user.get()});
    cuda::device_span<double> x(u, p.n);
    const run_report r =
        run(revolve(steps, slots), store, x, remat::forward_step([&](step_t, cuda::device_span<double>& s) {
                forward_kernel<<<blocks, threads, 0, user.get()>>>(s.data(), tmp, p);
                cuda::detail::check(cudaMemcpyAsync(s.data(), tmp, bytes, cudaMemcpyDeviceToDevice, user.get()),
                                    "cudaMemcpyAsync");
            }),
            remat::adjoint_step([&](step_t, cuda::device_span<double>& s) {
                adjoint_kernel<<<blocks, threads, 0, user.get()>>>(s.data(), a, a_next, g, p);
                std::swap(a, a_next); // host-side pointers, in the order of the stream
            }));
    user.synchronize();
    if (report != nullptr)
        *report = r;
    rd_gradient out{std::vector<double>(p.n), std::vector<double>(p.n)};
    cuda::detail::check(cudaMemcpy(out.initial.data(), a, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
    cuda::detail::check(cudaMemcpy(out.nu_points.data(), g, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
    return out;
}

rd_gradient gpu_tiered_gradient(const reaction_diffusion& problem, step_t steps, slot_t device_slots, slot_t host_slots,
                                double host_cost, bool asynchronous, run_report* report)
{
    const std::size_t bytes = problem.points * sizeof(double);
    const cost_model model{{{"device", device_slots, 0, 0}, {"host", host_slots, host_cost, host_cost}}};
    cuda::pinned_memory_resource pinned;
    tiered_store<cuda::device_store, host_store> store(
        cuda::copier(),
        {tier_options{},
         tier_options{.asynchronous = asynchronous, .async = {.staging_buffers = 3, .staging_memory = &pinned}}},
        cuda::device_store(level_capacity{.slots = device_slots}, {.slot_bytes = bytes}),
        host_store(level_capacity{.slots = host_slots}, {.memory = &pinned}));
    return run_thrust_gradient(problem, multilevel(steps, model), store, report);
}

namespace {

template <class State>
rd_gradient parts_gradient(const reaction_diffusion& problem, step_t steps, slot_t slots, gpu_parts_store kind,
                           std::uint64_t& wrong_parts)
{
    const std::size_t bytes = problem.points * sizeof(double);
    cuda::pinned_memory_resource pinned;
    if (kind == gpu_parts_store::device_store) {
        cuda::device_store device(level_capacity{.slots = slots}, {.slot_bytes = 2 * bytes + 64});
        return run_thrust_parts_gradient<State>(problem, revolve(steps, slots), device, wrong_parts);
    }
    if (kind == gpu_parts_store::pinned_host_store) {
        host_store host(level_capacity{.slots = slots}, {.memory = &pinned, .copy = cuda::copier()});
        return run_thrust_parts_gradient<State>(problem, revolve(steps, slots), host, wrong_parts);
    }
    tiered_store<cuda::device_store, host_store> tiered(
        cuda::copier(),
        {tier_options{},
         tier_options{.asynchronous = true, .async = {.staging_buffers = 3, .staging_memory = &pinned}}},
        cuda::device_store(level_capacity{.slots = slots}),
        host_store(level_capacity{.slots = 2 * slots}, {.memory = &pinned}));
    return run_thrust_parts_gradient<State>(problem, split_levels(revolve(steps, 3 * slots), slots), tiered,
                                            wrong_parts);
}

} // namespace

rd_gradient gpu_parts_gradient(const reaction_diffusion& problem, step_t steps, slot_t slots, gpu_parts_store store,
                               bool host_part, std::uint64_t& wrong_parts)
{
    if (host_part)
        return parts_gradient<rd_mixed_parts>(problem, steps, slots, store, wrong_parts);
    return parts_gradient<rd_device_parts>(problem, steps, slots, store, wrong_parts);
}

} // namespace remat::test
