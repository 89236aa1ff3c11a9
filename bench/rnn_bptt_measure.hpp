// bench/rnn_bptt's measurement, compiled once per back end (see rnn_bptt_rows.hpp): for each T, plain BPTT
// (the reference gradient and the baseline), then uniform sqrt(T) segments, binomial at their memory and
// binomial at a fraction of plain BPTT's memory, then taped_revolve (steps' tapes kept) at the same two
// memories, then PyTorch's checkpoint_sequential (remat::taped_uniform, sqrt(T) segments) and
// taped_revolve in its memory, each gradient compared bit for bit with plain BPTT's.
// On the CPU the snapshots go to a host store; on the GPU to remat::cuda::device_store (GPU memory), the
// clock is read after cudaDeviceSynchronize, and device memory is counted exactly.
#pragma once

#include "bench_util.hpp"
#include "host_rss.hpp"
#include "rnn_bench_model.hpp"
#include "rnn_bptt_rows.hpp"

#include "remat/cuda/device_store.hpp"
#include "remat/cuda/thrust_traits.hpp"
#include "remat/dense/blas.hpp"
#include "remat/rnn/bptt.hpp"
#include "remat/rnn/layout.hpp"
#include "remat/rnn/sequence_model.hpp"
#include "remat/schedule/any_schedule.hpp"
#include "remat/schedule/budget.hpp"
#include "remat/schedule/revolve.hpp"
#include "remat/schedule/taped_revolve.hpp"
#include "remat/schedule/taped_uniform.hpp"
#include "remat/schedule/uniform.hpp"
#include "remat/store/host_store.hpp"

#if !REMAT_DEVICE_SYSTEM_HOST
#include "device_memory.hpp"
#include "remat/cuda/error.hpp"

#include <cuda_runtime_api.h>
#endif

#include <thrust/device_vector.h>
#include <thrust/host_vector.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <deque>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace remat::bench {

