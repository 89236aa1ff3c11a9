// Benchmark: the gradient of a neural-ODE solve (RK4, an MLP field of width W over a batch), by
//   backprop    — what backpropagation through the solver keeps: every step's stage inputs, stage
//                 derivatives and activations (one recorded rk_stages per step), no recomputation;
//   store-all   — remat::run keeping every state x_0..x_{T-2}, the stages recomputed in each adjoint step;
//   revolve 10% — remat::revolve in 10% of store-all's snapshot bytes;
//   revolve 1%  — and in 1%;
// each in a child process of its own, for its peak RSS; time per gradient is the median over --repeats.
// Ratios are against store-all in the same run. With JAX/diffrax in build/python-venv, diffrax's
// RecursiveCheckpointAdjoint with the same checkpoint counts runs on the same problem (CPU, float64).
//
//     build/bench/neural_ode                                    # T = 1000, batch 1024, dims 2 and 64, width 128
//     build/bench/neural_ode --batch 64 --repeats 3 --format json
#include "bench_util.hpp"
#include "run_in_child.hpp"

#include "remat/cuda/thrust_traits.hpp"
#include "remat/dense/blas.hpp"
#include "remat/dense/elementwise.hpp"
#include "remat/ode/fixed_step.hpp"
#include "remat/ode/mlp.hpp"
#include "remat/ode/rk_stages.hpp"
#include "remat/ode/tableau.hpp"
#include "remat/report/json.hpp"
#include <remat/remat.hpp>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <thrust/device_vector.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace remat;
using vector = thrust::device_vector<double>;

struct problem_size {
    step_t steps = 1000;
    std::int64_t batch = 1024;
    std::int64_t dim = 2;
    std::int64_t width = 128;
};

// L = |y_T|^2 / 2 over an RK4 solve of an MLP field with one hidden layer of `width` (tanh).
class neural_ode {
public:
    explicit neural_ode(const problem_size& s)
        : size_(s), layout_({.dim = s.dim, .hidden = {s.width}, .act = dense::activation::tanh}),
          field_(blas_, layout_, s.batch), solver_(ode::rk4(), field_, blas_, 0.0, 1.0 / static_cast<double>(s.steps))
    {
        field_.set_parameters(layout_.initial_parameters(7));
        std::vector<double> y0(static_cast<std::size_t>(field_.state_size()));
        for (std::size_t i = 0; i < y0.size(); ++i)
            y0[i] = std::sin(0.37 * static_cast<double>(i));
        y0_ = vector(y0.begin(), y0.end());
        a_.resize(y0.size());
        p_bar_.resize(static_cast<std::size_t>(field_.parameter_count()));
    }
    [[nodiscard]] std::uint64_t state_bytes() const { return y0_.size() * sizeof(double); }

    template <class Plan, class Store>
    double remat_gradient(const Plan& plan, Store& store)
    {
        vector y = y0_;
        dense::fill(blas_, dense::view(p_bar_), 0.0);
        remat::run(plan, store, y, remat::forward_step([&](step_t k, vector& s) { solver_.step(k, s); }),
                   remat::adjoint_step([&](step_t k, vector& s) {
                       if (k == size_.steps - 1) { // a = dL/dy_T = y_T
                           dense::copy(blas_, dense::view(std::as_const(s)), dense::view(a_));
                           solver_.step(k, a_);
                       }
                       solver_.adjoint_step(k, s, a_, p_bar_);
                   }));
        return checksum();
    }

    // Backpropagation through the solver: every step's stages recorded, each in its own workspace.
    double backprop_gradient()
    {
        std::vector<std::unique_ptr<ode::rk_stages<double, ode::mlp<double>>>> tape;
        tape.reserve(static_cast<std::size_t>(size_.steps));
        vector y = y0_;
        const double h = solver_.step_size();
        for (step_t k = 0; k < size_.steps; ++k) {
            tape.push_back(std::make_unique<ode::rk_stages<double, ode::mlp<double>>>(ode::rk4(), field_, blas_));
            tape.back()->compute(solver_.time(k), h, dense::view(std::as_const(y)), true);
            tape.back()->solution(h, dense::view(std::as_const(y)), dense::view(y));
        }
        dense::copy(blas_, dense::view(std::as_const(y)), dense::view(a_));
        dense::fill(blas_, dense::view(p_bar_), 0.0);
        for (step_t k = size_.steps; k-- > 0;)
            tape[static_cast<std::size_t>(k)]->backprop(solver_.time(k), h, dense::view(a_), dense::view(p_bar_));
        return checksum();
    }

private:
    double checksum() { return dense::sum(blas_, dense::view(std::as_const(p_bar_))); }

    problem_size size_;
    dense::blas blas_;
    ode::mlp_layout layout_;
    ode::mlp<double> field_;
    ode::fixed_step<double, ode::mlp<double>> solver_;
    vector y0_;
    vector a_;
    vector p_bar_;
};

struct measurement {
    std::string name;
    slot_t slots = 0; // snapshot slots (0: not remat)
    double seconds = 0;
    double checksum = 0;
    long long peak_rss = 0;
};

// Runs one variant `repeats` times in a child process (its peak RSS is then its own): the median seconds
// and the gradient's checksum come back from the child.
measurement measure(const problem_size& s, const std::string& name, slot_t slots, int repeats)
{
    struct timing {
        double seconds, checksum;
    };
    const auto run = bench::run_in_child("the " + name + " run", [&] {
        double checksum = 0;
        neural_ode p(s);
        const auto runs = bench::time_runs(repeats, [&] {
            if (name == "backprop") {
                checksum = p.backprop_gradient();
            } else if (slots >= s.steps - 1) {
                host_store store(s.steps - 1);
                checksum = p.remat_gradient(store_all(s.steps, s.steps - 1), store);
            } else {
                host_store store(slots);
                checksum = p.remat_gradient(revolve(s.steps, slots), store);
            }
        });
        return timing{bench::median(runs), checksum};
    });
    return {name, slots, run.value.seconds, run.value.checksum, run.peak_rss_bytes};
}

