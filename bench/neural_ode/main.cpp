// Benchmark: the gradient of a neural-ODE solve (RK4, an MLP field of width W over a batch), by
//   store-all   — remat::run keeping every state x_0..x_{T-2}, the stages recomputed in each adjoint step;
//   revolve 10% — remat::revolve in 10% of store-all's snapshot bytes;
//   revolve 1%  — and in 1%;
//   backprop    — what backpropagation through the solver keeps: every step's stage inputs, stage
//                 derivatives and activations (one recorded rk_stages per step), no recomputation;
// time per gradient (median over --repeats) and peak memory: on the CPU (--device cpu, Thrust CPP and
// OpenBLAS) each variant in a child process of its own, for its peak RSS; on the GPU (--device cuda,
// Thrust CUDA and cuBLAS, snapshots in the device store or pinned host memory) the peak device memory
// allocated by each variant, counted allocation by allocation. Ratios are against store-all in the same
// run; every variant's dL/dp is compared bit for bit with store-all's. With JAX/diffrax in
// build/python-venv, diffrax's RecursiveCheckpointAdjoint with the same checkpoint counts runs on the same
// problem (CPU, float64). The CUDA back end is in a sibling binary, neural_ode_cuda (from the same sources),
// which --device cuda starts in this process's place: linked here, cuBLAS's pages would count in every CPU
// variant's peak RSS. --device cuda without a CUDA device (or in a build without nvcc) prints why and
// exits with 77 ("skipped"); other failures exit with 1.
//
//     build/bench/neural_ode                                    # T = 1000, batch 1024, dims 2 and 64, width 128
//     build/bench/neural_ode --device cuda --repeats 3 --json neural_ode_cuda.json
#include "measure.hpp"

#include "remat/report/json.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

namespace {

using namespace remat;
using namespace remat::bench::neural_ode;

constexpr int skipped = 77; // CTest's SKIP_RETURN_CODE for the GPU test

// diffrax's RecursiveCheckpointAdjoint on the same problem size: median seconds per gradient, or -1 with
// `why` set: no Python environment, or the script's last line on stderr when it failed.
double diffrax_seconds(const problem_size& s, slot_t checkpoints, int repeats, std::string& why)
{
    const std::string python = REMAT_PYTHON_VENV "/bin/python";
    if (!std::filesystem::exists(python)) {
        why = "no JAX in " REMAT_PYTHON_VENV "; scripts/install-python.sh installs it";
        return -1;
    }
    const std::filesystem::path errors =
        std::filesystem::temp_directory_path() / ("remat-neural-ode-diffrax-" + std::to_string(::getpid()) + ".err");
    std::ostringstream cmd;
    cmd << python << " " << REMAT_DIFFRAX_BENCH << " --steps " << s.steps << " --batch " << s.batch << " --dim "
        << s.dim << " --width " << s.width << " --checkpoints " << checkpoints << " --repeats " << repeats << " 2>"
        << errors.string();
    FILE* pipe = ::popen(cmd.str().c_str(), "r");
    if (pipe == nullptr) {
        why = "popen failed";
        return -1;
    }
    double seconds = -1;
    if (std::fscanf(pipe, "%lf", &seconds) != 1)
        seconds = -1;
    const int status = ::pclose(pipe);
    if (seconds <= 0 || status != 0) {
        std::ifstream in(errors);
        std::string line, last; // the exception's line (Python's last "...Error: ..."), else the last line
        bool found_error = false;
        while (std::getline(in, line)) {
            const bool is_error =
                line.find("Error") != std::string::npos || line.find("Exception") != std::string::npos;
            if (!line.empty() && (is_error || !found_error))
                last = line;
            found_error = found_error || is_error;
        }
        why = REMAT_DIFFRAX_BENCH " failed: " + (last.empty() ? "exit status " + std::to_string(status) : last);
        seconds = -1;
    }
    std::filesystem::remove(errors);
    return seconds;
}

} // namespace

