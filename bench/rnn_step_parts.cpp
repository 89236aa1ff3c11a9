// rnn_step_parts — where one GRU or LSTM step's time goes on the CPU: its matrix half (the BLAS products)
// against its element-wise half (the gates: sigmoids and tanh, through the column passes remat::rnn runs
// on the CPU, remat/rnn/detail/cell_columns.hpp), in the forward step and in the backward step, one layer,
// timed alone (medians); and, for comparison, the same gates through the per-element functors (what the
// GPU runs, one scalar expf/tanhf per gate and element, and what the CPU ran before the column passes). A checkpointed
// gradient re-runs forward steps, so the forward step's cost F against the backward's B decides how much a plan's
// recomputation costs over plain BPTT (docs/rnn.md, "On an AMD EPYC"). Also times the C library's scalar
// expf/tanhf (exp/tanh in double) per call, for scale.
//
// --adjoint-scale S multiplies the adjoint (dh, dc; 0.01 by default) by S: with S = 0x1p-130 in float it is
// subnormal, as it is late in a long sequence's reverse sweep, where an x86 core takes a microcode assist per
// instruction on a subnormal: the backward parts then show what the sweep pays there (docs/rnn.md, "Where the
// backward time goes"), the vectorised column passes against the per-element (scalar) functors.
//
//     OPENBLAS_NUM_THREADS=1 build/bench/rnn_step_parts                     # GRU, B = 64, H = 256, float
//     OPENBLAS_NUM_THREADS=1 build/bench/rnn_step_parts --cell lstm --format json
//     OPENBLAS_NUM_THREADS=1 build/bench/rnn_step_parts --cell lstm --adjoint-scale 0x1p-130   # subnormal adjoint
#include "bench_util.hpp"

#include "remat/dense/cpu_blas.hpp"
#include "remat/error.hpp"
#include "remat/report/json.hpp"
#include "remat/rnn/detail/cell_columns.hpp"
#include "remat/rnn/detail/cell_kernels.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

using namespace remat;