// diffrax's RecursiveCheckpointAdjoint on the same problem size: median seconds per gradient, or -1.
double diffrax_seconds(const problem_size& s, slot_t checkpoints, int repeats)
{
    const std::string python = REMAT_PYTHON_VENV "/bin/python";
    if (!std::filesystem::exists(python))
        return -1;
    std::ostringstream cmd;
    cmd << python << " " << REMAT_DIFFRAX_BENCH << " --steps " << s.steps << " --batch " << s.batch << " --dim "
        << s.dim << " --width " << s.width << " --checkpoints " << checkpoints << " --repeats " << repeats
        << " 2>/dev/null";
    FILE* pipe = ::popen(cmd.str().c_str(), "r");
    if (pipe == nullptr)
        return -1;
    double seconds = -1;
    if (std::fscanf(pipe, "%lf", &seconds) != 1)
        seconds = -1;
    ::pclose(pipe);
    return seconds;
}

} // namespace

int main(int argc, char** argv)
{
    problem_size base;
    std::vector<std::int64_t> dims{2, 64};
    int repeats = 3;
    std::string format = "text";
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
    app.add_flag("!--no-diffrax", with_diffrax, "skip diffrax even where JAX is installed");
    app.add_option("--format", format, "text or json")->check(CLI::IsMember({"text", "json"}));
    CLI11_PARSE(app, argc, argv);

    nlohmann::ordered_json report = nlohmann::ordered_json::array();
    for (const std::int64_t dim : dims) {
        problem_size s = base;
        s.dim = dim;
        const std::uint64_t state = static_cast<std::uint64_t>(s.dim * s.batch) * sizeof(double);
        const auto store_all_slots = static_cast<slot_t>(s.steps - 1);
        const auto tenth = std::max<slot_t>(1, store_all_slots / 10);
        const auto hundredth = std::max<slot_t>(1, store_all_slots / 100);
        std::vector<measurement> m;
        try {
            m.push_back(measure(s, "store-all", store_all_slots, repeats));
            m.push_back(measure(s, "revolve 10%", tenth, repeats));
            m.push_back(measure(s, "revolve 1%", hundredth, repeats));
            m.push_back(measure(s, "backprop", 0, repeats));
        } catch (const std::exception& e) {
            std::cerr << "neural_ode: " << e.what() << '\n';
            return 1;
        }
        const measurement& all = m.front();
        double diffrax10 = -1, diffrax1 = -1;
        if (with_diffrax) {
            diffrax10 = diffrax_seconds(s, tenth, repeats);
            diffrax1 = diffrax_seconds(s, hundredth, repeats);
        }
        if (format == "text") {
            std::printf(
                "RK4, T = %lld, batch %lld, dim %lld, width %lld (state %.1f KiB, store-all %.1f MiB), median of %d\n",
                static_cast<long long>(s.steps), static_cast<long long>(s.batch), static_cast<long long>(s.dim),
                static_cast<long long>(s.width), static_cast<double>(state) / 1024,
                static_cast<double>(state * static_cast<std::uint64_t>(store_all_slots)) / 1048576.0, repeats);
            std::printf("  %-12s %8s %12s %10s %14s %10s\n", "variant", "slots", "s/gradient", "vs all", "peak RSS MiB",
                        "vs all");
            for (const measurement& x : m)
                std::printf("  %-12s %8lld %12.3f %9.2fx %14.1f %9.2fx\n", x.name.c_str(),
                            static_cast<long long>(x.slots), x.seconds, x.seconds / all.seconds,
                            static_cast<double>(x.peak_rss) / 1048576.0,
                            static_cast<double>(x.peak_rss) / static_cast<double>(all.peak_rss));
            if (diffrax10 > 0)
                std::printf("  diffrax RecursiveCheckpointAdjoint: %lld checkpoints %.3f s (remat %.2fx faster), "
                            "%lld checkpoints %.3f s (remat %.2fx faster)\n",
                            static_cast<long long>(tenth), diffrax10, diffrax10 / m[1].seconds,
                            static_cast<long long>(hundredth), diffrax1, diffrax1 / m[2].seconds);
            else if (with_diffrax)
                std::printf("  diffrax: not run (no JAX in %s; scripts/install-python.sh installs it)\n",
                            REMAT_PYTHON_VENV);
        }
        nlohmann::ordered_json j{{"steps", s.steps}, {"batch", s.batch},     {"dim", s.dim},
                                 {"width", s.width}, {"state_bytes", state}, {"repeats", repeats}};
        for (const measurement& x : m)
            j["variants"].push_back(
                {{"name", x.name},
                 {"slots", x.slots},
                 {"seconds_per_gradient", x.seconds},
                 {"time_vs_store_all", x.seconds / all.seconds},
                 {"peak_rss_bytes", x.peak_rss},
                 {"rss_vs_store_all", static_cast<double>(x.peak_rss) / static_cast<double>(all.peak_rss)},
                 {"gradient_checksum", x.checksum}});
        j["diffrax_seconds_10pct"] = diffrax10;
        j["diffrax_seconds_1pct"] = diffrax1;
        report.push_back(j);
    }
    if (format == "json")
        report::write_json(std::cout, report);
    return 0;
}
