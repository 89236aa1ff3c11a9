// Long-horizon CVODES adjoints: remat + CVODES in bounded memory against CVODES's own all-in-RAM adjoint at
// its best Nd (swept), in the same run. Each configuration runs in a child process (fork), so its peak
// RSS (wait4's ru_maxrss) is its own; a child that only builds the problem gives the fixed footprint, and
// a child that runs CVODES's forward sweep alone gives F, the cost of one forward pass (CVODES's adjoint
// costs about 2F + B, remat's about (forward windows / windows + 1) F + B plus its restarts).
//
// The problem: a forced, damped chain of M nonlinear oscillators (N = 2M unknowns), x_i'' = -w_i^2 x_i -
// e x_i^3 + k (x_{i-1} - 2 x_i + x_{i+1}) - c x_i' + a cos(1.5 t + 0.1 i), Adams with fixed-point iteration;
// G = int_0^tf sum_i x_i^2 dt and dG/d(k, e, c) by CVODES's continuous adjoint, with --field also
// dG/d(w_i^2) for every oscillator (M more backward quadratures: the many-parameter case adjoints are for).
// The damping makes the flow contract and the forcing keeps it moving (so the steps stay short over the
// whole horizon): an error made early is forgotten, and two integrations of the adjoint (CVODES's
// whole-horizon steps, remat's windows) agree closely. Without them (--damping 0 --forcing 0) phase errors
// accumulate over the periods and the two gradients drift apart like the trajectories.
//
//     ./build/bench/cvodes_long [--oscillators M] [--tf T] [--damping c] [--forcing a] [--rtol r] [--field]
//                               [--nonlinear-coefficient c] [--windows "W1 W2"] [--slots "S1 S2"] [--window-nd n] [--nd
//                               "50 100 200 400"]
//                               [--gradient-tolerance 1e-6] [--format text|json]
//
// Exits 1 when remat's gradient and CVODES's (at its fastest Nd) differ by more than the tolerance.
#include "program_help.hpp"

#include "run_in_child.hpp"

#include <remat/cvodes/cvodes.hpp>
#include <remat/remat.hpp>
#include <remat/report/json.hpp>
#include <remat/report/progress.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace {

struct chain {
    std::size_t m = 20000;
    double k = 0.5;
    double e = 0.1;
    double c = 0.2;     // damping
    double a = 0.5;     // forcing amplitude: a cos(omega t + 0.1 i) drives oscillator i
    double omega = 1.5; // forcing frequency
    double tf = 200;
    double rtol = 1e-8;
    bool field = false; // also dG/d(w_i^2) for every oscillator
    double nlscoef = 0; // CVodeSetNonlinConvCoef for every system, CVODES's own and remat's alike (0: 0.1)

    [[nodiscard]] std::vector<double> omega2() const
    {
        std::vector<double> w(m);
        for (std::size_t i = 0; i < m; ++i)
            w[i] = 1.0 + 0.5 * std::sin(0.37 * static_cast<double>(i));
        return w;
    }

    [[nodiscard]] remat::cvodes::integrator_settings settings() const
    {
        remat::cvodes::integrator_settings s;
        s.lmm = remat::cvodes::method::adams;
        s.iteration = remat::cvodes::fixed_point{};
        s.relative_tolerance = rtol;
        s.absolute_tolerance = rtol * 1e-2;
        s.quadrature_error_control = false;
        s.max_order = 5;
        s.max_steps = 100'000'000;
        s.nonlinear_convergence_coefficient = nlscoef;
        return s;
    }

