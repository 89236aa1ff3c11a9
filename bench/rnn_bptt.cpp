// rnn_bptt — back-propagation through time of a GRU (or LSTM), B = 64, H = 256, float, on the CPU (Thrust
// CPP, OpenBLAS) or on the GPU (--device cuda: Thrust CUDA, cuBLAS, snapshots in GPU memory), from one
// source: remat's binomial schedule against uniform segments of sqrt(T) (what PyTorch's
// checkpoint_sequential does) at equal memory, and against plain BPTT (every hidden state and gate
// activation kept). An untimed first round, in which every run allocates the buffers it keeps for the
// next calls (as a training loop's first iteration), then --repeats rounds, each running plain BPTT and then
// every row once (the rows' order rotated, every odd round the previous one's reversed); a row's time against plain
// BPTT is the median over the rounds of its ratio to that round's plain BPTT, of wall time and of the process's CPU
// time (run with OPENBLAS_NUM_THREADS=1 so that BLAS threads do not spin). Every gradient is checked bit for bit
// against plain BPTT's. On the GPU the clock is read after cudaDeviceSynchronize and the device memory is counted
// exactly (every allocation, bench/device_memory.hpp).
//
//     OPENBLAS_NUM_THREADS=1 build/bench/rnn_bptt       # T = 1000 and 10000 (many minutes on 2 cores)
//     build/bench/rnn_bptt --steps 1000 --repeats 5 --format json
//     build/bench/rnn_bptt --device cuda --format json  # exit 77 saying so where there is no CUDA device
//
// Rows per T:
//   plain BPTT       every state and tape kept: the memory and time baseline
//   uniform sqrt(T)  a checkpoint every ceil(sqrt(T)) steps, that segment's states kept while reversing it
//   binomial (equal) remat::revolve with the uniform plan's peak slots
//   binomial 5%      remat::revolve with 5% of plain BPTT's memory in snapshots
//   taped (equal)    remat::taped_revolve in the uniform plan's memory, snapshots and tapes together (a
//                    tape, h_k and the step's gates, planned as whole states; docs/tapes.md)
//   taped 5%         remat::taped_revolve in the binomial 5% row's memory
//   checkpoint_sequential  PyTorch's plan (remat::taped_uniform): sqrt(T) segments' inputs kept, each
//                    segment re-run keeping its tapes
//   taped (its memory)     remat::taped_revolve in the memory checkpoint_sequential holds
// (Planning a taped row takes up to a minute at T = 10^4; it is not in the timed runs.) --rows runs only
// the rows named (by the keys --help lists) besides plain BPTT, e.g. two rows head to head in many rounds;
// --segments 32,100 runs the checkpoint-sequential and taped-its-memory pair once per segment count.
// Each round also times an untaped forward sweep (the model's forward step, reported with plain BPTT),
// and on the CPU each row reports the growth of the process's peak RSS while it first ran (rss_growth_bytes;
// bench/rnn_vs_torch.py sets these beside PyTorch's own).
// Each row also reports where its time went: in the forward steps, in the adjoint steps, and the rest
// (remat's: snapshot copies, the schedule), medians over the rounds.
#include "rnn_bptt_rows.hpp"

#include "remat/error.hpp"
#include "remat/report/json.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

using namespace remat;

