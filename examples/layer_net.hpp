// A deep network whose layers differ in width and cost (shared by examples/layer_chain, its tests and
// bench/chain_plan): layer k maps x_k (w_k numbers) to x_{k+1} = tanh(W_k x_k + c_k), W_k of w_{k+1} x w_k.
// The state between layers is a std::vector<double> whose length changes from layer to layer.
#pragma once

#include <remat/types.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace remat::examples {

/// The weights of every layer, drawn from a fixed seed (a counter-based hash, so any layer is reproducible).
struct layer_net {
    std::vector<std::size_t> widths;          ///< w_0..w_T
    std::vector<std::vector<double>> weights; ///< W_k, row-major, w_{k+1} x w_k
    std::vector<std::vector<double>> biases;  ///< c_k

    layer_net(std::vector<std::size_t> layer_widths, std::uint64_t seed) : widths(std::move(layer_widths))
    {
        for (std::size_t k = 0; k + 1 < widths.size(); ++k) {
            const std::size_t in = widths[k];
            const std::size_t out = widths[k + 1];
            const double scale = 1.5 / std::sqrt(static_cast<double>(in));
            std::vector<double> w(in * out);
            std::vector<double> c(out);
            for (std::size_t i = 0; i < w.size(); ++i)
                w[i] = scale * uniform(seed, k, i);
            for (std::size_t i = 0; i < out; ++i)
                c[i] = 0.1 * uniform(seed, k, w.size() + i);
            weights.push_back(std::move(w));
            biases.push_back(std::move(c));
        }
    }

    [[nodiscard]] step_t layers() const noexcept { return static_cast<step_t>(widths.size()) - 1; }
    [[nodiscard]] std::size_t width(step_t k) const noexcept { return widths[static_cast<std::size_t>(k)]; }

    /// x_{k+1} = tanh(W_k x_k + c_k) into `out` (resized to w_{k+1}).
    void layer(step_t k, const std::vector<double>& x, std::vector<double>& out) const
    {
        const auto ki = static_cast<std::size_t>(k);
        const std::size_t in = widths[ki];
        const std::size_t n = widths[ki + 1];
        out.resize(n);
        const double* w = weights[ki].data();
        for (std::size_t i = 0; i < n; ++i) {
            double z = biases[ki][i];
            for (std::size_t j = 0; j < in; ++j)
                z += w[i * in + j] * x[j];
            out[i] = std::tanh(z);
        }
    }

    /// A uniform number in [-1, 1) from (seed, layer, index) (SplitMix64).
    static double uniform(std::uint64_t seed, std::size_t layer_index, std::size_t i)
    {
        std::uint64_t z = seed + 0x9E3779B97F4A7C15ull * (layer_index * 1000003ull + i + 1);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        return static_cast<double>(z >> 11) * 0x1.0p-52 - 1.0;
    }
};

/// The forward step for remat::run: x_k -> x_{k+1} in place (one scratch vector, reused).
struct layer_forward {
    const layer_net* net;
    std::vector<double> scratch{};
    void operator()(step_t k, std::vector<double>& x)
    {
        net->layer(k, x, scratch);
        x.swap(scratch);
    }
};

/// The adjoint step for remat::run, for J = sum of x_T: `a` holds dJ/dx_{k+1} on entry and dJ/dx_k on
/// exit; dW and dc accumulate dJ/dW_k and dJ/dc_k. It re-runs layer k from x_k.
struct layer_adjoint {
    const layer_net* net;
    std::vector<double> a;                 ///< set to ones(w_T) before the reverse sweep (seed())
    std::vector<std::vector<double>> dW{}; ///< per layer, like net->weights
    std::vector<std::vector<double>> dc{};
    std::vector<double> y{};
    std::vector<double> next{};

    explicit layer_adjoint(const layer_net& n) : net(&n) { seed(); }

    /// dJ/dx_T = 1 and zero parameter gradients.
    void seed()
    {
        a.assign(net->widths.back(), 1.0);
        dW.clear();
        dc.clear();
        for (std::size_t k = 0; k < net->weights.size(); ++k) {
            dW.emplace_back(net->weights[k].size(), 0.0);
            dc.emplace_back(net->biases[k].size(), 0.0);
        }
    }

    void operator()(step_t k, std::vector<double>& x)
    {
        const auto ki = static_cast<std::size_t>(k);
        const std::size_t in = net->widths[ki];
        const std::size_t n = net->widths[ki + 1];
        net->layer(k, x, y);
        next.assign(in, 0.0);
        const double* w = net->weights[ki].data();
        double* gw = dW[ki].data();
        for (std::size_t i = 0; i < n; ++i) {
            const double g = a[i] * (1.0 - y[i] * y[i]);
            dc[ki][i] += g;
            for (std::size_t j = 0; j < in; ++j) {
                gw[i * in + j] += g * x[j];
                next[j] += w[i * in + j] * g;
            }
        }
        a.swap(next);
    }
};

} // namespace remat::examples
