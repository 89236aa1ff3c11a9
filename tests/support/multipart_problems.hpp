// Two states made of several parts, with real adjoints, for the multi-part snapshot tests (tests only):
//
// - history_state: a solver's history array (its length changes from step to step, as an adaptive
//   multistep method's does) plus three scalars (t, dt, a parameter s), as std::pair<std::vector<double>,
//   std::array<double, 3>>: the library's own traits, two parts, the first resized on restore.
// - lstm_cell: an LSTM-like (h, c) pair in a struct of the user's with snapshot_traits<>::parts of its own.
//
// Each problem's gradient comes from its adjoint, which reads x_k as the driver restored it; the store-all
// run's gradient is the reference. The adjoint also compares every part of x_k with the plain forward
// sweep's x_k, so a restore that puts any byte of any part back wrong is counted.
#pragma once

#include "remat/driver/run.hpp"
#include "remat/store/snapshot_traits.hpp"
#include "remat/types.hpp"

#include <array>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <span>
#include <utility>
#include <vector>

namespace remat::test {

// ---- a history array plus scalars --------------------------------------------------------------------

using history_state = std::pair<std::vector<double>, std::array<double, 3>>; // history; t, dt, s

struct history_problem {
    std::size_t base = 24; // the history has base + (k % 5) entries at step k
    bool fixed_length = false;

    [[nodiscard]] std::size_t length(step_t k) const
    {
        return fixed_length ? base : base + static_cast<std::size_t>(k % 5);
    }

    [[nodiscard]] history_state initial() const
    {
        history_state x;
        x.first.reserve(base + 5); // resizing within the capacity never allocates
        x.first.resize(length(0));
        for (std::size_t i = 0; i < x.first.size(); ++i)
            x.first[i] = std::sin(0.3 * static_cast<double>(i) + 0.1);
        x.second = {0.0, 0.01, 1.7};
        return x;
    }

    // x_{k+1}[i] = x_k[i] + dt s sin(x_k[i+1 mod n]) for i < n_{k+1} (entries beyond n_k start from 0).
    void step(step_t k, history_state& x) const
    {
        const std::size_t n = x.first.size();
        const std::size_t next = length(k + 1);
        const double dt = x.second[1];
        const double s = x.second[2];
        std::array<double, 64> old{};
        for (std::size_t i = 0; i < n; ++i)
            old[i] = x.first[i];
        x.first.resize(next);
        for (std::size_t i = 0; i < next; ++i)
            x.first[i] = (i < n ? old[i] : 0.0) + dt * s * std::sin(old[(i + 1) % n]);
        x.second[0] += dt;
    }
};

// The adjoint of history_problem: lambda (dJ/dx_{k+1}) to dJ/dx_k, with dJ/ds accumulated.
struct history_adjoint {
    explicit history_adjoint(const history_problem* p) : problem(p) {}
    const history_problem* problem = nullptr;
    std::vector<double> lambda;
    std::vector<double> scratch;
    double ds = 0;

    void seed(const history_state& xT) { lambda.assign(xT.first.size(), 1.0); }

    void step(step_t k, const history_state& x)
    {
        const std::size_t n = x.first.size();
        const std::size_t next = problem->length(k + 1);
        const double dt = x.second[1];
        const double s = x.second[2];
        scratch.assign(n, 0.0);
        for (std::size_t i = 0; i < next; ++i) {
            const std::size_t j = (i + 1) % n;
            if (i < n)
                scratch[i] += lambda[i];
            scratch[j] += lambda[i] * dt * s * std::cos(x.first[j]);
            ds += lambda[i] * dt * std::sin(x.first[j]);
        }
        lambda.swap(scratch);
    }

    [[nodiscard]] std::vector<double> gradient() const
    {
        std::vector<double> g = lambda;
        g.push_back(ds);
        return g;
    }
};

// ---- an LSTM-like (h, c) pair ------------------------------------------------------------------------

struct lstm_cell {
    std::vector<float> h, c;
};

} // namespace remat::test

template <>
struct remat::snapshot_traits<remat::test::lstm_cell> {
    using part = remat::snapshot_traits<std::vector<float>>;
    static std::array<remat::const_bytes, 2> parts(const remat::test::lstm_cell& s) noexcept
    {
        return {part::bytes(s.h), part::bytes(s.c)};
    }
    static std::array<remat::mutable_bytes, 2> parts(remat::test::lstm_cell& s) noexcept
    {
        return {part::bytes(s.h), part::bytes(s.c)};
    }
};

