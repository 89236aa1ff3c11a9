// Long-horizon CVODES adjoints: remat + CVODES in bounded memory against CVODES's own all-in-RAM adjoint at
// its best Nd (swept), in the same run. Each configuration runs in a child process (fork), so its peak
// RSS (wait4's ru_maxrss) is its own; a child that only builds the problem gives the fixed footprint.
//
// The problem: a chain of M nonlinear oscillators (N = 2M unknowns), x_i'' = -w_i^2 x_i - e x_i^3 +
// k (x_{i-1} - 2 x_i + x_{i+1}), Adams with fixed-point iteration; G = int_0^tf sum_i x_i^2 dt and dG/d(k, e)
// by CVODES's continuous adjoint.
//
//     ./build/bench/cvodes_long [--oscillators M] [--tf T] [--windows W] [--slots S] [--nd "50 100 200 400"]
//                               [--format text|json]
#include "run_in_child.hpp"

#include <remat/cvodes/cvodes.hpp>
#include <remat/remat.hpp>
#include <remat/report/json.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace {

struct chain {
    std::size_t m = 20000;
    double k = 0.5;
    double e = 0.1;
    double tf = 200;

    [[nodiscard]] std::vector<double> omega2() const
    {
        std::vector<double> w(m);
        for (std::size_t i = 0; i < m; ++i)
            w[i] = 1.0 + 0.5 * std::sin(0.37 * static_cast<double>(i));
        return w;
    }

    [[nodiscard]] remat::cvodes::forward_problem forward() const
    {
        remat::cvodes::forward_problem f;
        f.y0.assign(2 * m, 0.0);
        for (std::size_t i = 0; i < m; ++i)
            f.y0[i] = std::cos(0.01 * static_cast<double>(i)); // x; v = 0
        const chain c = *this;
        f.rhs = [c, w2 = omega2()](double, std::span<const double> y, std::span<double> dy) {
            const std::size_t n = c.m;
            for (std::size_t i = 0; i < n; ++i) {
                const double x = y[i];
                const double left = i > 0 ? y[i - 1] : 0.0;
                const double right = i + 1 < n ? y[i + 1] : 0.0;
                dy[i] = y[n + i];
                dy[n + i] = -w2[i] * x - c.e * x * x * x + c.k * (left - 2 * x + right);
            }
        };
        f.q0 = {0.0};
        f.quadrature = [c](double, std::span<const double> y, std::span<double> q) {
            double s = 0;
            for (std::size_t i = 0; i < c.m; ++i)
                s += y[i] * y[i];
            q[0] = s;
        };
        f.settings.lmm = remat::cvodes::method::adams;
        f.settings.iteration = remat::cvodes::fixed_point{};
        f.settings.relative_tolerance = 1e-8;
        f.settings.absolute_tolerance = 1e-10;
        f.settings.quadrature_error_control = false;
        f.settings.max_order = 5;
        f.settings.max_steps = 10'000'000;
        return f;
    }

