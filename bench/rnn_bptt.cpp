// rnn_bptt — back-propagation through time of a GRU (or LSTM) on the CPU, B = 64, H = 256, float:
// remat's binomial schedule against uniform segments of sqrt(T) (what PyTorch's checkpoint_sequential
// does) at equal memory, and against plain BPTT (every hidden state and gate activation kept). Medians of
// --repeats runs of wall time and of the process's CPU time (steadier where other work shares the
// machine; run with OPENBLAS_NUM_THREADS=1 so that BLAS threads do not spin on it), ratios against
// baselines measured in the same run; every gradient is checked bit for bit against plain BPTT's.
//
//     OPENBLAS_NUM_THREADS=1 build/bench/rnn_bptt       # T = 1000 and 10000 (many minutes on 2 cores)
//     build/bench/rnn_bptt --steps 1000 --repeats 5 --format json
//
// Rows per T:
//   plain BPTT       every state and tape kept: the memory and time baseline
//   uniform sqrt(T)  a checkpoint every ceil(sqrt(T)) steps, that segment's states kept while reversing it
//   binomial (equal) remat::revolve with the uniform plan's peak slots
//   binomial 5%      remat::revolve with 5% of plain BPTT's memory in snapshots
#include "bench_util.hpp"

#include "remat/cuda/thrust_traits.hpp"
#include "remat/dense/blas.hpp"
#include "remat/report/json.hpp"
#include "remat/rnn/bptt.hpp"
#include "remat/rnn/layout.hpp"
#include "remat/rnn/sequence_model.hpp"
#include "remat/schedule/any_schedule.hpp"
#include "remat/schedule/revolve.hpp"
#include "remat/schedule/uniform.hpp"
#include "remat/store/host_store.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <iostream>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

using namespace remat;

namespace {

struct row {
    std::string method;
    step_t steps = 0;
    std::int64_t slots = 0;
    std::uint64_t forward_steps = 0; ///< step evaluations: advances plus the re-run in each adjoint (plain: T)
    std::uint64_t memory_bytes = 0;  ///< snapshots (plain: every state and tape), plus one step's workspace
    double seconds = 0;              ///< median wall time
    double cpu_seconds = 0;          ///< median CPU time of the process (steadier on a shared machine)
    bool identical = true;           ///< gradient bits equal plain BPTT's
};

rnn::sequence<float> random_sequence(std::int64_t input, std::int64_t batch, step_t steps, std::uint64_t seed)
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

std::vector<float> host(const thrust::device_vector<float>& v)
{
    thrust::host_vector<float> h = v;
    return {h.begin(), h.end()};
}

// Runs `body` `repeats` times; the medians of the wall and the process's CPU seconds.
template <class Body>
std::pair<double, double> time_both(int repeats, Body&& body)
{
    std::vector<double> wall;
    std::vector<double> cpu;
    for (int i = 0; i < repeats; ++i) {
        timespec c0{};
        timespec c1{};
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
        wall.push_back(bench::time_runs(1, body).front());
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
        cpu.push_back(static_cast<double>(c1.tv_sec - c0.tv_sec) + 1e-9 * static_cast<double>(c1.tv_nsec - c0.tv_nsec));
    }
    return {bench::median(wall), bench::median(cpu)};
}

} // namespace