namespace remat::test {

struct lstm_problem {
    std::size_t width = 48;

    [[nodiscard]] lstm_cell initial() const
    {
        lstm_cell x{std::vector<float>(width), std::vector<float>(width)};
        for (std::size_t i = 0; i < width; ++i) {
            x.h[i] = 0.01f * static_cast<float>(i);
            x.c[i] = -0.02f * static_cast<float>(i % 7);
        }
        return x;
    }

    // c' = 0.9 c + 0.1 tanh(h[i] + h[i+1]), h' = 0.5 h + 0.5 tanh(c').
    void step(step_t, lstm_cell& x) const
    {
        const std::size_t n = x.h.size();
        std::array<float, 64> h{};
        for (std::size_t i = 0; i < n; ++i)
            h[i] = x.h[i];
        for (std::size_t i = 0; i < n; ++i) {
            x.c[i] = 0.9f * x.c[i] + 0.1f * std::tanh(h[i] + h[(i + 1) % n]);
            x.h[i] = 0.5f * h[i] + 0.5f * std::tanh(x.c[i]);
        }
    }
};

// The adjoint of lstm_problem: (dh, dc) = dJ/d(h, c) at x_{k+1} -> at x_k.
struct lstm_adjoint {
    std::vector<double> dh, dc, th, tc;

    void seed(const lstm_cell& xT)
    {
        dh.assign(xT.h.size(), 1.0);
        dc.assign(xT.c.size(), 0.5);
    }

    void step(step_t, const lstm_cell& x)
    {
        const std::size_t n = x.h.size();
        th.assign(n, 0.0);
        tc.assign(n, 0.0);
        for (std::size_t i = 0; i < n; ++i) {
            const std::size_t j = (i + 1) % n;
            const double a = std::tanh(static_cast<double>(x.h[i]) + x.h[j]);
            const double cn = 0.9 * x.c[i] + 0.1 * a;
            const double tcn = std::tanh(cn);
            const double dcn = dc[i] + dh[i] * 0.5 * (1 - tcn * tcn); // through h' = 0.5 h + 0.5 tanh(c')
            th[i] += 0.5 * dh[i];
            tc[i] += 0.9 * dcn;
            const double da = 0.1 * dcn * (1 - a * a);
            th[i] += da;
            th[j] += da;
        }
        dh.swap(th);
        dc.swap(tc);
    }

    [[nodiscard]] std::vector<double> gradient() const
    {
        std::vector<double> g = dh;
        g.insert(g.end(), dc.begin(), dc.end());
        return g;
    }
};

// ---- running them ----------------------------------------------------------------------------------

/// The bytes of every part of a state, concatenated (to compare x_k with the forward sweep's).
template <class State>
std::vector<std::byte> all_parts(const State& x)
{
    std::vector<std::byte> out;
    for (const const_bytes& p : snapshot_traits<State>::parts(x))
        out.insert(out.end(), p.data, p.data + p.size);
    return out;
}

/// Bytes of all parts (allocates nothing).
template <class State>
std::size_t all_parts_size(const State& x)
{
    std::size_t n = 0;
    for (const const_bytes& p : snapshot_traits<State>::parts(x))
        n += p.size;
    return n;
}

/// A run of `plan` on `store`: the gradient, and how many x_k the adjoint saw that differ from the plain
/// forward sweep's (in any byte of any part, or in a part's size).
struct multipart_result {
    std::vector<double> gradient;
    std::size_t wrong_states = 0;
    run_report report;
};

template <class Problem, class Adjoint, class Plan, class Store>
multipart_result run_multipart(const Problem& problem, Adjoint adjoint, const Plan& plan, Store& store, step_t steps)
{
    using state = decltype(problem.initial());
    std::vector<std::vector<std::byte>> sweep; // x_0 .. x_{T-1} of a plain forward sweep
    {
        state x = problem.initial();
        for (step_t k = 0; k < steps; ++k) {
            sweep.push_back(all_parts(x));
            problem.step(k, x);
        }
    }
    multipart_result r;
    state x = problem.initial();
    r.report = remat::run(plan, store, x, remat::forward_step([&](step_t k, state& s) { problem.step(k, s); }),
                          remat::adjoint_step([&](step_t k, state& s) {
                              if (all_parts(s) != sweep[static_cast<std::size_t>(k)])
                                  ++r.wrong_states;
                              adjoint.step(k, s);
                          }),
                          remat::final_state([&](const state& xT) { adjoint.seed(xT); }));
    r.gradient = adjoint.gradient();
    return r;
}

} // namespace remat::test
