// The outer table G(s, M) of a chain plan (left parts of at most K steps; chain_plan.hpp) and the whole loop's cost.
#include "chain_stages.hpp"

#include <algorithm>
#include <limits>

namespace remat::detail {

/// The outermost chain of checkpoints, with left parts of at most K steps.
void build_outer(chain_plan& p)
{
    const step_t t = p.steps;
    const step_t k = p.horizon;
    if (t <= k)
        return;
    const std::uint64_t row = p.row();
    const std::uint64_t top = p.units;
    p.outer_cost.assign(static_cast<std::size_t>(t) * row, std::numeric_limits<double>::infinity());
    p.outer_split.assign(static_cast<std::size_t>(t) * row, 0);
    auto g = [&](step_t s, std::uint64_t m) -> double {
        if (p.outer(s))
            return p.outer_cost[static_cast<std::size_t>(s) * row + m];
        const float h = p.cost[p.at(s, t - s) + m];
        if (t - s == 1) // reversed where it stands
            return m >= p.r[static_cast<std::size_t>(s)] ? p.model.steps[static_cast<std::size_t>(s)].adjoint
                                                         : std::numeric_limits<double>::infinity();
        return static_cast<double>(h);
    };
    for (step_t s = t - k - 1; s >= 0; --s) {
        const auto si = static_cast<std::size_t>(s);
        const std::uint64_t us = p.u[si];
        double* best = &p.outer_cost[si * row];
        std::uint16_t* chosen = &p.outer_split[si * row];
        std::uint64_t running = 0;
        double f = 0;
        for (step_t j = 1; j <= k; ++j) {
            const auto ji = static_cast<std::size_t>(s + j - 1);
            running = std::max(running, p.wide[ji]);
            f += p.model.steps[ji].forward;
            const std::uint64_t lo = us + running;
            if (lo > top)
                break;
            const float* left = &p.cost[p.at(s, j)];
            for (std::uint64_t m = lo; m <= top; ++m) {
                const double c = f + g(s + j, m - us) + static_cast<double>(left[m]);
                if (c < best[m]) {
                    best[m] = c;
                    chosen[m] = static_cast<std::uint16_t>(j);
                }
            }
        }
        if (p.keeps()) { // keep block s (chain_plan.hpp)
            for (std::uint32_t i = p.keep_first[si]; i < p.keep_first[si + 1]; ++i) {
                const chain_plan::keep_option& o = p.keep_options[i];
                const double own = p.model.steps[si].forward + o.adjoint;
                for (std::uint64_t m = std::max(o.need, o.held); m <= top; ++m) {
                    const double c = own + g(s + 1, m - o.held);
                    if (c < best[m]) {
                        best[m] = c;
                        chosen[m] = static_cast<std::uint16_t>(chain_plan::keep + (i - p.keep_first[si]));
                    }
                }
            }
        }
    }
}

double root_cost(const chain_plan& p, std::uint64_t m)
{
    if (p.outer(0))
        return p.outer_cost[m];
    if (p.steps == 1)
        return m >= p.r[0] ? p.model.steps[0].adjoint : std::numeric_limits<double>::infinity();
    return static_cast<double>(p.cost[p.at(0, p.steps) + m]);
}

std::uint64_t least_units(const chain_plan& p)
{
    std::uint64_t least = 0;
    while (least <= p.units && root_cost(p, least) == std::numeric_limits<double>::infinity())
        ++least;
    return least;
}

} // namespace remat::detail
