// bench/neural_ode on the GPU: Thrust's CUDA back end and cuBLAS, states as device vectors, snapshots in
// the device store (or pinned host memory); each variant's peak device memory counted allocation by
// allocation (device_memory.hpp), its time per gradient read after cudaDeviceSynchronize.
#include "device_memory.hpp"
#include "problem.hpp"

#include "remat/cuda/copy.hpp"
#include "remat/cuda/device_missing.hpp"
#include "remat/cuda/device_store.hpp"
#include "remat/cuda/error.hpp"
#include "remat/cuda/pinned_memory_resource.hpp"

#include <cuda_runtime_api.h>

#include <string>

namespace remat::bench::neural_ode {

namespace {

std::string describe(cudaError_t status)
{
    return std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status);
}

void require_device()
{
    if (const std::string why = cuda::device_missing(); !why.empty())
        throw no_cuda_device(why);
}

void synchronize()
{
    const cudaError_t status = cudaDeviceSynchronize();
    if (status != cudaSuccess)
        throw cuda::cuda_error(static_cast<int>(status), "cudaDeviceSynchronize after a gradient: " + describe(status));
}

} // namespace

void hand_over_to_cuda_binary(char**) {} // this is the CUDA binary

std::string cuda_device_name()
{
    require_device();
    int device = 0;
    cudaDeviceProp properties{};
    cudaError_t status = cudaGetDevice(&device);
    if (status == cudaSuccess)
        status = cudaGetDeviceProperties(&properties, device);
    if (status != cudaSuccess)
        throw cuda::cuda_error(static_cast<int>(status), "cudaGetDeviceProperties: " + describe(status));
    return properties.name;
}

std::vector<measurement> measure_on_cuda(const problem_size& s, int repeats, snapshot_level level,
                                         const on_variant& starting)
{
    require_device();
    auto with_store = [level](slot_t slots, std::uint64_t state_bytes, auto&& body) {
        const level_capacity capacity{.slots = slots};
        if (level == snapshot_level::device) {
            cuda::device_store store(capacity, {.slot_bytes = static_cast<std::size_t>(state_bytes)});
            body(store);
        } else {
            cuda::pinned_memory_resource pinned;
            host_store store(capacity, {.memory = &pinned, .copy = cuda::copier()});
            body(store);
        }
    };
    std::vector<measurement> out;
    std::vector<double> store_all_gradient;
    for (const variant& v : variants_for(s)) {
        starting(v);
        synchronize();
        device_memory::reset_peak();
        const long long before = device_memory::live_bytes();
        const long long allocations = device_memory::allocations();
        const variant_run r = run_variant(s, v, repeats, with_store, synchronize);
        if (device_memory::allocations() == allocations)
            throw std::runtime_error("the " + v.name +
                                     " run's device memory was not counted (the program was not "
                                     "linked with --wrap=cudaMalloc)");
        if (v.kind == variant_kind::store_all)
            store_all_gradient = r.gradient;
        out.push_back({v, r.seconds, checksum(r.gradient), device_memory::peak_bytes() - before,
                       same_bits(r.gradient, store_all_gradient)});
    }
    return out;
}

} // namespace remat::bench::neural_ode