    [[nodiscard]] remat::cvodes::forward_problem forward() const
    {
        remat::cvodes::forward_problem f;
        f.y0.assign(2 * m, 0.0);
        for (std::size_t i = 0; i < m; ++i)
            f.y0[i] = std::cos(0.01 * static_cast<double>(i)); // x; v = 0
        f.rhs = [p = *this, w2 = omega2()](double t, std::span<const double> y, std::span<double> dy) {
            const std::size_t n = p.m;
            // cos(omega t + 0.1 i) by the angle-addition recurrence: one cos and one sin per call.
            const double step_c = std::cos(0.1);
            const double step_s = std::sin(0.1);
            double fc = p.a * std::cos(p.omega * t);
            double fs = p.a * std::sin(p.omega * t);
            for (std::size_t i = 0; i < n; ++i) {
                const double x = y[i];
                const double left = i > 0 ? y[i - 1] : 0.0;
                const double right = i + 1 < n ? y[i + 1] : 0.0;
                dy[i] = y[n + i];
                dy[n + i] = -w2[i] * x - p.e * x * x * x + p.k * (left - 2 * x + right) - p.c * y[n + i] + fc;
                const double next = fc * step_c - fs * step_s;
                fs = fs * step_c + fc * step_s;
                fc = next;
            }
        };
        f.q0 = {0.0};
        f.quadrature = [n = m](double, std::span<const double> y, std::span<double> q) {
            double s = 0;
            for (std::size_t i = 0; i < n; ++i)
                s += y[i] * y[i];
            q[0] = s;
        };
        f.settings = settings();
        return f;
    }

    // lambda = (lx, lv): lx' = -((-w^2 - 3 e x^2) lv + k Lap(lv)) - 2 x, lv' = -(lx - c lv);
    // qB' = (f_k, f_e, f_c, f_{w_i^2})^T lambda.
    [[nodiscard]] remat::cvodes::backward_problem backward() const
    {
        remat::cvodes::backward_problem b;
        b.t_start = tf;
        b.rhs = [p = *this, w2 = omega2()](double, std::span<const double> y, std::span<const double> l,
                                           std::span<double> dl) {
            const std::size_t n = p.m;
            for (std::size_t i = 0; i < n; ++i) {
                const double x = y[i];
                const double lv = l[n + i];
                const double left = i > 0 ? l[n + i - 1] : 0.0;
                const double right = i + 1 < n ? l[n + i + 1] : 0.0;
                dl[i] = -((-w2[i] - 3 * p.e * x * x) * lv + p.k * (left - 2 * lv + right)) - 2 * x;
                dl[n + i] = -(l[i] - p.c * lv);
            }
        };
        b.quadratures = 3 + (field ? m : 0);
        b.quadrature = [p = *this](double, std::span<const double> y, std::span<const double> l, std::span<double> q) {
            const std::size_t n = p.m;
            double dk = 0;
            double de = 0;
            double dc = 0;
            for (std::size_t i = 0; i < n; ++i) {
                const double x = y[i];
                const double lv = l[n + i];
                const double left = i > 0 ? y[i - 1] : 0.0;
                const double right = i + 1 < n ? y[i + 1] : 0.0;
                dk += lv * (left - 2 * x + right);
                de += lv * (-x * x * x);
                dc += lv * (-y[n + i]);
                if (p.field)
                    q[3 + i] = lv * (-x);
            }
            q[0] = dk;
            q[1] = de;
            q[2] = dc;
        };
        b.settings = settings();
        return b;
    }
};

struct outcome {
    double seconds = 0; // wall time of the solve
    double cpu = 0;     // CPU time of the whole child (user + system): robust on a shared machine
    double system = 0;  // of which system time (page faults of fresh allocations, mostly)
    double G = 0;
    long long steps = 0;                // forward steps (CVODES) or forward windows (remat)
    long long window_steps = 0;         // remat: CVODES steps of the first integration of every window
    long long over = 0;                 // remat: window integrations with more steps than the in-window Nd
    long long backward_steps = 0;       // backward steps (CVODES over the horizon; remat summed over windows)
    long long rhs_evaluations = 0;      // forward right-hand side evaluations (CVODES: one pass; remat: all)
    long long backward_evaluations = 0; // backward right-hand side evaluations
    long long rss = 0;                  // peak RSS of the child, bytes
    long long extra = 0;                // checkpoints (CVODES) or peak snapshot bytes (remat)
};

