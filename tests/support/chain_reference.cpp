#include "chain_reference.hpp"

#include <algorithm>
#include <cstddef>
#include <functional>
#include <limits>
#include <map>
#include <queue>
#include <stdexcept>
#include <tuple>
#include <variant>

namespace remat::test {
namespace {

std::uint64_t bytes_of(const chain_model& c, step_t k)
{
    return k == static_cast<step_t>(c.steps.size()) ? c.final_state_bytes
                                                    : c.steps[static_cast<std::size_t>(k)].state_bytes;
}

std::uint64_t running_need(const chain_model& c, step_t k)
{
    return std::max(bytes_of(c, k), bytes_of(c, k + 1));
}

} // namespace

chain_replay replay_chain(const chain_model& chain, const std::vector<action>& actions)
{
    chain_replay out;
    const auto t = static_cast<step_t>(chain.steps.size());
    std::map<slot_t, step_t> slots; // slot -> x_k held there
    std::uint64_t held = 0;
    step_t current = 0; // -1: none
    step_t next = t - 1;
    auto moment = [&](std::uint64_t bytes) { out.peak_bytes = std::max(out.peak_bytes, bytes); };
    moment(bytes_of(chain, 0));
    std::size_t index = 0;
    auto fail = [&](const std::string& why) {
        out.error = "action " + std::to_string(index) + " (" + to_string(actions[index]) + "): " + why;
    };
    for (; index < actions.size(); ++index) {
        const action& a = actions[index];
        if (const auto* v = std::get_if<advance>(&a)) {
            if (v->taped)
                return fail("a taped advance: chains are replayed with states only"), out;
            if (current != v->from || v->to <= v->from || v->to > next)
                return fail("does not start at the current state or passes the next step to reverse"), out;
            for (step_t k = v->from; k < v->to; ++k) {
                moment(held + running_need(chain, k));
                out.cost += chain.steps[static_cast<std::size_t>(k)].forward;
            }
            out.forward_steps += static_cast<std::uint64_t>(v->to - v->from);
            current = v->to;
        } else if (const auto* s = std::get_if<store>(&a)) {
            if (s->level != 0 || s->slot < 0 || slots.contains(s->slot) || current != s->step)
                return fail("not a store of the current state into a free slot of level 0"), out;
            slots[s->slot] = s->step;
            held += bytes_of(chain, s->step);
            moment(held + bytes_of(chain, s->step));
            ++out.stores;
        } else if (const auto* r = std::get_if<restore>(&a)) {
            const auto it = slots.find(r->slot);
            if (r->level != 0 || it == slots.end() || it->second != r->step || r->step > next)
                return fail("restores what its slot does not hold, or a state beyond the next step to reverse"), out;
            current = r->step;
            moment(held + bytes_of(chain, r->step));
            ++out.restores;
        } else if (const auto* f = std::get_if<free_slot>(&a)) {
            const auto it = slots.find(f->slot);
            if (f->level != 0 || it == slots.end())
                return fail("frees an empty slot"), out;
            held -= bytes_of(chain, it->second);
            slots.erase(it);
        } else {
            const step_t k = std::get<reverse>(a).step;
            if (k != next || current != k)
                return fail("reverses out of order or without x_k current"), out;
            moment(held + running_need(chain, k) + chain.steps[static_cast<std::size_t>(k)].adjoint_bytes);
            out.cost += chain.steps[static_cast<std::size_t>(k)].adjoint;
            current = -1;
            --next;
        }
    }
    if (next != -1)
        out.error = "steps 0.." + std::to_string(next) + " were never reversed";
    else if (!slots.empty())
        out.error = std::to_string(slots.size()) + " slots still held at the end";
    return out;
}

double brute_force_chain_optimum(const chain_model& chain, std::uint64_t budget, bool persistent)
{
    const auto t = static_cast<step_t>(chain.steps.size());
    if (t > 12)
        throw std::invalid_argument("brute_force_chain_optimum: T <= 12");
    const std::uint32_t masks = 1u << t; // snapshots of x_0..x_{T-1}
    std::vector<std::uint64_t> mask_bytes(masks, 0);
    for (std::uint32_t m = 1; m < masks; ++m) {
        const int low = __builtin_ctz(m);
        mask_bytes[m] = mask_bytes[m & (m - 1)] + bytes_of(chain, low);
    }
    // state: current (-1 = none), next step to reverse (-1 = done), held mask
    const auto index = [&](step_t cur, step_t next, std::uint32_t mask) {
        return (static_cast<std::size_t>(cur + 1) * static_cast<std::size_t>(t + 1) +
                static_cast<std::size_t>(next + 1)) *
                   masks +
               mask;
    };
    const double inf = std::numeric_limits<double>::infinity();
    std::vector<double> dist(static_cast<std::size_t>(t + 1) * static_cast<std::size_t>(t + 1) * masks, inf);
    using entry = std::tuple<double, step_t, step_t, std::uint32_t>;
    std::priority_queue<entry, std::vector<entry>, std::greater<>> queue;
    if (bytes_of(chain, 0) > budget)
        return inf;
    dist[index(0, t - 1, 0)] = 0;
    queue.emplace(0.0, 0, t - 1, 0u);
    while (!queue.empty()) {
        const auto [d, cur, next, mask] = queue.top();
        queue.pop();
        if (d > dist[index(cur, next, mask)])
            continue;
        if (next == -1 && mask == 0)
            return d;
        const std::uint64_t held = mask_bytes[mask];
        auto relax = [&](double nd, step_t c, step_t n, std::uint32_t m) {
            double& slot = dist[index(c, n, m)];
            if (nd < slot) {
                slot = nd;
                queue.emplace(nd, c, n, m);
            }
        };
        if (cur >= 0 && cur < next && held + running_need(chain, cur) <= budget)
            relax(d + chain.steps[static_cast<std::size_t>(cur)].forward, cur + 1, next, mask);
        if (cur >= 0 && (mask & (1u << cur)) == 0 && held + 2 * bytes_of(chain, cur) <= budget)
            relax(d, cur, next, mask | (1u << cur));
        if (cur >= 0 && cur == next &&
            held + running_need(chain, cur) + chain.steps[static_cast<std::size_t>(cur)].adjoint_bytes <= budget)
            relax(d + chain.steps[static_cast<std::size_t>(cur)].adjoint, -1, next - 1, mask);
        for (step_t j = 0; j < t; ++j) {
            if ((mask & (1u << j)) == 0)
                continue;
            if (!persistent || j > next || (j == next && cur == j))
                relax(d, cur, next, mask & ~(1u << j)); // free x_j
            if (j <= next && held + bytes_of(chain, j) <= budget)
                relax(d, j, next, mask); // restore x_j
        }
    }
    return inf;
}

} // namespace remat::test
