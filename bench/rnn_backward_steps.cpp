// rnn_backward_steps — plain BPTT of bench/rnn_bptt's model (the same parameters, initial_parameters(1), and
// the same data, seed 7), step by step: each backward step's CPU time and how many elements of the adjoint
// it leaves subnormal. Late in a long sequence's reverse sweep the adjoint decays through the subnormal range,
// where an x86 core takes a microcode assist per instruction on a subnormal; this shows where that window is
// and what each of its steps costs (docs/rnn.md, "Why remat paid more for subnormals than PyTorch"). With
// --dump DIR it also writes the model's parameters, inputs and targets (raw float32, remat's layout) for
// bench/rnn_torch_steps.py, which times PyTorch's cell on the same values.
//
//     OPENBLAS_CORETYPE=SkylakeX OPENBLAS_NUM_THREADS=1 build/bench/rnn_backward_steps --cell lstm --dump /tmp/v
//     OPENBLAS_CORETYPE=SkylakeX OPENBLAS_NUM_THREADS=1 bench/rnn_torch_steps.py --dump /tmp/v
#include "rnn_bench_model.hpp"

#include "remat/error.hpp"
#include "remat/report/json.hpp"
#include "remat/rnn/sequence_model.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <vector>

using namespace remat;

namespace {

struct options {
    std::string cell = "lstm";
    std::int64_t steps = 1000;
    std::int64_t batch = 64;
    std::int64_t hidden = 256;
    std::int64_t input = 32;
    bool flush_denormals = false;
    std::string dump;
    std::string format = "text";
};

double thread_cpu_seconds()
{
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

std::int64_t subnormals(const float* x, std::int64_t n)
{
    std::int64_t count = 0;
    for (std::int64_t i = 0; i < n; ++i)
        count += std::fpclassify(x[i]) == FP_SUBNORMAL ? 1 : 0;
    return count;
}

void write_floats(const std::string& path, const std::vector<float>& values)
{
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(values.data()),
              static_cast<std::streamsize>(values.size() * sizeof(float)));
    if (!out)
        throw io_error("cannot write " + path);
}

struct step_record {
    std::int64_t step;
    double cpu_seconds;
    std::int64_t subnormal_dh; // of the adjoint this step leaves (dL/dh_k)
    std::int64_t subnormal_dc; // (LSTM) dL/dc_k
};

std::vector<step_record> measure(const options& o)
{
    rnn_bench_model bench(o.cell, o.input, o.hidden, o.batch, o.flush_denormals);
    const rnn::rnn_layout& layout = bench.layout;
    rnn::sequence_model<float>& model = bench.model;
    // bench/rnn_bptt's data (its random_sequence, seed 7): inputs then targets, uniform in [-1, 1].
    std::mt19937_64 gen(7);
    std::uniform_real_distribution<double> u(-1, 1);
    std::vector<double> x(static_cast<std::size_t>(o.input * o.batch * o.steps));
    for (double& v : x)
        v = u(gen);
    std::vector<double> t(static_cast<std::size_t>(o.batch));
    for (double& v : t)
        v = u(gen);
    const rnn::sequence<float> data({.input = o.input, .output = 1, .batch = o.batch, .steps = o.steps}, x, t);
    if (!o.dump.empty()) {
        write_floats(o.dump + "/parameters.f32", model.parameters_on_host());
        write_floats(o.dump + "/inputs.f32", std::vector<float>(x.begin(), x.end()));
        write_floats(o.dump + "/targets.f32", std::vector<float>(t.begin(), t.end()));
    }
    const std::int64_t s = model.state_size();
    const std::int64_t tape = model.tape_size();
    const std::int64_t count = o.hidden * o.batch;
    thrust::device_vector<float> states(static_cast<std::size_t>(s * o.steps));
    thrust::device_vector<float> tapes(static_cast<std::size_t>(tape * o.steps));
    thrust::device_vector<float> state(static_cast<std::size_t>(s), 0.0F);
    thrust::device_vector<float> adjoint(static_cast<std::size_t>(s), 0.0F);
    thrust::device_vector<float> grad(static_cast<std::size_t>(model.parameter_count()), 0.0F);
    const dense::vector_view<float> all_states = dense::view(states);
    const dense::vector_view<float> all_tapes = dense::view(tapes);
    for (std::int64_t k = 0; k < o.steps; ++k) {
        dense::copy(bench.blas, dense::view(std::as_const(state)), all_states.sub(k * s, s));
        model.record_step(k, data, dense::view(state), all_tapes.sub(k * tape, tape));
    }
    const float* a = thrust::raw_pointer_cast(adjoint.data());
    std::vector<step_record> records;
    for (std::int64_t k = o.steps; k-- > 0;) {
        const double start = thread_cpu_seconds();
        (void)model.backward_step(k, data, dense::vector_view<const float>(all_states.sub(k * s, s)),
                                  dense::vector_view<const float>(all_tapes.sub(k * tape, tape)), dense::view(adjoint),
                                  dense::view(grad));
        const double seconds = thread_cpu_seconds() - start;
        records.push_back(
            {k, seconds, subnormals(a, count), layout.state_parts() > 1 ? subnormals(a + count, count) : 0});
    }
    return records;
}

} // namespace

