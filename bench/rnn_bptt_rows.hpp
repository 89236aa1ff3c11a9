// bench/rnn_bptt: what a run is asked to measure and what each row reports, as plain types, so that the
// command line (rnn_bptt.cpp) is compiled once and the measurement (rnn_bptt_measure.hpp) once per back
// end: rnn_bptt_cpu.cpp (Thrust CPP, OpenBLAS) and rnn_bptt_cuda.cu (CUDA, cuBLAS, the device store).
#pragma once

#include "remat/error.hpp"
#include "remat/types.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace remat::bench {

/// The rows a run can be limited to (--rows), in the order they run; plain BPTT always runs (the baseline).
inline constexpr std::array<std::string_view, 7> rnn_bptt_row_keys{
    "uniform",        "binomial-equal",        "binomial-fraction", "taped-equal",
    "taped-fraction", "checkpoint-sequential", "taped-its-memory"};

struct rnn_bptt_options {
    std::vector<std::int64_t> steps{1000, 10000}; ///< sequence lengths T
    std::int64_t batch = 64;
    std::int64_t hidden = 256;
    std::int64_t input = 32;
    std::string cell = "gru";
    int repeats = 3;                 ///< rounds: each runs plain BPTT and then every row once
    double fraction = 0.05;          ///< snapshot memory of the last row, of plain BPTT's
    std::vector<std::string> rows{}; ///< keys of rnn_bptt_row_keys to run (empty: every row)
    /// Segment counts of the checkpoint-sequential and taped-its-memory rows, one pair of rows each
    /// (empty: one pair, segments of ceil(sqrt(T)) steps)
    std::vector<std::int64_t> segments{};
    /// Subnormals flushed to zero in the model's steps (sequence_model::set_flush_denormals; the CPU only)
    bool flush_denormals = false;
};

struct rnn_bptt_row {
    std::string method;
    step_t steps = 0;
    std::int64_t slots = 0;
    std::uint64_t forward_steps = 0; ///< step evaluations: advances plus the re-run in each adjoint (plain: T)
    std::uint64_t memory_bytes = 0;  ///< snapshots (plain: every state and tape), plus one step's workspace
    double seconds = 0;              ///< median wall time (on the GPU: after cudaDeviceSynchronize)
    double cpu_seconds = 0;          ///< median CPU time of the process (steadier on a shared machine)
    /// Medians over the rounds of the row's time over the same round's plain BPTT (wall and CPU): the
    /// figures to compare, since a round's runs are minutes apart at most (rnn_bptt_measure.hpp).
    double wall_vs_plain = 0;
    double cpu_vs_plain = 0;
    /// Medians over the rounds of where the time went (the driver's report; plain BPTT: its forward sweep
    /// and its backward sweep): inside the forward steps (taped ones included), inside the adjoint steps
    /// (those that re-run their step and those that read a tape), and the rest (snapshot copies, the
    /// schedule, bookkeeping).
    double forward_seconds = 0;
    double adjoint_seconds = 0;
    double remat_seconds = 0;
    bool identical = true; ///< gradient bits equal plain BPTT's
    /// GPU only: the most device bytes the program held at once during the row (every cudaMalloc and
    /// cudaMallocAsync of its own, counted; bench/device_memory.hpp), and what it held before the row
    /// began (parameters, gradient, the model's workspace, the input sequence).
    std::optional<std::uint64_t> device_peak_bytes{};
    std::optional<std::uint64_t> device_bytes_before{};
    /// CPU only: how far the process's peak RSS rose above its RSS when the row began, in the first round
    /// (where the row allocates what it keeps): the memory the row measurably took (bench/host_rss.hpp).
    std::optional<std::uint64_t> rss_growth_bytes{};
    /// Plain BPTT's row only: one untaped forward step of the model (sequence_model::step), seconds, the
    /// median over the rounds of a sweep over the T steps (each round timed next to plain BPTT).
    double forward_step_seconds = 0;
};

struct rnn_bptt_result {
    std::string blas;
    std::string device; ///< "CPU" or the GPU's name
    std::vector<rnn_bptt_row> rows;
};

/// --device cuda where there is none to run on: this build has no CUDA, or this machine no usable device.
struct no_device_error : error {
    using error::error;
};

rnn_bptt_result measure_rnn_bptt_on_cpu(const rnn_bptt_options& o);
/// Throws no_device_error (before anything else) where this build has no CUDA or the machine no usable
/// CUDA device; remat::cuda::cuda_error for a CUDA failure during the run.
rnn_bptt_result measure_rnn_bptt_on_cuda(const rnn_bptt_options& o);

} // namespace remat::bench