// Where a child leaves a vector (its gradient, its steps per window: too long for the pipe's one write); the
// parent names it (before the fork: the child's pid differs), reads and removes it.
std::filesystem::path child_file(const std::string& name)
{
    return std::filesystem::temp_directory_path() / ("cvodes_long." + std::to_string(::getpid()) + "." + name);
}

template <class T>
void save_values(const std::filesystem::path& path, const std::vector<T>& values)
{
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(values.data()), static_cast<std::streamsize>(values.size() * sizeof(T)));
    if (!out)
        throw std::runtime_error("cannot write " + path.string());
}

template <class T>
std::vector<T> load_values(const std::filesystem::path& path)
{
    std::vector<T> values(std::filesystem::file_size(path) / sizeof(T));
    std::ifstream in(path, std::ios::binary);
    in.read(reinterpret_cast<char*>(values.data()), static_cast<std::streamsize>(values.size() * sizeof(T)));
    if (!in)
        throw std::runtime_error("cannot read " + path.string());
    std::filesystem::remove(path);
    return values;
}

// Runs `body` in a child; returns what it gave with the child's peak RSS and CPU time.
template <class Body>
outcome in_child(Body&& body)
{
    const auto run = remat::bench::run_in_child("cvodes_long", std::forward<Body>(body));
    outcome o = run.value;
    o.rss = run.peak_rss_bytes;
    o.cpu = run.cpu_seconds;
    o.system = run.system_seconds;
    return o;
}

double seconds_since(std::chrono::steady_clock::time_point start)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// How far two gradients differ: relative per scalar parameter (k, e, c: entries 0..2), and over the field
// (entries 3..) relative to its largest component. Returns those four (three without the field).
std::vector<double> gradient_differences(const std::vector<double>& a, const std::vector<double>& b)
{
    if (a.size() != b.size() || a.size() < 3)
        throw std::runtime_error("the gradients have " + std::to_string(a.size()) + " and " + std::to_string(b.size()) +
                                 " components");
    std::vector<double> d;
    for (std::size_t i = 0; i < 3; ++i)
        d.push_back(std::abs(a[i] - b[i]) / std::max(std::abs(b[i]), 1e-300));
    if (a.size() > 3) {
        double scale = 0;
        double diff = 0;
        for (std::size_t i = 3; i < a.size(); ++i) {
            scale = std::max(scale, std::abs(b[i]));
            diff = std::max(diff, std::abs(a[i] - b[i]));
        }
        d.push_back(diff / std::max(scale, 1e-300));
    }
    return d;
}

double mib(long long bytes)
{
    return static_cast<double>(bytes) / 1048576.0;
}

struct options {
    chain problem;
    std::vector<remat::step_t> windows{400}; // one remat configuration per (windows, slots) pair
    std::vector<remat::slot_t> slots{20};
    long window_nd = 0; // 0: steps per window + 8 (one in-window checkpoint)
    std::vector<long> nds{100, 200, 400, 800};
    double gradient_tolerance = 1e-6; // the goal; a larger difference makes the program exit 1
    bool json = false;
};