namespace {

struct options {
    std::string cell = "gru";
    std::string precision = "float";
    std::int64_t batch = 64;
    std::int64_t hidden = 256;
    std::int64_t input = 32;
    int repeats = 9;          // medians of these
    int steps = 200;          // steps per timing
    double adjoint_scale = 1; // dh and dc times this
};

struct part {
    std::string name;
    double seconds = 0; // per step, median
};

template <class T>
std::vector<T> filled(std::int64_t n, double scale, double phase)
{
    std::vector<T> v(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < v.size(); ++i)
        v[i] = static_cast<T>(scale * std::sin(0.37 * static_cast<double>(i) + phase));
    return v;
}

// Median over `repeats` of the seconds per call of `body`, run `steps` times per timing.
template <class Body>
double per_step(const options& o, Body&& body)
{
    return bench::median(bench::time_runs(o.repeats,
                                          [&] {
                                              for (int s = 0; s < o.steps; ++s)
                                                  body();
                                          })) /
           o.steps;
}

template <class T>
std::vector<part> measure(const options& o)
{
    const bool gru = o.cell == "gru";
    const std::int64_t gates = gru ? 3 : 4;
    const std::int64_t rows = gates * o.hidden; // G H
    const std::int64_t count = o.hidden * o.batch;
    const rnn::detail::gate_index at{o.hidden, rows};
    dense::cpu_blas b;
    const std::vector<T> w_ih = filled<T>(rows * o.input, 0.1, 0.1);
    const std::vector<T> w_hh = filled<T>(rows * o.hidden, 0.05, 0.2);
    const std::vector<T> b_ih = filled<T>(rows, 0.1, 0.3);
    const std::vector<T> b_hh = filled<T>(rows, 0.1, 0.4);
    const std::vector<T> x = filled<T>(o.input * o.batch, 1.0, 0.5);
    std::vector<T> h = filled<T>(count, 0.5, 0.6);
    std::vector<T> c = filled<T>(count, 0.5, 0.7);
    std::vector<T> gi(static_cast<std::size_t>(rows * o.batch));
    std::vector<T> gh(gi.size());
    std::vector<T> h_out(static_cast<std::size_t>(count));
    std::vector<T> c_out(h_out.size());
    std::vector<T> tape(static_cast<std::size_t>((gru ? 4 : 5) * count));
    std::vector<T> dh = filled<T>(count, 0.01 * o.adjoint_scale, 0.8);
    std::vector<T> dc = filled<T>(count, 0.01 * o.adjoint_scale, 0.9);
    std::vector<T> dgi(gi.size());
    std::vector<T> dgh(gi.size());
    std::vector<T> dw_ih(w_ih.size());
    std::vector<T> dw_hh(w_hh.size());
    std::vector<T> dh_prev(static_cast<std::size_t>(count));
    using dense::op;

    std::vector<part> parts;
    // Forward, matrix half: Gi = W_ih x, Gh = W_hh h.
    parts.push_back({"forward GEMMs", per_step(o, [&] {
                         b.gemm(op::none, op::none, rows, o.batch, o.input, T(1), w_ih.data(), rows, x.data(), o.input,
                                T(0), gi.data(), rows);
                         b.gemm(op::none, op::none, rows, o.batch, o.hidden, T(1), w_hh.data(), rows, h.data(),
                                o.hidden, T(0), gh.data(), rows);
                     })});
    // Forward, element-wise half, keeping the tape (a taped step; an untaped one skips the tape's stores):
    // the column passes, one per batch column (what remat::rnn runs on the CPU).
    const auto columns = [&](const auto& f) {
        const auto pass = rnn::detail::by_columns(f);
        return per_step(o, [&] {
            for (std::int64_t j = 0; j < o.batch; ++j)
                pass(j);
        });
    };
    const auto elements = [&](const auto& f) {
        return per_step(o, [&] {
            for (std::int64_t e = 0; e < count; ++e)
                f(e);
        });
    };
    const rnn::detail::gru_forward<T> gru_f{gi.data(),    gh.data(),   b_ih.data(), b_hh.data(), h.data(),
                                            h_out.data(), tape.data(), count,       at};
    const rnn::detail::lstm_forward<T> lstm_f{gi.data(),    gh.data(),    b_ih.data(), b_hh.data(), c.data(),
                                              h_out.data(), c_out.data(), tape.data(), count,       at};
    parts.push_back({"forward gates", gru ? columns(gru_f) : columns(lstm_f)});
    // Backward, element-wise half from the tape: dG from dh (and dc). The passes overwrite dh (dc), so
    // each call starts from the same values.
    const std::vector<T> dh0 = dh;
    const std::vector<T> dc0 = dc;
    const rnn::detail::gru_backward<T> gru_b{tape.data(), h.data(), dh.data(), dgi.data(), dgh.data(), count, at};
    const rnn::detail::lstm_backward<T> lstm_b{tape.data(), c.data(), dh.data(), dc.data(), dgi.data(), count, at};
    const auto backward_columns = [&] {
        const auto pass_g = rnn::detail::by_columns(gru_b);
        const auto pass_l = rnn::detail::by_columns(lstm_b);
        return per_step(o, [&] {
            dh = dh0;
            dc = dc0;
            for (std::int64_t j = 0; j < o.batch; ++j)
                gru ? pass_g(j) : pass_l(j);
        });
    };
    parts.push_back({"backward gates", backward_columns()});
    if (!gru)
        dgh = dgi; // the LSTM's dG serves both products
    // Backward, matrix half: dW_ih += dGi x^T, dW_hh += dGh h^T, dh_prev = W_hh^T dGh.
    parts.push_back({"backward GEMMs", per_step(o, [&] {
                         b.gemm(op::none, op::transpose, rows, o.input, o.batch, T(1), dgi.data(), rows, x.data(),
                                o.input, T(1), dw_ih.data(), rows);
                         b.gemm(op::none, op::transpose, rows, o.hidden, o.batch, T(1), dgh.data(), rows, h.data(),
                                o.hidden, T(1), dw_hh.data(), rows);
                         b.gemm(op::transpose, op::none, o.hidden, o.batch, rows, T(1), w_hh.data(), rows, dgh.data(),
                                rows, T(0), dh_prev.data(), o.hidden);
                     })});
    // For comparison: the per-element functors (the GPU's kernels; the CPU's path before the column passes).
    parts.push_back({"forward gates, per element", gru ? elements(gru_f) : elements(lstm_f)});
    parts.push_back({"backward gates, per element", per_step(o, [&] {
                         dh = dh0;
                         dc = dc0;
                         for (std::int64_t e = 0; e < count; ++e)
                             gru ? gru_b(e) : lstm_b(e);
                     })});
    // For scale: the C library's scalar exp and tanh, once per element.
    const std::vector<T> args = filled<T>(count, 3.0, 1.0);
    volatile T sink = 0;
    parts.push_back({"exp, per element", per_step(o, [&] {
                                             T s = 0;
                                             for (const T a : args)
                                                 s += std::exp(a);
                                             sink = s;
                                         }) / static_cast<double>(count)});
    parts.push_back({"tanh, per element", per_step(o, [&] {
                                              T s = 0;
                                              for (const T a : args)
                                                  s += std::tanh(a);
                                              sink = s;
                                          }) / static_cast<double>(count)});
    return parts;
}

} // namespace