    // lambda = (lx, lv): lx' = -((-w^2 - 3 e x^2) lv + k Lap(lv)) - 2 x, lv' = -lx; qB' = (f_k, f_e)^T lambda.
    [[nodiscard]] remat::cvodes::backward_problem backward() const
    {
        remat::cvodes::backward_problem b;
        b.t_start = tf;
        const chain c = *this;
        b.rhs = [c, w2 = omega2()](double, std::span<const double> y, std::span<const double> l, std::span<double> dl) {
            const std::size_t n = c.m;
            for (std::size_t i = 0; i < n; ++i) {
                const double x = y[i];
                const double lv = l[n + i];
                const double left = i > 0 ? l[n + i - 1] : 0.0;
                const double right = i + 1 < n ? l[n + i + 1] : 0.0;
                dl[i] = -((-w2[i] - 3 * c.e * x * x) * lv + c.k * (left - 2 * lv + right)) - 2 * x;
                dl[n + i] = -l[i];
            }
        };
        b.quadratures = 2;
        b.quadrature = [c](double, std::span<const double> y, std::span<const double> l, std::span<double> q) {
            const std::size_t n = c.m;
            double dk = 0;
            double de = 0;
            for (std::size_t i = 0; i < n; ++i) {
                const double x = y[i];
                const double left = i > 0 ? y[i - 1] : 0.0;
                const double right = i + 1 < n ? y[i + 1] : 0.0;
                dk += l[n + i] * (left - 2 * x + right);
                de += l[n + i] * (-x * x * x);
            }
            q[0] = dk;
            q[1] = de;
        };
        b.settings.lmm = remat::cvodes::method::adams;
        b.settings.iteration = remat::cvodes::fixed_point{};
        b.settings.relative_tolerance = 1e-8;
        b.settings.absolute_tolerance = 1e-10;
        b.settings.quadrature_error_control = false;
        b.settings.max_order = 5;
        b.settings.max_steps = 10'000'000;
        return b;
    }
};

struct outcome {
    double seconds = 0; // wall time of the solve
    double cpu = 0;     // CPU time of the whole child (user + system): robust on a shared machine
    double G = 0;
    double dk = 0;
    double de = 0;
    long long steps = 0; // forward steps (CVODES) or forward windows (remat)
    long long rss = 0;   // peak RSS of the child, bytes
    long long extra = 0; // checkpoints (CVODES) or peak snapshot bytes (remat)
};

// Runs `body` in a child; returns what it gave with the child's peak RSS and CPU time.
template <class Body>
outcome in_child(Body&& body)
{
    const auto run = remat::bench::run_in_child("cvodes_long", std::forward<Body>(body));
    outcome o = run.value;
    o.rss = run.peak_rss_bytes;
    o.cpu = run.cpu_seconds;
    return o;
}

double seconds_since(std::chrono::steady_clock::time_point start)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double relative(double a, double b)
{
    return std::abs(a - b) / std::max(std::abs(b), 1e-300);
}

} // namespace

