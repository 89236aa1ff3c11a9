// examples/rnn_adding: what a training run is asked to do and what it reports, as plain types, so that
// the command line (rnn_adding.cpp) is compiled once and the training loop (training_loop.hpp) once per
// back end: training_cpu.cpp (Thrust CPP, OpenBLAS) and training_cuda.cu (CUDA, cuBLAS).
#pragma once

#include "remat/rnn/layout.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace remat::examples {

struct training_options {
    std::int64_t steps = 1000; ///< T
    std::int64_t batch = 32;
    std::int64_t hidden = 32;
    std::int64_t layers = 1;
    rnn::cell_kind cell = rnn::cell_kind::gru;
    double dropout = 0;
    std::int64_t iterations = 4000; ///< at most
    double learning_rate = 2e-2;
    double clip = 1.0;                ///< gradient norm clipping (0: none)
    double target_loss = 0.01;        ///< stop when a held-out batch scores below it
    double time_limit = 0;            ///< seconds; 0: none
    std::string schedule = "revolve"; ///< revolve, uniform, store-all, taped, checkpoint-sequential
    std::int64_t slots = 0;           ///< 0: from the budget, or 2 sqrt(T); taped: snapshots and tapes, in states
    std::uint64_t budget = 0;         ///< snapshot bytes, 0: use slots
    std::string store = "host";       ///< host, device
    bool float64 = false;
    std::uint64_t seed = 1;
};

struct training_result {
    std::vector<double> losses;                            ///< per iteration (training batch)
    std::vector<std::pair<std::int64_t, double>> held_out; ///< (iteration, held-out loss)
    std::int64_t iterations = 0;
    double seconds = 0;
    double final_loss = 0; ///< the last held-out loss
    bool reached_target = false;
    std::int64_t slots = 0;
    std::uint64_t state_bytes = 0;
    std::uint64_t forward_steps = 0; ///< of one gradient (recomputation included)
    std::uint64_t peak_snapshot_bytes = 0;
    std::uint64_t taped_steps = 0;      ///< of forward_steps, those that kept their tape (taped schedules)
    std::uint64_t tape_bytes = 0;       ///< one step's tape: h_k and the step's gates and outputs
    std::uint64_t peak_tape_bytes = 0;  ///< the most tape bytes held at once
    std::uint64_t store_all_bytes = 0;  ///< T snapshots
    std::uint64_t plain_bptt_bytes = 0; ///< every state and gate activation of every step
    std::optional<bool> bit_identical;  ///< against store-all on one batch; nullopt when store-all would not fit
    std::string blas;
};

/// Called after every iteration with (iteration, its loss).
using training_progress = std::function<void(std::int64_t, double)>;

training_result train_on_cpu(const training_options& o, const training_progress& progress);
/// Throws remat::argument_error where this build has no CUDA; a CUDA error where there is no device.
training_result train_on_cuda(const training_options& o, const training_progress& progress);

} // namespace remat::examples