namespace {

constexpr int exit_no_device = 77; // what test harnesses read as "skipped"

double ratio(std::uint64_t a, std::uint64_t b)
{
    return static_cast<double>(a) / static_cast<double>(b);
}

void write_json(const bench::rnn_bptt_options& o, const bench::rnn_bptt_result& res, const std::string& device)
{
    nlohmann::ordered_json j;
    j["device"] = device;
    j["device_name"] = res.device;
    j["blas"] = res.blas;
    j["cell"] = o.cell;
    j["batch"] = o.batch;
    j["hidden"] = o.hidden;
    j["input"] = o.input;
    j["repeats"] = o.repeats;
    j["flush_denormals"] = o.flush_denormals;
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    const bench::rnn_bptt_row* base = nullptr;
    for (const bench::rnn_bptt_row& r : res.rows) {
        if (r.method == "plain BPTT")
            base = &r;
        nlohmann::ordered_json row{{"steps", r.steps},
                                   {"method", r.method},
                                   {"slots", r.slots},
                                   {"step_evaluations", r.forward_steps},
                                   {"memory_bytes", r.memory_bytes},
                                   {"seconds", r.seconds},
                                   {"cpu_seconds", r.cpu_seconds},
                                   {"memory_vs_plain", ratio(r.memory_bytes, base->memory_bytes)},
                                   {"time_vs_plain", r.wall_vs_plain},
                                   {"cpu_vs_plain", r.cpu_vs_plain},
                                   {"forward_seconds", r.forward_seconds},
                                   {"adjoint_seconds", r.adjoint_seconds},
                                   {"remat_seconds", r.remat_seconds},
                                   {"bit_identical_to_plain", r.identical}};
        if (r.method == "plain BPTT")
            row["forward_step_seconds"] = r.forward_step_seconds;
        if (r.rss_growth_bytes)
            row["rss_growth_bytes"] = *r.rss_growth_bytes;
        if (r.device_peak_bytes) {
            row["device_peak_bytes"] = *r.device_peak_bytes;
            row["device_bytes_before"] = *r.device_bytes_before;
            row["device_peak_vs_plain"] = ratio(*r.device_peak_bytes, *base->device_peak_bytes);
        }
        list.push_back(row);
    }
    j["rows"] = list;
    report::write_json(std::cout, j);
}

void write_text(const bench::rnn_bptt_options& o, const bench::rnn_bptt_result& res)
{
    std::printf(
        "BPTT of a %s, batch %lld, hidden %lld, input %lld, float%s, on %s, %s; medians of %d warm rounds (x/plain: "
        "of each round's ratio)\n",
        o.cell.c_str(), static_cast<long long>(o.batch), static_cast<long long>(o.hidden),
        static_cast<long long>(o.input), o.flush_denormals ? " (subnormals flushed)" : "", res.device.c_str(),
        res.blas.c_str(), o.repeats);
    const bool gpu = !res.rows.empty() && res.rows.front().device_peak_bytes.has_value();
    std::printf("%7s  %-24s %7s %11s %11s %8s %8s %9s %9s %9s %8s %8s %8s", "T", "method", "slots", "step evals",
                "memory MiB", "wall s", "cpu s", "mem/plain", "wall/plain", "cpu/plain", "fwd s", "adj s", "remat s");
    if (gpu)
        std::printf(" %12s %10s", "dev peak MiB", "peak/plain");
    std::printf("  bits\n");
    const bench::rnn_bptt_row* base = nullptr;
    for (const bench::rnn_bptt_row& r : res.rows) {
        if (r.method == "plain BPTT")
            base = &r;
        std::printf("%7lld  %-24s %7lld %11llu %11.1f %8.3f %8.3f %9.3f %9.3f %9.3f", static_cast<long long>(r.steps),
                    r.method.c_str(), static_cast<long long>(r.slots), static_cast<unsigned long long>(r.forward_steps),
                    static_cast<double>(r.memory_bytes) / (1 << 20), r.seconds, r.cpu_seconds,
                    ratio(r.memory_bytes, base->memory_bytes), r.wall_vs_plain, r.cpu_vs_plain);
        std::printf(" %8.3f %8.3f %8.3f", r.forward_seconds, r.adjoint_seconds, r.remat_seconds);
        if (gpu)
            std::printf(" %12.1f %10.3f", static_cast<double>(*r.device_peak_bytes) / (1 << 20),
                        ratio(*r.device_peak_bytes, *base->device_peak_bytes));
        std::printf("  %s\n", r.identical ? "identical" : "DIFFERENT");
    }
    for (const bench::rnn_bptt_row& r : res.rows)
        if (r.method == "plain BPTT")
            std::printf("T = %lld: one untaped forward step %.3f ms (median over the rounds)\n",
                        static_cast<long long>(r.steps), r.forward_step_seconds * 1e3);
}

} // namespace