int main(int argc, char** argv)
{
    problem_size base;
    std::vector<std::int64_t> dims{2, 64};
    int repeats = 3;
    std::string format = "text";
    std::string device = "cpu";
    std::string snapshots = "device";
    std::string json_file;
    bool with_diffrax = true;
    CLI::App app{"neural_ode: gradient time and peak memory, backprop against remat's schedules", "neural_ode"};
    app.add_option("--steps", base.steps, "RK4 steps")->capture_default_str()->check(CLI::Range(10, 100000000));
    app.add_option("--batch", base.batch, "initial conditions at once")
        ->capture_default_str()
        ->check(CLI::Range(1, 1 << 24));
    app.add_option("--dims", dims, "state dimensions")->capture_default_str()->check(CLI::Range(1, 1 << 16));
    app.add_option("--width", base.width, "hidden width")->capture_default_str()->check(CLI::Range(1, 1 << 16));
    app.add_option("--repeats", repeats, "gradients per variant (median)")
        ->capture_default_str()
        ->check(CLI::Range(1, 1000));
    app.add_option("--device", device, "cpu (Thrust CPP, OpenBLAS; peak RSS) or cuda (cuBLAS; peak device memory)")
        ->capture_default_str()
        ->check(CLI::IsMember({"cpu", "cuda"}));
    auto* snapshots_option =
        app.add_option("--snapshots", snapshots, "with --device cuda: the device store or pinned host memory")
            ->capture_default_str()
            ->check(CLI::IsMember({"device", "pinned"}));
    app.add_flag("!--no-diffrax", with_diffrax, "skip diffrax even where JAX is installed (it runs on the CPU only)");
    app.add_option("--format", format, "text or json")->check(CLI::IsMember({"text", "json"}));
    app.add_option("--json", json_file, "also write the JSON report to this file (one run, both forms)");
    CLI11_PARSE(app, argc, argv);
    const bool on_gpu = device == "cuda";
    if (!on_gpu && snapshots_option->count() > 0) {
        std::cerr << "neural_ode: --snapshots " << snapshots << " needs --device cuda (the CPU keeps them in RAM)\n";
        return 2;
    }
    const snapshot_level level = snapshots == "pinned" ? snapshot_level::pinned_host : snapshot_level::device;
    const std::string where = on_gpu ? (level == snapshot_level::device ? "device" : "pinned host") : "host";
    const char* memory = on_gpu ? "peak device MiB" : "peak RSS MiB";

    std::string gpu;
    if (on_gpu) {
        try {
            hand_over_to_cuda_binary(argv);
            gpu = cuda_device_name();
        } catch (const no_cuda_device& e) {
            std::cerr << "neural_ode: --device cuda: skipped, nothing measured: " << e.what() << '\n';
            return skipped;
        } catch (const std::exception& e) {
            std::cerr << "neural_ode: --device cuda: " << e.what() << '\n';
            return 1;
        }
    }

    nlohmann::ordered_json report = nlohmann::ordered_json::array();
    bool all_identical = true;
    for (const std::int64_t dim : dims) {
        problem_size s = base;
        s.dim = dim;
        const std::uint64_t state = static_cast<std::uint64_t>(s.dim * s.batch) * sizeof(double);
        std::vector<measurement> m;
        try {
            // Progress on stderr (stdout keeps the table or the JSON alone).
            const on_variant starting = [&](const variant& v) {
                std::cerr << "neural_ode: dim " << s.dim << ": " << v.name << " (" << repeats << " gradients)\n";
            };
            m = on_gpu ? measure_on_cuda(s, repeats, level, starting) : measure_on_cpu(s, repeats, starting);
        } catch (const std::exception& e) {
            std::cerr << "neural_ode: " << (on_gpu ? "--device cuda: " : "") << e.what() << '\n';
            return 1;
        }
        const measurement& all = m.front();
        const slot_t store_all_slots = all.what.slots;
        double diffrax10 = -1, diffrax1 = -1;
        std::string diffrax_why;
        if (with_diffrax && !on_gpu) {
            diffrax10 = diffrax_seconds(s, m[1].what.slots, repeats, diffrax_why);
            if (diffrax10 > 0)
                diffrax1 = diffrax_seconds(s, m[2].what.slots, repeats, diffrax_why);
        }
        if (format == "text") {
            std::printf("RK4, T = %lld, batch %lld, dim %lld, width %lld (state %.1f KiB, store-all %.1f MiB), "
                        "%s%s, snapshots in %s memory, median of %d\n",
                        static_cast<long long>(s.steps), static_cast<long long>(s.batch), static_cast<long long>(s.dim),
                        static_cast<long long>(s.width), static_cast<double>(state) / 1024,
                        static_cast<double>(state * static_cast<std::uint64_t>(store_all_slots)) / 1048576.0,
                        on_gpu ? "CUDA on " : "CPU", gpu.c_str(), where.c_str(), repeats);
            std::printf("  %-12s %8s %12s %10s %16s %10s %14s\n", "variant", "slots", "s/gradient", "vs all", memory,
                        "vs all", "dL/dp == all");
            for (const measurement& x : m)
                std::printf("  %-12s %8lld %12.4f %9.2fx %16.1f %9.3fx %14s\n", x.what.name.c_str(),
                            static_cast<long long>(x.what.slots), x.seconds, x.seconds / all.seconds,
                            static_cast<double>(x.peak_bytes) / 1048576.0,
                            static_cast<double>(x.peak_bytes) / static_cast<double>(all.peak_bytes),
                            x.bit_identical ? "bit-identical" : "DIFFERS");
            if (diffrax10 > 0 && diffrax1 > 0)
                std::printf("  diffrax RecursiveCheckpointAdjoint: %lld checkpoints %.3f s (remat %.2fx faster), "
                            "%lld checkpoints %.3f s (remat %.2fx faster)\n",
                            static_cast<long long>(m[1].what.slots), diffrax10, diffrax10 / m[1].seconds,
                            static_cast<long long>(m[2].what.slots), diffrax1, diffrax1 / m[2].seconds);
            else if (with_diffrax && !on_gpu)
                std::printf("  diffrax: not run (%s)\n", diffrax_why.c_str());
            std::fflush(stdout);
        }
        nlohmann::ordered_json j{{"device", device}, {"gpu", gpu},           {"snapshots", where},
                                 {"steps", s.steps}, {"batch", s.batch},     {"dim", s.dim},
                                 {"width", s.width}, {"state_bytes", state}, {"repeats", repeats}};
        const std::string peak_key = on_gpu ? "peak_device_bytes" : "peak_rss_bytes";
        const std::string ratio_key = on_gpu ? "device_memory_vs_store_all" : "rss_vs_store_all";
        for (const measurement& x : m)
            j["variants"].push_back(
                {{"name", x.what.name},
                 {"slots", x.what.slots},
                 {"seconds_per_gradient", x.seconds},
                 {"time_vs_store_all", x.seconds / all.seconds},
                 {peak_key, x.peak_bytes},
                 {ratio_key, static_cast<double>(x.peak_bytes) / static_cast<double>(all.peak_bytes)},
                 {"gradient_checksum", x.checksum},
                 {"bit_identical_vs_store_all", x.bit_identical}});
        for (const measurement& x : m)
            all_identical = all_identical && x.bit_identical;
        j["diffrax_seconds_10pct"] = diffrax10;
        j["diffrax_seconds_1pct"] = diffrax1;
        if (!diffrax_why.empty())
            j["diffrax_not_run"] = diffrax_why;
        report.push_back(j);
    }
    if (format == "json")
        report::write_json(std::cout, report);
    if (!json_file.empty()) {
        try {
            report::write_json_file(json_file, report);
        } catch (const std::exception& e) {
            std::cerr << "neural_ode: --json " << json_file << ": " << e.what() << '\n';
            return 1;
        }
    }
    // A gradient that differs from store-all's is a defect, not a figure: the exit status says so, so that a
    // runner that reads only the status fails too (CTest reads the JSON as well).
    if (!all_identical) {
        std::cerr << "neural_ode: a gradient differs from store-all's (the DIFFERS row)\n";
        return 1;
    }
    return 0;
}
