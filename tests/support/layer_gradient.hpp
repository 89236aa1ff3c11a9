// Gradients of examples/layer_net.hpp (tests only): through remat::run with any schedule and store, and a
// plain reference that keeps every state and needs no remat at all.
#pragma once

#include "layer_net.hpp"
#include "same_bits.hpp"

#include "remat/driver/run.hpp"
#include "remat/schedule/chain_model.hpp"

#include <vector>

namespace remat::test {

struct layer_gradient {
    std::vector<double> dx0;
    std::vector<std::vector<double>> dW, dc;
    run_report report;

    [[nodiscard]] bool same_bits_as(const layer_gradient& o) const
    {
        if (!same_bits(dx0, o.dx0) || dW.size() != o.dW.size())
            return false;
        for (std::size_t k = 0; k < dW.size(); ++k)
            if (!same_bits(dW[k], o.dW[k]) || !same_bits(dc[k], o.dc[k]))
                return false;
        return true;
    }
};

/// Widths that change from layer to layer: wide, wide, narrow, narrow, ... (each state's size differs
/// from its neighbours' half of the time), with a little variety.
inline std::vector<std::size_t> uneven_widths(step_t layers)
{
    std::vector<std::size_t> w;
    for (step_t k = 0; k <= layers; ++k)
        w.push_back((k / 2) % 2 == 0 ? 48 + static_cast<std::size_t>(k % 3) * 8 : 6 + static_cast<std::size_t>(k % 5));
    return w;
}

/// The chain model of a net: forward cost w_k * w_{k+1}, adjoint three times it, state bytes 8 w_k.
inline chain_model layer_chain_model(const examples::layer_net& net)
{
    chain_model m;
    for (step_t k = 0; k < net.layers(); ++k) {
        const double work = static_cast<double>(net.width(k) * net.width(k + 1));
        m.steps.push_back({work, 3 * work, 8 * net.width(k), 0});
    }
    m.final_state_bytes = 8 * net.widths.back();
    return m;
}

template <class Schedule, class Store>
layer_gradient layer_run(const Schedule& plan, Store& store, const examples::layer_net& net,
                         const std::vector<double>& x0)
{
    std::vector<double> x = x0;
    examples::layer_forward forward{&net};
    examples::layer_adjoint adjoint(net);
    layer_gradient g;
    g.report = run(plan, store, x, remat::forward_step(forward), remat::adjoint_step(adjoint));
    g.dx0 = adjoint.a;
    g.dW = adjoint.dW;
    g.dc = adjoint.dc;
    return g;
}

/// Every state kept in a vector, then the adjoint steps in reverse: no schedule, no store.
inline layer_gradient layer_reference(const examples::layer_net& net, const std::vector<double>& x0)
{
    std::vector<std::vector<double>> states{x0};
    for (step_t k = 0; k < net.layers(); ++k) {
        std::vector<double> next;
        net.layer(k, states.back(), next);
        states.push_back(std::move(next));
    }
    examples::layer_adjoint adjoint(net);
    for (step_t k = net.layers() - 1; k >= 0; --k) {
        std::vector<double> x = states[static_cast<std::size_t>(k)];
        adjoint(k, x);
    }
    return {adjoint.a, adjoint.dW, adjoint.dc, {}};
}

} // namespace remat::test
