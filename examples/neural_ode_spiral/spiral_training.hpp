// The spiral trainer's interface, in plain types: main.cpp (host compiler) chooses a back end and calls
// train_spiral_on_cpu (Thrust CPP + OpenBLAS, trainer_cpu.cpp) or train_spiral_on_cuda (Thrust CUDA +
// cuBLAS, trainer_cuda.cu); both are the one template in spiral_trainer.hpp.
#pragma once

#include "spiral_data.hpp"

#include "remat/dense/activation.hpp"
#include "remat/schedule/uniform.hpp"
#include "remat/types.hpp"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace remat::examples {

enum class spiral_schedule { revolve, uniform, store_all };
enum class spiral_store { device, host, disk };

struct spiral_config {
    std::int64_t iterations = 300;
    std::int64_t steps = 1000; ///< solver steps over [0, t_end] per gradient
    std::int64_t starts = 20;  ///< trajectories in the batch, started at evenly spaced points of the data
    std::vector<std::int64_t> hidden{16};
    dense::activation act = dense::activation::tanh;
    std::string method = "rk4"; ///< euler, rk4, dopri5 (fixed steps)
    spiral_schedule schedule = spiral_schedule::revolve;
    std::optional<slot_t> slots{};               ///< snapshot slots
    std::optional<std::uint64_t> budget_bytes{}; ///< or a byte budget for them
    spiral_store store = spiral_store::host;
    std::filesystem::path disk_file{}; ///< --store disk: the HDF5 file
    double learning_rate = 0.03;
    /// The gradient weights the loss at time tau after each start by exp(-tau / H), H growing from two
    /// steps to `horizon` over the iterations (0: all alike, the plain loss).
    double horizon = 0.5;
    double t_end = 25; ///< of the data
    std::uint64_t seed = 1;

    /// Data-parallel training (neural_ode_spiral_mpi): this process integrates members
    /// [first_member, first_member + members) of the batch (members 0: all from first_member on), the loss
    /// still normalised over the whole batch, and `sum_over_ranks` adds each gradient (dL/dp, then the
    /// loss, in one array) over the processes in place, so every process makes the same update.
    std::int64_t first_member = 0;
    std::int64_t members = 0;
    std::function<void(std::span<double>)> sum_over_ranks{};
};

/// The slots when neither --slots nor --budget is given: `usual`, except for uniform checkpointing, which
/// cannot run in fewer than uniform::min_slots(steps) (about 2 sqrt(T): a snapshot every k steps and the k - 1
/// states of the segment being reversed), so it gets that many.
inline void choose_default_slots(spiral_config& c, slot_t usual)
{
    if (c.slots || c.budget_bytes)
        return;
    c.slots = c.schedule == spiral_schedule::uniform ? std::max(usual, uniform::min_slots(c.steps)) : usual;
    c.slots = std::min<slot_t>(*c.slots, c.steps - 1);
}

/// Why the --slots asked for cannot serve the steps and the schedule, in one line naming the option; empty
/// when they can. More slots than the T - 1 states a gradient keeps are refused (they were silently capped).
inline std::optional<std::string> slots_problem(const spiral_config& c)
{
    if (!c.slots)
        return std::nullopt;
    const std::string given = "--slots " + std::to_string(*c.slots);
    if (*c.slots > c.steps - 1)
        return given + ": a gradient over --steps " + std::to_string(c.steps) + " keeps at most " +
               std::to_string(c.steps - 1) + " states (that is store-all)";
    if (c.schedule == spiral_schedule::uniform && *c.slots < uniform::min_slots(c.steps))
        return given + ": --schedule uniform needs at least " + std::to_string(uniform::min_slots(c.steps)) +
               " slots for --steps " + std::to_string(c.steps) +
               " (a snapshot every k steps and the k - 1 states of the segment being reversed); give more, or "
               "leave --slots out, or use --schedule revolve";
    return std::nullopt;
}

/// What one iteration reports to the caller (progress, loss curve).
using spiral_progress = std::function<void(std::int64_t iteration, double loss)>;

struct spiral_result {
    std::vector<double> losses;      ///< loss before each update, one per iteration
    double final_loss = 0;           ///< at the trained parameters
    std::uint64_t forward_steps = 0; ///< of the last gradient's run (recomputation included)
    std::uint64_t peak_snapshot_bytes = 0;
    std::uint64_t store_all_bytes = 0; ///< the T-1 snapshots x_0..x_{T-2} remat::store_all keeps
    std::uint64_t state_bytes = 0;
    slot_t slots = 0;
    double grad_check_rel_err = 0; ///< adjoint against central differences, along a random direction
    bool bit_identical_vs_store_all = false;
    std::vector<double> learned;    ///< the learned trajectory from y0 at every step (2 values each)
    std::vector<double> parameters; ///< the trained parameters
    std::string device_name;
};

/// Trains on the CPU (always built).
spiral_result train_spiral_on_cpu(const spiral_config& config, const spiral_data& data,
                                  const spiral_progress& progress);
/// Whether this build has the CUDA trainer.
bool spiral_cuda_built() noexcept;
/// Trains on the GPU; remat::cuda::cuda_error when there is no usable device.
spiral_result train_spiral_on_cuda(const spiral_config& config, const spiral_data& data,
                                   const spiral_progress& progress);

} // namespace remat::examples