int main(int argc, char** argv)
{
    bench::rnn_bptt_options o;
    std::string device = "cpu";
    std::string format = "text";
    CLI::App app{"BPTT: binomial checkpointing against uniform segments and plain BPTT", "rnn_bptt"};
    app.add_option("--steps", o.steps, "sequence lengths T")->capture_default_str();
    app.add_option("--batch", o.batch)->capture_default_str();
    app.add_option("--hidden", o.hidden)->capture_default_str();
    app.add_option("--input", o.input, "input features")->capture_default_str();
    app.add_option("--cell", o.cell, "gru or lstm")->capture_default_str();
    app.add_option("--repeats", o.repeats,
                   "timed rounds, after an untimed one that allocates: each runs plain BPTT and every row once "
                   "(medians reported)")
        ->capture_default_str();
    app.add_option("--memory-fraction", o.fraction, "snapshot memory of the last row, of plain BPTT's")
        ->capture_default_str();
    app.add_option("--rows", o.rows,
                   "only these rows (plain BPTT always runs): uniform binomial-equal binomial-fraction taped-equal "
                   "taped-fraction checkpoint-sequential taped-its-memory")
        ->delimiter(',');
    app.add_option("--segments", o.segments,
                   "segment counts of the checkpoint-sequential and taped-its-memory rows, a pair of rows each "
                   "(default: segments of ceil(sqrt(T)) steps)")
        ->delimiter(',');
    app.add_flag("--flush-denormals", o.flush_denormals,
                 "subnormal floats as zero in the model's steps (x86 CPU: MXCSR FTZ and DAZ, as "
                 "torch.set_flush_denormal(True)); the backward steps of a long sequence run several times faster");
    app.add_option("--device", device, "cpu or cuda (GPU: cuBLAS, snapshots in GPU memory)")->capture_default_str();
    app.add_option("--format", format, "text or json")->capture_default_str();
    CLI11_PARSE(app, argc, argv);
    try {
        if (device != "cpu" && device != "cuda")
            throw argument_error("device '" + device + "' (expected cpu or cuda)");
        if (format != "text" && format != "json")
            throw argument_error("format '" + format + "' (expected text or json)");
        for (const std::string& key : o.rows)
            if (std::find(bench::rnn_bptt_row_keys.begin(), bench::rnn_bptt_row_keys.end(), key) ==
                bench::rnn_bptt_row_keys.end())
                throw argument_error("row '" + key + "' (see --help for the rows)");
        for (const std::int64_t count : o.segments)
            for (const std::int64_t steps : o.steps)
                if (count < 1 || count > steps)
                    throw argument_error("segments " + std::to_string(count) +
                                         " (expected 1 to T = " + std::to_string(steps) + ")");
        if (o.repeats < 1)
            throw argument_error("repeats " + std::to_string(o.repeats) + " (expected at least 1)");
        const bench::rnn_bptt_result res =
            device == "cuda" ? bench::measure_rnn_bptt_on_cuda(o) : bench::measure_rnn_bptt_on_cpu(o);
        if (format == "json")
            write_json(o, res, device);
        else
            write_text(o, res);
        // A gradient that differs from plain BPTT's is a defect, not a figure: the exit status says so, so that
        // a runner that reads only the status fails too (CTest reads the JSON as well).
        for (const auto& r : res.rows)
            if (!r.identical) {
                std::fprintf(stderr, "rnn_bptt: T = %lld, %s: the gradient differs from plain BPTT's\n",
                             static_cast<long long>(r.steps), r.method.c_str());
                return 1;
            }
        return 0;
    } catch (const bench::no_device_error& e) {
        std::fprintf(stderr, "rnn_bptt: --device cuda: %s\n", e.what());
        return exit_no_device;
    } catch (const argument_error& e) {
        std::fprintf(stderr, "rnn_bptt: %s\n", e.what());
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "rnn_bptt: %s\n", e.what());
        return 1;
    }
}