int main(int argc, char** argv)
{
    options o;
    std::string format = "text";
    CLI::App app{"One RNN step's matrix half against its element-wise half, on the CPU", "rnn_step_parts"};
    app.add_option("--cell", o.cell, "gru or lstm")->capture_default_str();
    app.add_option("--precision", o.precision, "float or double")->capture_default_str();
    app.add_option("--batch", o.batch)->capture_default_str();
    app.add_option("--hidden", o.hidden)->capture_default_str();
    app.add_option("--input", o.input, "input features")->capture_default_str();
    app.add_option("--repeats", o.repeats, "timings (medians reported)")->capture_default_str();
    app.add_option("--steps", o.steps, "steps per timing")->capture_default_str();
    app.add_option("--adjoint-scale", o.adjoint_scale, "the adjoint times this (0x1p-130: subnormal in float)")
        ->capture_default_str();
    app.add_option("--format", format, "text or json")->capture_default_str();
    CLI11_PARSE(app, argc, argv);
    try {
        if (o.cell != "gru" && o.cell != "lstm")
            throw argument_error("cell '" + o.cell + "' (expected gru or lstm)");
        if (o.precision != "float" && o.precision != "double")
            throw argument_error("precision '" + o.precision + "' (expected float or double)");
        if (format != "text" && format != "json")
            throw argument_error("format '" + format + "' (expected text or json)");
        if (o.batch < 1 || o.hidden < 1 || o.input < 1 || o.repeats < 1 || o.steps < 1)
            throw argument_error("batch, hidden, input, repeats and steps must be at least 1");
        if (!(o.adjoint_scale > 0) || !std::isfinite(o.adjoint_scale))
            throw argument_error("adjoint scale " + std::to_string(o.adjoint_scale) +
                                 " (expected a finite number above 0)");
        const std::vector<part> parts = o.precision == "float" ? measure<float>(o) : measure<double>(o);
        const double forward_gemms = parts[0].seconds;
        const double forward_gates = parts[1].seconds;
        const double backward = parts[2].seconds + parts[3].seconds;
        const double elements = static_cast<double>(o.hidden * o.batch);
        if (format == "json") {
            nlohmann::ordered_json j{{"cell", o.cell},
                                     {"precision", o.precision},
                                     {"batch", o.batch},
                                     {"hidden", o.hidden},
                                     {"input", o.input},
                                     {"repeats", o.repeats},
                                     {"adjoint_scale", o.adjoint_scale}};
            for (const part& p : parts)
                j["seconds"][p.name] = p.seconds;
            j["forward_gates_vs_gemms"] = forward_gates / forward_gemms;
            j["backward_vs_forward"] = backward / (forward_gemms + forward_gates);
            j["per_element_vs_columns"] = parts[4].seconds / forward_gates;
            report::write_json(std::cout, j);
            return 0;
        }
        std::printf("One %s step, batch %lld, hidden %lld, input %lld, %s, adjoint scale %g, on the CPU (medians of %d "
                    "timings of %d steps)\n",
                    o.cell.c_str(), static_cast<long long>(o.batch), static_cast<long long>(o.hidden),
                    static_cast<long long>(o.input), o.precision.c_str(), o.adjoint_scale, o.repeats, o.steps);
        for (std::size_t i = 0; i < 6; ++i)
            std::printf("  %-28s %9.3f ms  (%.1f ns per element)\n", parts[i].name.c_str(), parts[i].seconds * 1e3,
                        parts[i].seconds * 1e9 / elements);
        std::printf("  %-28s %9.1f ns\n  %-28s %9.1f ns\n", parts[6].name.c_str(), parts[6].seconds * 1e9,
                    parts[7].name.c_str(), parts[7].seconds * 1e9);
        std::printf("forward gates / forward GEMMs: %.2f; backward (B) / forward (F): %.2f; forward gates per element "
                    "/ column passes: %.2f\n",
                    forward_gates / forward_gemms, backward / (forward_gemms + forward_gates),
                    parts[4].seconds / forward_gates);
        return 0;
    } catch (const argument_error& e) {
        std::fprintf(stderr, "rnn_step_parts: %s\n", e.what());
        return 2;
    }
}
