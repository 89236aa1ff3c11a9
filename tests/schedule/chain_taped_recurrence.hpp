// A reference for remat::plan_taped_chain on chains too long for the exhaustive search (tests only): the plain
// recurrence of docs/heterogeneous.md ("Taped advances"), every entry the minimum over every split, filled by
// length, ties broken as documented (the least split; in E a split before the taped advance; in H the taped
// advance before E). It knows nothing of the planner's shortcuts (bounds, constant rows, scans): the planner
// must find the same optimum and the same plan.
#pragma once

#include "remat/schedule/action.hpp"
#include "remat/schedule/chain_model.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

namespace remat::test {

struct recurrence_plan {
    double cost = std::numeric_limits<double>::infinity(); ///< H(0, T, units); infinity where nothing fits
    std::vector<action> actions;                           ///< the plan's actions where it fits
};

/// The optimum and its plan at memory units of g bytes, budget_bytes / g units.
inline recurrence_plan plain_taped_recurrence(const chain_model& c, std::uint64_t budget_bytes, std::uint64_t g)
{
    constexpr double inf = std::numeric_limits<double>::infinity();
    const auto n = c.steps.size();
    const auto units = [g](std::uint64_t bytes) { return (bytes + g - 1) / g; };
    std::vector<std::uint64_t> u(n + 1), p(n), r(n), t(n);
    for (std::size_t k = 0; k <= n; ++k)
        u[k] = units(k < n ? c.steps[k].state_bytes : c.final_state_bytes);
    for (std::size_t k = 0; k < n; ++k) {
        p[k] = std::max(u[k], u[k + 1]);
        r[k] = p[k] + units(c.steps[k].adjoint_bytes);
        // the tape: its own size where given, else the input and a_k, each rounded up
        t[k] = c.steps[k].tape_bytes != 0 ? units(c.steps[k].tape_bytes) : u[k] + units(c.steps[k].adjoint_bytes);
    }
    const auto f = [&](std::size_t k) { return c.steps[k].forward; };
    const auto b = [&](std::size_t k) { return c.steps[k].adjoint; };
    const auto bt = [&](std::size_t k) { return std::max(0.0, b(k) - f(k)); };
    const std::uint64_t top = budget_bytes / g;
    const std::size_t w = top + 1;
    // [s][l][m], l from 1; option: -1 taped, j a split, 0 none
    std::vector<double> h(n * (n + 1) * w, inf), e(n * (n + 1) * w, inf);
    std::vector<int> hc(h.size(), 0), ec(h.size(), 0);
    const auto at = [&](std::size_t s, std::size_t l, std::uint64_t m) { return (s * (n + 1) + l) * w + m; };
    for (std::size_t l = 1; l <= n; ++l)
        for (std::size_t s = 0; s + l <= n; ++s)
            for (std::uint64_t m = 0; m <= top; ++m) {
                if (l == 1) {
                    h[at(s, 1, m)] = m >= r[s] ? b(s) : inf;
                    e[at(s, 1, m)] = m >= std::max(2 * u[s], r[s]) ? b(s) : inf;
                    continue;
                }
                // a tape given larger than the step's run may pass r_s: H below is read at m - t_s >= 0
                const double taped = m >= std::max(r[s], t[s]) ? f(s) + h[at(s + 1, l - 1, m - t[s])] + bt(s) : inf;
                double best = inf;
                int choice = 0;
                double forward = 0;
                std::uint64_t widest = 0;
                for (std::size_t j = 1; j < l; ++j) {
                    forward += f(s + j - 1);
                    widest = std::max(widest, p[s + j - 1]);
                    if (m < u[s] + widest)
                        continue;
                    const double v = forward + h[at(s + j, l - j, m - u[s])] + e[at(s, j, m)];
                    if (v < best) {
                        best = v;
                        choice = static_cast<int>(j);
                    }
                }
                if (m >= 2 * u[s] && taped < best) {
                    best = taped;
                    choice = -1;
                }
                e[at(s, l, m)] = best;
                ec[at(s, l, m)] = choice;
                const bool tape = taped <= best && taped != inf;
                h[at(s, l, m)] = tape ? taped : best;
                hc[at(s, l, m)] = tape ? -1 : 0;
            }
    recurrence_plan out;
    out.cost = h[at(0, n, top)];
    if (out.cost == inf)
        return out;
    struct emitter {
        const std::vector<int>& hc;
        const std::vector<int>& ec;
        const std::vector<std::uint64_t>& u;
        const std::vector<std::uint64_t>& t;
        decltype(at)& index;
        std::vector<action>& out;
        void taped(std::size_t s, std::size_t l, std::uint64_t m, slot_t slot)
        {
            const auto k = static_cast<step_t>(s);
            out.emplace_back(advance{k, k + 1, true});
            hh(s + 1, l - 1, m - t[s], slot);
            out.emplace_back(reverse{k});
        }
        void hh(std::size_t s, std::size_t l, std::uint64_t m, slot_t slot)
        {
            if (l == 1) {
                out.emplace_back(reverse{static_cast<step_t>(s)});
            } else if (hc[index(s, l, m)] < 0) {
                taped(s, l, m, slot);
            } else {
                out.emplace_back(store{0, slot, static_cast<step_t>(s)});
                ee(s, l, m, slot);
            }
        }
        void ee(std::size_t s, std::size_t l, std::uint64_t m, slot_t slot)
        {
            const auto k = static_cast<step_t>(s);
            if (l == 1 || ec[index(s, l, m)] < 0) {
                out.emplace_back(free_slot{0, slot});
                if (l == 1)
                    out.emplace_back(reverse{k});
                else
                    taped(s, l, m, slot);
                return;
            }
            const auto j = static_cast<std::size_t>(ec[index(s, l, m)]);
            out.emplace_back(advance{k, k + static_cast<step_t>(j), false});
            hh(s + j, l - j, m - u[s], slot + 1);
            out.emplace_back(restore{0, slot, k});
            ee(s, j, m, slot);
        }
    } emit{hc, ec, u, t, at, out.actions};
    emit.hh(0, n, top, 0);
    return out;
}

} // namespace remat::test