int main(int argc, char** argv)
{
    std::vector<std::int64_t> steps_list{1000, 10000};
    std::int64_t batch = 64;
    std::int64_t hidden = 256;
    std::int64_t input = 32;
    int repeats = 3;
    std::string cell = "gru";
    std::string format = "text";
    double fraction = 0.05;
    CLI::App app{"BPTT: binomial checkpointing against uniform segments and plain BPTT", "rnn_bptt"};
    app.add_option("--steps", steps_list, "sequence lengths T")->capture_default_str();
    app.add_option("--batch", batch)->capture_default_str();
    app.add_option("--hidden", hidden)->capture_default_str();
    app.add_option("--input", input, "input features")->capture_default_str();
    app.add_option("--cell", cell, "gru or lstm")->capture_default_str();
    app.add_option("--repeats", repeats, "runs per measurement (the median is reported)")->capture_default_str();
    app.add_option("--memory-fraction", fraction, "snapshot memory of the last row, of plain BPTT's")
        ->capture_default_str();
    app.add_option("--format", format, "text or json")->capture_default_str();
    CLI11_PARSE(app, argc, argv);

    const rnn::rnn_layout layout(
        {.cell = rnn::parse_cell(cell), .input = input, .hidden = hidden, .layers = 1, .output = 1});
    dense::blas b;
    rnn::sequence_model<float> model(b, layout, batch);
    model.set_parameters(layout.initial_parameters(1));
    rnn::bptt<float> bp(model);
    thrust::device_vector<float> grad(static_cast<std::size_t>(model.parameter_count()));
    const std::uint64_t workspace = static_cast<std::uint64_t>(model.workspace_size()) * sizeof(float);
    const std::uint64_t state_bytes = bp.state_bytes();
    std::vector<row> rows;
    for (const std::int64_t steps : steps_list) {
        const rnn::sequence<float> data = random_sequence(input, batch, steps, 7);
        // Plain BPTT: the reference gradient and the baseline.
        row plain{.method = "plain BPTT", .steps = steps, .slots = steps};
        std::vector<float> reference;
        std::tie(plain.seconds, plain.cpu_seconds) = time_both(repeats, [&] {
            const rnn::bptt_result r = bp.plain_gradient(data, grad);
            plain.forward_steps = r.report.forward_steps;
            plain.memory_bytes = r.report.peak_snapshot_bytes + workspace;
        });
        reference = host(grad);
        std::fprintf(stderr, "rnn_bptt: T = %lld, plain BPTT: %.3f s\n", static_cast<long long>(steps), plain.seconds);
        rows.push_back(plain);
        auto measure = [&](const std::string& method, const any_schedule& plan, slot_t slots) {
            row r{.method = method, .steps = steps, .slots = slots};
            host_store store(slots);
            std::tie(r.seconds, r.cpu_seconds) = time_both(repeats, [&] {
                const rnn::bptt_result res = bp.gradient(plan, store, data, grad);
                r.forward_steps = res.report.forward_steps + static_cast<std::uint64_t>(steps);
                r.memory_bytes = res.report.peak_snapshot_bytes + workspace;
            });
            const std::vector<float> g = host(grad);
            r.identical = std::memcmp(g.data(), reference.data(), g.size() * sizeof(float)) == 0;
            std::fprintf(stderr, "rnn_bptt: T = %lld, %s: %.3f s\n", static_cast<long long>(steps), method.c_str(),
                         r.seconds);
            rows.push_back(r);
        };
        const auto every = static_cast<step_t>(std::ceil(std::sqrt(static_cast<double>(steps))));
        const uniform segments(steps, every);
        const auto uniform_slots = static_cast<slot_t>(segments.cost().peak_slots);
        measure("uniform sqrt(T)", segments, uniform_slots);
        measure("binomial (equal memory)", revolve(steps, uniform_slots), uniform_slots);
        const auto budget = static_cast<std::uint64_t>(fraction * static_cast<double>(plain.memory_bytes));
        const auto slots = static_cast<slot_t>((budget - std::min(budget, workspace)) / state_bytes);
        measure("binomial " + std::to_string(static_cast<int>(fraction * 100 + 0.5)) + "% memory",
                revolve(steps, slots), slots);
    }

    if (format == "json") {
        nlohmann::ordered_json j;
        j["blas"] = dense::blas::library();
        j["cell"] = cell;
        j["batch"] = batch;
        j["hidden"] = hidden;
        j["input"] = input;
        j["repeats"] = repeats;
        nlohmann::ordered_json list = nlohmann::ordered_json::array();
        const row* base = nullptr;
        for (const row& r : rows) {
            if (r.method == "plain BPTT")
                base = &r;
            list.push_back(
                {{"steps", r.steps},
                 {"method", r.method},
                 {"slots", r.slots},
                 {"step_evaluations", r.forward_steps},
                 {"memory_bytes", r.memory_bytes},
                 {"seconds", r.seconds},
                 {"memory_vs_plain", static_cast<double>(r.memory_bytes) / static_cast<double>(base->memory_bytes)},
                 {"time_vs_plain", r.seconds / base->seconds},
                 {"bit_identical_to_plain", r.identical}});
        }
        j["rows"] = list;
        report::write_json(std::cout, j);
        return 0;
    }
    std::printf("BPTT of a %s, batch %lld, hidden %lld, input %lld, float, %s; medians of %d runs\n", cell.c_str(),
                static_cast<long long>(batch), static_cast<long long>(hidden), static_cast<long long>(input),
                dense::blas::library(), repeats);
    std::printf("%7s  %-24s %7s %11s %11s %8s %8s %9s %9s %9s  %s\n", "T", "method", "slots", "step evals",
                "memory MiB", "wall s", "cpu s", "mem/plain", "wall/plain", "cpu/plain", "bits");
    const row* base = nullptr;
    for (const row& r : rows) {
        if (r.method == "plain BPTT")
            base = &r;
        std::printf(
            "%7lld  %-24s %7lld %11llu %11.1f %8.2f %8.2f %9.3f %9.3f %9.3f  %s\n", static_cast<long long>(r.steps),
            r.method.c_str(), static_cast<long long>(r.slots), static_cast<unsigned long long>(r.forward_steps),
            static_cast<double>(r.memory_bytes) / (1 << 20), r.seconds, r.cpu_seconds,
            static_cast<double>(r.memory_bytes) / static_cast<double>(base->memory_bytes), r.seconds / base->seconds,
            r.cpu_seconds / base->cpu_seconds, r.identical ? "identical" : "DIFFERENT");
    }
    return 0;
}