inline namespace REMAT_DENSE_BACKEND_NS {

namespace rnn_bptt_detail {

#if REMAT_DEVICE_SYSTEM_HOST
using snapshot_store = host_store;
inline void finish() {}
#else
using snapshot_store = cuda::device_store; // slots in GPU memory, copies on the store's streams

// Every kernel and copy of the run is done (the store's streams included) before the clock is read.
inline void finish()
{
    const cudaError_t status = cudaDeviceSynchronize();
    if (status != cudaSuccess)
        throw cuda::cuda_error(static_cast<int>(status),
                               std::string("cudaDeviceSynchronize: ") + cudaGetErrorString(status));
}
#endif

inline rnn::sequence<float> random_sequence(std::int64_t input, std::int64_t batch, step_t steps, std::uint64_t seed)
{
    std::mt19937_64 gen(seed);
    std::uniform_real_distribution<double> u(-1, 1);
    std::vector<double> x(static_cast<std::size_t>(input * batch * steps));
    for (double& v : x)
        v = u(gen);
    std::vector<double> t(static_cast<std::size_t>(batch));
    for (double& v : t)
        v = u(gen);
    return rnn::sequence<float>({.input = input, .output = 1, .batch = batch, .steps = steps}, x, t);
}

inline std::vector<float> host(const thrust::device_vector<float>& v)
{
    thrust::host_vector<float> h = v;
    return {h.begin(), h.end()};
}

// Runs `body` `repeats` times, each followed by finish(); the medians of the wall and the process's CPU
// seconds.
template <class Body>
std::pair<double, double> time_both(int repeats, Body&& body)
{
    std::vector<double> wall;
    std::vector<double> cpu;
    for (int i = 0; i < repeats; ++i) {
        timespec c0{};
        timespec c1{};
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
        wall.push_back(time_runs(1, [&] {
                           body();
                           finish();
                       }).front());
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
        cpu.push_back(static_cast<double>(c1.tv_sec - c0.tv_sec) + 1e-9 * static_cast<double>(c1.tv_nsec - c0.tv_nsec));
    }
    return {median(wall), median(cpu)};
}

// The memory of a row, counted in the first round, where each row allocates what it keeps. On the GPU
// its device bytes: its peak as if it ran alone, the bytes it allocated beyond what was held when it
// began, over what the program held before the round (parameters, gradient, workspace, the input
// sequence). The earlier rows' kept buffers are thus not counted against it. On the CPU the growth of the
// process's peak RSS over its RSS when the row began (pages touched, the model's workspace and the data
// already resident).
struct device_memory_probe {
    long long allocations = 0;
    std::uint64_t before = 0;
    std::uint64_t rss_before = 0;
    [[nodiscard]] static std::uint64_t live()
    {
#if REMAT_DEVICE_SYSTEM_HOST
        return 0;
#else
        finish(); // nothing of the last row is in flight
        return static_cast<std::uint64_t>(device_memory::live_bytes());
#endif
    }
    void start()
    {
#if REMAT_DEVICE_SYSTEM_HOST
        reset_peak_rss();
        rss_before = proc_status_bytes("VmRSS");
#else
        before = live();
        device_memory::reset_peak();
        allocations = device_memory::allocations();
#endif
    }
    void stop([[maybe_unused]] rnn_bptt_row& r, [[maybe_unused]] std::uint64_t base)
    {
#if REMAT_DEVICE_SYSTEM_HOST
        const std::uint64_t peak = proc_status_bytes("VmHWM");
        r.rss_growth_bytes = peak > rss_before ? peak - rss_before : 0;
#else
        // Every row allocates (plain BPTT its states and tapes, the others their store's slots).
        if (device_memory::allocations() == allocations)
            throw error("no device allocation was counted during '" + r.method +
                        "' (the benchmark must be linked with --wrap=cudaMalloc: bench_device_memory)");
        r.device_bytes_before = base;
        r.device_peak_bytes = base + (static_cast<std::uint64_t>(device_memory::peak_bytes()) - before);
#endif
    }
};

// A row to time: its plan, the snapshot slots its store gets, and the most snapshot and tape bytes it
// holds at once (0: the report's snapshot peak; taped plans, whose separate peaks would overstate it).
struct planned_row {
    std::string method;
    any_schedule plan;
    slot_t slots;
    std::uint64_t held_bytes;
};

// The runs of one T. A first round, untimed, runs plain BPTT and then every row once, each in its own
// rnn::bptt (its tapes, plain BPTT's buffers) with its own store (its slots), allocating them: there its
// gradient, counts and device peak are taken. Each keeps what it allocated, as a training loop's later
// calls do, so the timed rounds that follow allocate nothing, for plain BPTT (as PyTorch's caching
// allocator keeps its activations' memory) as for the rows. Each timed round runs plain BPTT, then every
// row once, the rows' order rotated from round to round, every odd round the previous one's reversed. A row's time
// against plain is the median over rounds of its time over that round's plain BPTT: this VM's speed drifts by tens of
// percent within minutes, and a ratio of two runs a minute apart keeps little of that drift, where medians of runs made
// far apart (each row's repeats back to back) kept all of it. Every gradient of every round is compared
// with plain BPTT's.
inline void measure_rounds(const rnn_bptt_options& o, step_t steps, rnn::sequence_model<float>& model,
                           const rnn::sequence<float>& data, thrust::device_vector<float>& grad,
                           std::uint64_t workspace, const std::vector<planned_row>& plans, rnn_bptt_result& result)
{
    const auto repeats = static_cast<std::size_t>(o.repeats);
    rnn_bptt_row plain{.method = "plain BPTT", .steps = steps, .slots = steps};
    std::vector<rnn_bptt_row> rows;
    for (const planned_row& p : plans)
        rows.push_back({.method = p.method, .steps = steps, .slots = p.slots});
    std::vector<double> plain_wall(repeats);
    std::vector<double> plain_cpu(repeats);
    std::vector<double> forward_step(repeats);
    thrust::device_vector<float> sweep_state(static_cast<std::size_t>(model.state_size()));
    // One untaped forward sweep over the sequence: the model's forward step alone.
    const auto run_forward_sweep = [&] {
        dense::fill(model.blas(), dense::view(sweep_state), 0.0F);
        for (step_t k = 0; k < steps; ++k)
            model.step(k, data, dense::view(sweep_state));
    };
    std::vector<std::vector<double>> wall(rows.size(), std::vector<double>(repeats));
    std::vector<std::vector<double>> cpu(rows.size(), std::vector<double>(repeats));
    // Where each run's time went, per round (the driver's report): forward steps, adjoint steps, the rest.
    using split = std::array<double, 3>;
    std::vector<split> plain_split(repeats);
    std::vector<std::vector<split>> row_split(rows.size(), std::vector<split>(repeats));
    const auto split_of = [](const run_report& r) -> split {
        return {r.forward_seconds, r.adjoint_seconds, std::max(0.0, r.remat_seconds())}; // (clocks: -1 ns)
    };
    split last{};
    std::vector<float> reference;
    std::optional<rnn::bptt<float>> plain_bp;
    std::deque<rnn::bptt<float>> bps; // per row, in plan order (a deque: made one by one, never moved)
    std::deque<snapshot_store> stores;
    const auto run_plain = [&] {
        const rnn::bptt_result r = plain_bp->plain_gradient(data, grad);
        plain.forward_steps = r.report.forward_steps;
        plain.memory_bytes = r.report.peak_snapshot_bytes + workspace;
        last = split_of(r.report);
    };
    const auto run_row = [&](std::size_t i) {
        const planned_row& p = plans[i];
        rnn_bptt_row& r = rows[i];
        const rnn::bptt_result res = bps[i].gradient(p.plan, stores[i], data, grad, {.time_user_code = true});
        // every reverse without a tape re-runs its step
        r.forward_steps = res.report.forward_steps + res.report.reverse_steps - res.report.tape_reverses;
        r.memory_bytes = (p.held_bytes != 0 ? p.held_bytes : res.report.peak_snapshot_bytes) + workspace;
        last = split_of(res.report);
        const std::vector<float> g = host(grad);
        r.identical = r.identical && std::memcmp(g.data(), reference.data(), g.size() * sizeof(float)) == 0;
    };

    // The first round: every run allocates what it keeps.
    device_memory_probe probe;
    const std::uint64_t base = device_memory_probe::live();
    probe.start();
    plain_bp.emplace(model);
    run_plain();
    finish();
    probe.stop(plain, base);
    reference = host(grad);
    for (std::size_t i = 0; i < rows.size(); ++i) {
        probe.start();
        bps.emplace_back(model);
        stores.emplace_back(plans[i].slots);
        run_row(i);
        finish();
        probe.stop(rows[i], base);
    }
    std::fprintf(stderr, "rnn_bptt: T = %lld, the first round (untimed: every run allocating what it keeps) done\n",
                 static_cast<long long>(steps));

    for (std::size_t round = 0; round < repeats; ++round) {
        std::tie(plain_wall[round], plain_cpu[round]) = time_both(1, run_plain);
        plain_split[round] = last;
        forward_step[round] = time_both(1, run_forward_sweep).first / static_cast<double>(steps);
        std::fprintf(stderr, "rnn_bptt: T = %lld, round %zu of %zu, plain BPTT: %.3f s\n",
                     static_cast<long long>(steps), round + 1, repeats, plain_wall[round]);
        for (std::size_t n = 0; n < rows.size(); ++n) {
            // Rotated, and every odd round runs the previous round's order reversed: no row always runs
            // first or last, and each pair of rows runs in both orders. (In plain rotation a row always ran
            // right after the one listed before it; head to head, the second of two rows tended to be 1-3%
            // slower: docs/rnn.md.)
            const std::size_t m = round % 2 == 0 ? n : rows.size() - 1 - n;
            const std::size_t i = (m + round / 2) % rows.size();
            std::tie(wall[i][round], cpu[i][round]) = time_both(1, [&] { run_row(i); });
            row_split[i][round] = last;
            std::fprintf(stderr, "rnn_bptt: T = %lld, round %zu of %zu, %s: %.3f s (%.3f x plain)\n",
                         static_cast<long long>(steps), round + 1, repeats, plans[i].method.c_str(), wall[i][round],
                         wall[i][round] / plain_wall[round]);
        }
    }
    const auto ratio_median = [&](const std::vector<double>& times, const std::vector<double>& base_times) {
        std::vector<double> ratios(repeats);
        for (std::size_t k = 0; k < repeats; ++k)
            ratios[k] = times[k] / base_times[k];
        return median(ratios);
    };
    const auto set_split = [&](rnn_bptt_row& r, const std::vector<split>& rounds) {
        std::array<std::vector<double>, 3> parts;
        for (const split& t : rounds)
            for (std::size_t j = 0; j < 3; ++j)
                parts[j].push_back(t[j]);
        r.forward_seconds = median(parts[0]);
        r.adjoint_seconds = median(parts[1]);
        r.remat_seconds = median(parts[2]);
    };
    plain.seconds = median(plain_wall);
    plain.cpu_seconds = median(plain_cpu);
    plain.wall_vs_plain = 1;
    plain.cpu_vs_plain = 1;
    plain.forward_step_seconds = median(forward_step);
    set_split(plain, plain_split);
    result.rows.push_back(plain);
    for (std::size_t i = 0; i < rows.size(); ++i) {
        rows[i].seconds = median(wall[i]);
        rows[i].cpu_seconds = median(cpu[i]);
        rows[i].wall_vs_plain = ratio_median(wall[i], plain_wall);
        rows[i].cpu_vs_plain = ratio_median(cpu[i], plain_cpu);
        set_split(rows[i], row_split[i]);
        result.rows.push_back(rows[i]);
    }
}

} // namespace rnn_bptt_detail

inline rnn_bptt_result measure_rnn_bptt(const rnn_bptt_options& o, std::string device)
{
    using namespace rnn_bptt_detail;
    rnn_bench_model bench(o.cell, o.input, o.hidden, o.batch, o.flush_denormals);
    rnn::sequence_model<float>& model = bench.model;
    const rnn::bptt<float> bp(model); // for the sizes of a state and a tape
    thrust::device_vector<float> grad(static_cast<std::size_t>(model.parameter_count()));
    const std::uint64_t workspace = static_cast<std::uint64_t>(model.workspace_size()) * sizeof(float);
    const std::uint64_t state_bytes = bp.state_bytes();
    // A tape of taped_revolve: h_k and the step's gates and outputs, planned in whole states.
    const slot_t tape_units = tape_units_for(bp.tape_bytes(), state_bytes);
    rnn_bptt_result result{.blas = dense::blas::library(), .device = std::move(device), .rows = {}};
    for (const std::int64_t steps : o.steps) {
        const rnn::sequence<float> data = random_sequence(o.input, o.batch, steps, 7);
        // Plain BPTT's memory, every state and tape (its report's peak_snapshot_bytes): the 5% rows' budget
        // is a fraction of it.
        const std::uint64_t plain_bytes = static_cast<std::uint64_t>(steps) * bp.tape_bytes() + workspace;
        // Every plan is made before any run is timed (a taped one takes up to a minute at T = 10^4).
        std::vector<planned_row> plans;
        const auto wanted = [&](std::string_view key) {
            return o.rows.empty() || std::find(o.rows.begin(), o.rows.end(), key) != o.rows.end();
        };
        const auto every = static_cast<step_t>(std::ceil(std::sqrt(static_cast<double>(steps))));
        const uniform segments(steps, every);
        const slot_t uniform_slots = segments.cost().peak_slots;
        if (wanted("uniform"))
            plans.push_back({"uniform sqrt(T)", segments, uniform_slots, 0});
        if (wanted("binomial-equal"))
            plans.push_back({"binomial (equal memory)", revolve(steps, uniform_slots), uniform_slots, 0});
        const auto budget = static_cast<std::uint64_t>(o.fraction * static_cast<double>(plain_bytes));
        // (at least one slot: at tiny sizes the workspace alone can exceed the fraction)
        const auto slots =
            std::max<slot_t>(1, static_cast<slot_t>((budget - std::min(budget, workspace)) / state_bytes));
        const std::string percent = std::to_string(static_cast<int>(o.fraction * 100 + 0.5)) + "% memory";
        if (wanted("binomial-fraction"))
            plans.push_back({"binomial " + percent, revolve(steps, slots), slots, 0});
        // With tapes, in the same memory (units of one state; the store needs only the plan's snapshots).
        // Their memory is the plan's peak of snapshots and tapes held at once, a tape counted as its
        // whole units (at most a state's bytes more than the tape's own).
        // (Each plan is made only for a row that runs: a taped table takes up to a minute at T = 10^4, past
        // taped_revolve's default work limit, which these rows lift.)
        const auto taped = [&](std::string_view key, const std::string& method, const auto& make) {
            if (!wanted(key))
                return;
            const auto plan = make();
            plans.push_back({method, plan, std::max<slot_t>(plan.cost().peak_slots, 1),
                             static_cast<std::uint64_t>(plan.peak_units()) * state_bytes});
        };
        taped("taped-equal", "taped (equal memory)",
              [&] { return taped_revolve(steps, uniform_slots, tape_units, 1, 1, UINT64_MAX); });
        taped("taped-fraction", "taped " + percent,
              [&] { return taped_revolve(steps, slots, tape_units, 1, 1, UINT64_MAX); });
        // PyTorch's checkpoint_sequential with sqrt(T) segments (segment inputs kept, each segment re-run
        // with its tapes), then remat's optimal taped plan in the memory it holds.
        // (--segments: one pair of rows per segment count, segments of ceil(T / count) steps.)
        const auto sequential_pair = [&](step_t length, const std::string& suffix) {
            const taped_uniform sequential(steps, length, tape_units);
            taped("checkpoint-sequential", "checkpoint_sequential" + suffix, [&] { return sequential; });
            taped("taped-its-memory", "taped (its memory" + suffix + ")",
                  [&] { return taped_revolve(steps, sequential.peak_units(), tape_units, 1, 1, UINT64_MAX); });
        };
        if (o.segments.empty())
            sequential_pair(every, "");
        for (const std::int64_t count : o.segments)
            sequential_pair((steps + count - 1) / count, ", " + std::to_string(count) + " segments");
        measure_rounds(o, steps, model, data, grad, workspace, plans, result);
    }
    return result;
}

} // namespace REMAT_DENSE_BACKEND_NS

} // namespace remat::bench