int main(int argc, char** argv)
{
    chain c;
    remat::step_t windows = 400;
    remat::slot_t slots = 20;
    long window_nd = 0; // 0: steps per window (one in-window checkpoint)
    std::vector<long> nds{100, 200, 400, 800};
    bool json = false;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string_view a = argv[i];
        const char* v = argv[i + 1];
        if (a == "--oscillators")
            c.m = std::stoul(v);
        else if (a == "--tf")
            c.tf = std::stod(v);
        else if (a == "--windows")
            windows = std::stoll(v);
        else if (a == "--slots")
            slots = std::stoll(v);
        else if (a == "--window-nd")
            window_nd = std::stol(v);
        else if (a == "--nd") {
            nds.clear();
            std::istringstream in(v);
            for (long n = 0; in >> n;)
                nds.push_back(n);
        } else if (a == "--format")
            json = std::string_view(v) == "json";
        else {
            std::fprintf(stderr, "cvodes_long: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    try {
        const outcome fixed = in_child([&] {
            const auto f = c.forward();
            return outcome{.G = f.y0[0]};
        });
        // CVODES alone: its Nd swept; each configuration's time, memory and gradient.
        std::vector<outcome> own;
        for (const long nd : nds) {
            own.push_back(in_child([&] {
                const auto start = std::chrono::steady_clock::now();
                const auto s = remat::cvodes::solve_in_ram(c.forward(), {c.backward()}, c.tf, nd);
                return outcome{seconds_since(start),
                               0,
                               s.final_state.back(),
                               s.backward[0].quadratures[0],
                               s.backward[0].quadratures[1],
                               s.forward_steps,
                               0,
                               s.checkpoints};
            }));
            if (!json)
                std::printf("CVODES Nd = %4ld: %7.2f s CPU (%7.2f s wall), peak RSS %8.1f MiB, %lld steps, %lld "
                            "checkpoints\n",
                            nd, own.back().cpu, own.back().seconds,
                            static_cast<double>(own.back().rss - fixed.rss) / 1048576.0, own.back().steps,
                            own.back().extra);
        }
        std::size_t best = 0; // CVODES's best Nd: the least CPU time
        for (std::size_t i = 1; i < own.size(); ++i)
            if (own[i].cpu < own[best].cpu)
                best = i;
        const long nd_in = window_nd > 0 ? window_nd : std::max<long>(1, own[best].steps / windows + 8);
        const outcome mine = in_child([&] {
            remat::cvodes::solver_options options;
            options.steps_per_checkpoint = nd_in;
            remat::cvodes::adjoint_solver solver(c.forward(), {c.backward()}, options);
            const auto w = remat::cvodes::windows::uniform(0.0, c.tf, windows);
            remat::host_store store(slots);
            const auto start = std::chrono::steady_clock::now();
            const auto s = remat::cvodes::solve(solver, w, remat::revolve(windows, slots), store);
            return outcome{seconds_since(start),
                           0,
                           s.final_state.back(),
                           s.backward[0].quadratures[0],
                           s.backward[0].quadratures[1],
                           static_cast<long long>(s.report.forward_steps),
                           0,
                           static_cast<long long>(s.report.peak_snapshot_bytes)};
        });
        const outcome& base = own[best];
        const double mem_ratio = static_cast<double>(base.rss - fixed.rss) / static_cast<double>(mine.rss - fixed.rss);
        const double time_ratio = (mine.cpu - fixed.cpu) / (base.cpu - fixed.cpu);
        const double grad = std::max(relative(mine.dk, base.dk), relative(mine.de, base.de));
        if (json) {
            nlohmann::ordered_json j;
            j["unknowns"] = 2 * c.m;
            j["tf"] = c.tf;
            j["cvodes_steps"] = base.steps;
            j["fixed_rss_bytes"] = fixed.rss;
            j["cvodes"] = nlohmann::ordered_json::array();
            for (std::size_t i = 0; i < own.size(); ++i)
                j["cvodes"].push_back({{"nd", nds[i]},
                                       {"seconds", own[i].seconds},
                                       {"cpu_seconds", own[i].cpu},
                                       {"peak_rss_bytes", own[i].rss},
                                       {"checkpoints", own[i].extra},
                                       {"dGdp", {own[i].dk, own[i].de}}});
            j["remat"] = {{"windows", windows},
                          {"slots", slots},
                          {"window_nd", nd_in},
                          {"seconds", mine.seconds},
                          {"cpu_seconds", mine.cpu},
                          {"peak_rss_bytes", mine.rss},
                          {"peak_snapshot_bytes", mine.extra},
                          {"forward_windows", mine.steps},
                          {"dGdp", {mine.dk, mine.de}}};
            j["memory_ratio"] = mem_ratio;
            j["time_ratio"] = time_ratio;
            j["gradient_relative_difference"] = grad;
            remat::report::write_json(std::cout, j);
        } else {
            std::printf("remat: %lld windows, %lld slots, Nd %ld in a window: %7.2f s CPU (%7.2f s wall), peak RSS "
                        "%8.1f MiB (snapshots %.1f MiB), %lld forward windows\n",
                        static_cast<long long>(windows), static_cast<long long>(slots), nd_in, mine.cpu, mine.seconds,
                        static_cast<double>(mine.rss - fixed.rss) / 1048576.0,
                        static_cast<double>(mine.extra) / 1048576.0, mine.steps);
            std::printf(
                "against CVODES at its fastest Nd = %ld: memory %.1fx less, CPU time %.2fx, dG/dp agree to %.1e "
                "relative\n",
                nds[best], mem_ratio, time_ratio, grad);
        }
        return 0;
    } catch (const std::exception& ex) {
        std::fprintf(stderr, "cvodes_long: %s\n", ex.what());
        return 1;
    }
}