options parse(int argc, char** argv)
{
    options o;
    auto number = [](std::string_view name, const char* text, auto convert) {
        try {
            std::size_t used = 0;
            const auto v = convert(std::string(text), &used);
            if (used != std::string_view(text).size() ||
                !(v > 0 || ((name == "--damping" || name == "--forcing") && v == 0)))
                throw std::invalid_argument("");
            return v;
        } catch (const std::logic_error&) {
            throw std::invalid_argument(std::string(name) + " " + text + " is not a valid value");
        }
    };
    auto to_double = [](const std::string& s, std::size_t* used) { return std::stod(s, used); };
    auto to_long = [](const std::string& s, std::size_t* used) { return std::stol(s, used); };
    // "400 800": each a number as above
    auto list = [&](std::string_view name, const char* text) {
        std::vector<long> values;
        std::istringstream in(text);
        for (std::string w; in >> w;)
            values.push_back(number(name, w.c_str(), to_long));
        return values;
    };
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "--field") {
            o.problem.field = true;
            continue;
        }
        if (i + 1 >= argc)
            throw std::invalid_argument(std::string(a) + " needs a value");
        const char* v = argv[++i];
        if (a == "--oscillators")
            o.problem.m = static_cast<std::size_t>(number(a, v, to_long));
        else if (a == "--tf")
            o.problem.tf = number(a, v, to_double);
        else if (a == "--damping")
            o.problem.c = number(a, v, to_double);
        else if (a == "--forcing")
            o.problem.a = number(a, v, to_double);
        else if (a == "--rtol")
            o.problem.rtol = number(a, v, to_double);
        else if (a == "--nonlinear-coefficient")
            o.problem.nlscoef = number(a, v, to_double);
        else if (a == "--windows")
            o.windows = list(a, v);
        else if (a == "--slots")
            o.slots = list(a, v);
        else if (a == "--gradient-tolerance")
            o.gradient_tolerance = number(a, v, to_double);
        else if (a == "--window-nd")
            o.window_nd = number(a, v, to_long);
        else if (a == "--nd") {
            o.nds = list(a, v);
            if (o.nds.empty())
                throw std::invalid_argument("--nd \"" + std::string(v) + "\" names no Nd");
        } else if (a == "--format") {
            if (std::string_view(v) != "json" && std::string_view(v) != "text")
                throw std::invalid_argument("--format " + std::string(v) + " is neither text nor json");
            o.json = std::string_view(v) == "json";
        } else
            throw std::invalid_argument("unknown option " + std::string(a));
    }
    if (o.windows.empty() || o.windows.size() != o.slots.size())
        throw std::invalid_argument("--windows and --slots name " + std::to_string(o.windows.size()) + " and " +
                                    std::to_string(o.slots.size()) + " values: one slot count per window count");
    return o;
}

} // namespace

