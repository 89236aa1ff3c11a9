// bench/neural_ode's variants and what is measured of each: the interface between its command line
// (main.cpp, no Thrust) and its back ends (cpu.cpp: Thrust CPP + OpenBLAS; cuda.cu: Thrust CUDA + cuBLAS),
// which compile the same problem (problem.hpp) each for its own device.
#pragma once

#include "remat/types.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace remat::bench::neural_ode {

struct problem_size {
    step_t steps = 1000;
    std::int64_t batch = 1024;
    std::int64_t dim = 2;
    std::int64_t width = 128;
};

enum class variant_kind { store_all, revolve, backprop };

struct variant {
    std::string name;
    variant_kind kind;
    slot_t slots; // snapshot slots (0: not remat)
};

/// The four variants: remat store-all (the baseline, first), revolve in 10% and in 1% of its
/// slots, and backprop through the solver (every step's stage inputs, derivatives and activations kept).
inline std::vector<variant> variants_for(const problem_size& s)
{
    const slot_t all = s.steps - 1; // x_0..x_{T-2}; the last adjoint step starts from the state it has
    return {{"store-all", variant_kind::store_all, all},
            {"revolve 10%", variant_kind::revolve, std::max<slot_t>(1, all / 10)},
            {"revolve 1%", variant_kind::revolve, std::max<slot_t>(1, all / 100)},
            {"backprop", variant_kind::backprop, 0}};
}

struct measurement {
    variant what;
    double seconds = 0;         // median per gradient
    double checksum = 0;        // the sum of dL/dp's elements, in index order
    long long peak_bytes = 0;   // peak RSS of its own process (CPU) or peak device memory allocated (CUDA)
    bool bit_identical = false; // dL/dp equal to store-all's, bit for bit
};

/// Where the CUDA back end keeps the snapshots.
enum class snapshot_level { device, pinned_host };

/// Called as each variant starts (progress on stderr).
using on_variant = std::function<void(const variant&)>;

/// Each variant in a child process of its own (its peak RSS), `repeats` gradients each.
std::vector<measurement> measure_on_cpu(const problem_size& s, int repeats, const on_variant& starting);

/// Each variant on the GPU, its peak device memory counted allocation by allocation (device_memory.hpp);
/// throws no_cuda_device where there is none (or the build has no CUDA back end).
std::vector<measurement> measure_on_cuda(const problem_size& s, int repeats, snapshot_level level,
                                         const on_variant& starting);

/// In the CPU-only binary of a build with CUDA: replaces this process by the CUDA one (neural_ode_cuda,
/// beside it) with the same arguments, throwing std::runtime_error where it cannot; elsewhere returns.
void hand_over_to_cuda_binary(char** argv);

/// The GPU's name (throws no_cuda_device like measure_on_cuda).
std::string cuda_device_name();

/// Nothing to measure on: no CUDA device, or a build without nvcc. The benchmark skips (exit 77).
struct no_cuda_device : std::runtime_error {
    using std::runtime_error::runtime_error;
};

inline double checksum(const std::vector<double>& v)
{
    double sum = 0;
    for (const double x : v)
        sum += x;
    return sum;
}

inline bool same_bits(const std::vector<double>& a, const std::vector<double>& b)
{
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

} // namespace remat::bench::neural_ode