int main(int argc, char** argv)
{
    options o;
    CLI::App app{"Plain BPTT's backward steps one by one: CPU time and subnormal adjoint elements",
                 "rnn_backward_steps"};
    app.add_option("--cell", o.cell, "gru or lstm")->capture_default_str();
    app.add_option("--steps", o.steps)->capture_default_str();
    app.add_option("--batch", o.batch)->capture_default_str();
    app.add_option("--hidden", o.hidden)->capture_default_str();
    app.add_option("--input", o.input, "input features")->capture_default_str();
    app.add_flag("--flush-denormals", o.flush_denormals, "the model flushes subnormals to zero");
    app.add_option("--dump", o.dump, "write parameters.f32, inputs.f32, targets.f32 into this folder");
    app.add_option("--format", o.format, "text or json")->capture_default_str();
    CLI11_PARSE(app, argc, argv);
    try {
        if (o.cell != "gru" && o.cell != "lstm")
            throw argument_error("cell '" + o.cell + "' (expected gru or lstm)");
        if (o.format != "text" && o.format != "json")
            throw argument_error("format '" + o.format + "' (expected text or json)");
        if (o.steps < 1 || o.batch < 1 || o.hidden < 1 || o.input < 1)
            throw argument_error("steps, batch, hidden and input must be at least 1");
        const std::vector<step_record> records = measure(o);
        std::vector<double> times;
        double total = 0;
        for (const step_record& r : records) {
            times.push_back(r.cpu_seconds);
            total += r.cpu_seconds;
        }
        std::vector<double> sorted = times;
        std::sort(sorted.begin(), sorted.end());
        const double median = sorted[sorted.size() / 2];
        // The window: steps that took over 5 times the median step.
        double window = 0;
        std::int64_t window_steps = 0;
        for (const double v : times)
            if (v > 5 * median) {
                window += v;
                ++window_steps;
            }
        if (o.format == "json") {
            nlohmann::ordered_json j{{"cell", o.cell},
                                     {"steps", o.steps},
                                     {"flush_denormals", o.flush_denormals},
                                     {"backward_seconds", total},
                                     {"median_step_seconds", median},
                                     {"window_steps", window_steps},
                                     {"window_seconds", window}};
            for (const step_record& r : records)
                j["per_step"].push_back({{"step", r.step},
                                         {"cpu_seconds", r.cpu_seconds},
                                         {"subnormal_dh", r.subnormal_dh},
                                         {"subnormal_dc", r.subnormal_dc}});
            report::write_json(std::cout, j);
            return 0;
        }
        std::printf("%s, T = %lld: backward sweep %.3f s of CPU; median step %.3f ms; %lld steps over 5x it "
                    "(the subnormal window) took %.3f s\n",
                    o.cell.c_str(), static_cast<long long>(o.steps), total, median * 1e3,
                    static_cast<long long>(window_steps), window);
        std::printf("%8s %10s %14s %14s\n", "step", "CPU ms", "subnormal dh", "subnormal dc");
        for (const step_record& r : records)
            if (r.cpu_seconds > 5 * median || r.step % 50 == 0)
                std::printf("%8lld %10.3f %14lld %14lld\n", static_cast<long long>(r.step), r.cpu_seconds * 1e3,
                            static_cast<long long>(r.subnormal_dh), static_cast<long long>(r.subnormal_dc));
        return 0;
    } catch (const argument_error& e) {
        std::fprintf(stderr, "rnn_backward_steps: %s\n", e.what());
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "rnn_backward_steps: %s\n", e.what());
        return 1;
    }
}