int main(int argc, char** argv)
{
    if (remat::examples::answered_help(
            argc, argv,
            "usage: cvodes_long [--oscillators M] [--tf T] [--damping c] [--forcing a] [--rtol r] [--field]\n"
            "           [--nonlinear-coefficient c] [--windows \"W1 W2\"] [--slots \"S1 S2\"] [--window-nd n] [--nd\n"
            "           \"50 100 200 400\"]\n"
            "           [--gradient-tolerance 1e-6] [--format text|json]\n"
            "Long-horizon CVODES adjoints: remat + CVODES in bounded memory against CVODES's own all-in-RAM\n"
            "adjoint at its best Nd (swept), in the same run.\n"))
        return 0;
    options opt;
    try {
        opt = parse(argc, argv);
    } catch (const std::exception& ex) {
        std::fprintf(stderr, "cvodes_long: %s\n", ex.what());
        return 2;
    }
    const chain& c = opt.problem;
    try {
        const outcome fixed = in_child([&] {
            const auto f = c.forward();
            return outcome{.G = f.y0[0]};
        });
        // F: CVODES's forward sweep alone, recording its checkpoints as the adjoint's does.
        const outcome forward = in_child([&] {
            const auto start = std::chrono::steady_clock::now();
            const auto s = remat::cvodes::solve_in_ram(c.forward(), {}, c.tf, opt.nds.front());
            return outcome{.seconds = seconds_since(start), .G = s.final_state.back(), .steps = s.forward_steps};
        });
        if (!opt.json)
            std::printf(
                "%zu unknowns, tf %g, damping %g, forcing %g, rtol %g, nonlinear convergence coefficient %g, %zu "
                "backward quadratures: %lld CVODES steps; forward sweep alone F = %.2f s CPU\n",
                2 * c.m, c.tf, c.c, c.a, c.rtol, c.nlscoef > 0 ? c.nlscoef : 0.1, c.backward().quadratures,
                forward.steps, forward.cpu - fixed.cpu);
        // CVODES alone: its Nd swept; each configuration's time, memory and gradient.
        std::vector<outcome> own;
        std::vector<std::vector<double>> own_gradients;
        for (const long nd : opt.nds) {
            const auto path = child_file("nd" + std::to_string(nd) + ".gradient");
            own.push_back(in_child([&] {
                const auto start = std::chrono::steady_clock::now();
                const auto s = remat::cvodes::solve_in_ram(c.forward(), {c.backward()}, c.tf, nd);
                save_values(path, s.backward[0].quadratures);
                return outcome{.seconds = seconds_since(start),
                               .G = s.final_state.back(),
                               .steps = s.forward_steps,
                               .backward_steps = s.backward_steps,
                               .rhs_evaluations = s.forward_rhs_evaluations,
                               .backward_evaluations = s.backward_rhs_evaluations,
                               .extra = s.checkpoints};
            }));
            own_gradients.push_back(load_values<double>(path));
            if (!opt.json)
                std::printf("CVODES Nd = %4ld: %7.2f s CPU (%.2f system, %7.2f s wall), peak RSS %8.1f MiB, %lld "
                            "checkpoints, %lld backward steps; right-hand side evaluations: %lld forward (one pass), "
                            "%lld backward\n",
                            nd, own.back().cpu, own.back().system, own.back().seconds, mib(own.back().rss - fixed.rss),
                            own.back().extra, own.back().backward_steps, own.back().rhs_evaluations,
                            own.back().backward_evaluations);
        }
        std::size_t best = 0;  // CVODES's best Nd: the least CPU time
        std::size_t least = 0; // and the least memory
        for (std::size_t i = 1; i < own.size(); ++i) {
            if (own[i].cpu < own[best].cpu)
                best = i;
            if (own[i].rss < own[least].rss)
                least = i;
        }
        const outcome& base = own[best];
        const double F = forward.cpu - fixed.cpu;
        const double B = (base.cpu - fixed.cpu) - 2 * F;
        if (!opt.json)
            std::printf("CVODES's adjoint = 2F + B with F = %.2f s, B = %.2f s (B/F = %.2f)\n", F, B, B / F);
        nlohmann::ordered_json rows = nlohmann::ordered_json::array();
        double worst = 0;
        for (std::size_t r = 0; r < opt.windows.size(); ++r) {
            const remat::step_t windows = opt.windows[r];
            const remat::slot_t slots = opt.slots[r];
            // Room for the window's steps and some (restarts, uneven windows), so that CVODES keeps no
            // checkpoint inside a window and CVodeB recomputes nothing: a window longer than this costs
            // one more forward integration of its first part.
            const long nd_in =
                opt.window_nd > 0 ? opt.window_nd : std::max<long>(1, own[best].steps * 6 / 5 / windows + 8);
            const auto mine_path = child_file("remat" + std::to_string(r) + ".gradient");
            const auto steps_path = child_file("remat" + std::to_string(r) + ".backward_steps");
            const outcome mine = in_child([&] {
                remat::cvodes::solver_options options;
                options.steps_per_checkpoint = nd_in;
                // The first integration of every window: its steps against CVODES's, the price of the restarts.
                std::vector<std::int64_t> first(static_cast<std::size_t>(windows), 0);
                // The reverse steps' backward steps, per window (back in the parent through a file).
                std::vector<std::int64_t> back(static_cast<std::size_t>(windows), 0);
                long long evaluations = 0;
                long long backward_evaluations = 0;
                std::int64_t reversed = 0;
                remat::report::progress bar(std::cerr, {.label = "remat + CVODES, reverse sweep",
                                                        .total = static_cast<std::uint64_t>(windows)});
                long long over = 0; // window integrations longer than nd_in
                options.on_window = [&](const remat::cvodes::window_event& e) {
                    auto& f = first[static_cast<std::size_t>(e.window)];
                    if (f == 0)
                        f = e.steps;
                    if (e.steps > nd_in)
                        ++over;
                    evaluations += e.rhs_evaluations;
                    backward_evaluations += e.backward_rhs_evaluations;
                    if (e.sweep == remat::cvodes::sweep::reverse) {
                        back[static_cast<std::size_t>(e.window)] = e.backward_steps;
                        bar.update(static_cast<std::uint64_t>(++reversed));
                    }
                };
                remat::cvodes::adjoint_solver solver(c.forward(), {c.backward()}, options);
                const auto w = remat::cvodes::windows::uniform(0.0, c.tf, windows);
                remat::host_store store(slots);
                const auto start = std::chrono::steady_clock::now();
                const auto s = remat::cvodes::solve(solver, w, remat::revolve(windows, slots), store);
                bar.finish();
                save_values(mine_path, s.backward[0].quadratures);
                long long steps = 0;
                for (const auto f : first)
                    steps += f;
                save_values(steps_path, back);
                long long backward_steps = 0;
                for (const auto b : back)
                    backward_steps += b;
                return outcome{.seconds = seconds_since(start),
                               .G = s.final_state.back(),
                               .steps = static_cast<long long>(s.report.forward_steps),
                               .window_steps = steps,
                               .over = over,
                               .backward_steps = backward_steps,
                               .rhs_evaluations = evaluations,
                               .backward_evaluations = backward_evaluations,
                               .extra = static_cast<long long>(s.report.peak_snapshot_bytes)};
            });
            const std::vector<double> mine_gradient = load_values<double>(mine_path);
            const std::vector<std::int64_t> backward_per_window = load_values<std::int64_t>(steps_path);
            auto memory_ratio = [&](const outcome& o) {
                return static_cast<double>(o.rss - fixed.rss) / static_cast<double>(mine.rss - fixed.rss);
            };
            auto time_ratio = [&](const outcome& o) { return (mine.cpu - fixed.cpu) / (o.cpu - fixed.cpu); };
            const std::vector<double> parts = gradient_differences(mine_gradient, own_gradients[best]);
            const double grad = *std::ranges::max_element(parts);
            worst = std::max(worst, grad);
            const double restart = static_cast<double>(mine.window_steps) / static_cast<double>(base.steps) - 1;
            const double backward_restart =
                static_cast<double>(mine.backward_steps) / static_cast<double>(base.backward_steps) - 1;
            rows.push_back({{"windows", windows},
                            {"slots", slots},
                            {"window_nd", nd_in},
                            {"seconds", mine.seconds},
                            {"cpu_seconds", mine.cpu},
                            {"system_seconds", mine.system},
                            {"peak_rss_bytes", mine.rss},
                            {"peak_snapshot_bytes", mine.extra},
                            {"forward_windows", mine.steps},
                            {"window_steps", mine.window_steps},
                            {"restart_step_overhead", restart},
                            {"integrations_over_window_nd", mine.over},
                            {"backward_steps", mine.backward_steps},
                            {"backward_step_overhead", backward_restart},
                            {"backward_steps_per_window", backward_per_window},
                            {"rhs_evaluations", mine.rhs_evaluations},
                            {"backward_rhs_evaluations", mine.backward_evaluations},
                            {"dGdp", {mine_gradient[0], mine_gradient[1], mine_gradient[2]}},
                            {"memory_ratio", memory_ratio(base)},
                            {"time_ratio", time_ratio(base)},
                            {"memory_ratio_least", memory_ratio(own[least])},
                            {"time_ratio_least", time_ratio(own[least])},
                            {"gradient_differences", parts},
                            {"gradients_agree", grad <= opt.gradient_tolerance}});
            if (opt.json)
                continue;
            std::printf("remat: %lld windows, %lld slots, Nd %ld in a window: %7.2f s CPU (%.2f system, %7.2f s wall), "
                        "peak RSS %8.1f MiB (snapshots %.1f MiB), %lld forward windows, the windows took %lld steps "
                        "(%+.1f%% against CVODES's), %lld integrations longer than Nd\n",
                        static_cast<long long>(windows), static_cast<long long>(slots), nd_in, mine.cpu, mine.system,
                        mine.seconds, mib(mine.rss - fixed.rss), mib(mine.extra), mine.steps, mine.window_steps,
                        100 * restart, mine.over);
            const auto [fewest, most] = std::ranges::minmax(backward_per_window);
            std::printf("  backward: %lld steps (%+.1f%% against CVODES's %lld; %lld to %lld per window), %lld "
                        "right-hand side evaluations; forward: %lld evaluations in all integrations\n",
                        mine.backward_steps, 100 * backward_restart, base.backward_steps,
                        static_cast<long long>(fewest), static_cast<long long>(most), mine.backward_evaluations,
                        mine.rhs_evaluations);
            std::printf("  against CVODES at its fastest Nd = %ld: memory %.1fx less, CPU time %.2fx; at its leanest "
                        "Nd = %ld: memory %.1fx less, CPU time %.2fx\n",
                        opt.nds[best], memory_ratio(base), time_ratio(base), opt.nds[least], memory_ratio(own[least]),
                        time_ratio(own[least]));
            std::printf("  gradients apart: dG/dk %.1e, dG/de %.1e, dG/dc %.1e", parts[0], parts[1], parts[2]);
            if (parts.size() > 3)
                std::printf(", dG/d(w_i^2) %.1e (against its largest)", parts[3]);
            std::printf("%s\n", grad > opt.gradient_tolerance ? " DIFFERS (above the tolerance)" : "");
        }
        if (opt.json) {
            nlohmann::ordered_json j;
            j["unknowns"] = 2 * c.m;
            j["tf"] = c.tf;
            j["damping"] = c.c;
            j["forcing"] = c.a;
            j["rtol"] = c.rtol;
            j["nonlinear_convergence_coefficient"] = c.nlscoef > 0 ? c.nlscoef : 0.1;
            j["backward_quadratures"] = c.backward().quadratures;
            j["cvodes_steps"] = base.steps;
            j["fixed_rss_bytes"] = fixed.rss;
            j["forward_cpu_seconds"] = F;
            j["backward_cpu_seconds"] = B;
            j["cvodes"] = nlohmann::ordered_json::array();
            for (std::size_t i = 0; i < own.size(); ++i)
                j["cvodes"].push_back({{"nd", opt.nds[i]},
                                       {"seconds", own[i].seconds},
                                       {"cpu_seconds", own[i].cpu},
                                       {"system_seconds", own[i].system},
                                       {"peak_rss_bytes", own[i].rss},
                                       {"checkpoints", own[i].extra},
                                       {"backward_steps", own[i].backward_steps},
                                       {"forward_pass_rhs_evaluations", own[i].rhs_evaluations},
                                       {"backward_rhs_evaluations", own[i].backward_evaluations},
                                       {"dGdp", {own_gradients[i][0], own_gradients[i][1], own_gradients[i][2]}}});
            j["best_nd"] = opt.nds[best];
            j["least_memory_nd"] = opt.nds[least];
            j["remat"] = rows;
            j["gradients_agree"] = worst <= opt.gradient_tolerance;
            remat::report::write_json(std::cout, j);
        }
        return worst <= opt.gradient_tolerance ? 0 : 1;
    } catch (const std::exception& ex) {
        std::fprintf(stderr, "cvodes_long: %s\n", ex.what());
        return 1;
    }
}
