#include "chain_taped_reference.hpp"

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

const chain_step& step_of(const chain_model& c, step_t k)
{
    return c.steps[static_cast<std::size_t>(k)];
}

std::uint64_t running(const chain_model& c, step_t k)
{
    return std::max(bytes_of(c, k), bytes_of(c, k + 1));
}

// What step k's tape holds: tape_bytes where given, else its input and its adjoint's extra bytes.
std::uint64_t tape_of(const chain_model& c, step_t k)
{
    const std::uint64_t given = step_of(c, k).tape_bytes;
    return given != 0 ? given : bytes_of(c, k) + step_of(c, k).adjoint_bytes;
}

double taped_reverse_cost(const chain_model& c, step_t k)
{
    return std::max(0.0, step_of(c, k).adjoint - step_of(c, k).forward);
}

} // namespace

chain_replay replay_taped_chain(const chain_model& chain, const std::vector<action>& actions)
{
    chain_replay out;
    const auto t = static_cast<step_t>(chain.steps.size());
    std::map<slot_t, step_t> slots;
    std::map<step_t, std::uint64_t> tapes;
    std::uint64_t held = 0;
    step_t current = 0; // -1: none
    step_t next = t - 1;
    auto current_bytes = [&] { return current < 0 ? 0 : bytes_of(chain, current); };
    auto moment = [&](std::uint64_t bytes) { out.peak_bytes = std::max(out.peak_bytes, bytes); };
    moment(bytes_of(chain, 0));
    std::size_t index = 0;
    auto fail = [&](const std::string& why) {
        out.error = "action " + std::to_string(index) + " (" + to_string(actions[index]) + "): " + why;
    };
    for (; index < actions.size(); ++index) {
        const action& a = actions[index];
        if (const auto* v = std::get_if<advance>(&a)) {
            if (current != v->from || v->to <= v->from || v->to > next + 1 || (!v->taped && v->to > next))
                return fail("does not start at the current state or passes the next step to reverse"), out;
            if (v->taped) {
                if (v->to != v->from + 1 || tapes.contains(v->from))
                    return fail("a taped advance of more than one step, or of a step whose tape is held"), out;
                moment(held + running(chain, v->from) + step_of(chain, v->from).adjoint_bytes);
                tapes[v->from] = tape_of(chain, v->from);
                held += tape_of(chain, v->from);
                out.cost += step_of(chain, v->from).forward;
                ++out.forward_steps;
                current = v->to;
                moment(held + current_bytes());
                continue;
            }
            for (step_t k = v->from; k < v->to; ++k) {
                moment(held + running(chain, k));
                out.cost += step_of(chain, k).forward;
            }
            out.forward_steps += static_cast<std::uint64_t>(v->to - v->from);
            current = v->to;
        } else if (const auto* s = std::get_if<store>(&a)) {
            if (s->level != 0 || s->slot < 0 || slots.contains(s->slot) || current != s->step || current >= t)
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
            if (k != next)
                return fail("reverses out of order"), out;
            if (const auto tape = tapes.find(k); tape != tapes.end()) {
                if (current != -1 && current != k + 1)
                    return fail("a taped reverse with a state current other than x_{k+1}"), out;
                moment(held + current_bytes());
                held -= tape->second;
                tapes.erase(tape);
                out.cost += taped_reverse_cost(chain, k);
            } else {
                if (current != k)
                    return fail("reverses without x_k current or step k's tape"), out;
                moment(held + running(chain, k) + step_of(chain, k).adjoint_bytes);
                out.cost += step_of(chain, k).adjoint;
            }
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

double brute_force_taped_chain_optimum(const chain_model& chain, std::uint64_t budget)
{
    const auto t = static_cast<step_t>(chain.steps.size());
    if (t > 7)
        throw std::invalid_argument("brute_force_taped_chain_optimum: T <= 7");
    const std::uint32_t masks = 1u << t;
    std::vector<std::uint64_t> snapshot_bytes(masks, 0);
    std::vector<std::uint64_t> tape_bytes(masks, 0);
    for (std::uint32_t m = 1; m < masks; ++m) {
        const int low = __builtin_ctz(m);
        snapshot_bytes[m] = snapshot_bytes[m & (m - 1)] + bytes_of(chain, low);
        tape_bytes[m] = tape_bytes[m & (m - 1)] + tape_of(chain, low);
    }
    // state: current (-1..T), next step to reverse (-1..T-1), snapshots held, tapes held
    const auto index = [&](step_t cur, step_t next, std::uint32_t mask, std::uint32_t tapes) {
        return ((static_cast<std::size_t>(cur + 1) * static_cast<std::size_t>(t + 1) +
                 static_cast<std::size_t>(next + 1)) *
                    masks +
                mask) *
                   masks +
               tapes;
    };
    const double inf = std::numeric_limits<double>::infinity();
    std::vector<double> dist(static_cast<std::size_t>(t + 2) * static_cast<std::size_t>(t + 1) * masks * masks, inf);
    using entry = std::tuple<double, step_t, step_t, std::uint32_t, std::uint32_t>;
    std::priority_queue<entry, std::vector<entry>, std::greater<>> queue;
    if (bytes_of(chain, 0) > budget)
        return inf;
    dist[index(0, t - 1, 0, 0)] = 0;
    queue.emplace(0.0, 0, t - 1, 0u, 0u);
    while (!queue.empty()) {
        const auto [d, cur, next, mask, tapes] = queue.top();
        queue.pop();
        if (d > dist[index(cur, next, mask, tapes)])
            continue;
        if (next == -1 && mask == 0 && tapes == 0)
            return d;
        const std::uint64_t held = snapshot_bytes[mask] + tape_bytes[tapes];
        auto relax = [&](double nd, step_t c, step_t n, std::uint32_t m, std::uint32_t tp) {
            double& slot = dist[index(c, n, m, tp)];
            if (nd < slot) {
                slot = nd;
                queue.emplace(nd, c, n, m, tp);
            }
        };
        if (cur >= 0 && cur < next && held + running(chain, cur) <= budget)
            relax(d + step_of(chain, cur).forward, cur + 1, next, mask, tapes);
        if (cur >= 0 && cur <= next && (tapes & (1u << cur)) == 0) {
            // A taped advance, keeping x_cur's snapshot or dropping it (the tape holds x_cur).
            const std::uint32_t bit = 1u << cur;
            for (const bool drop : {false, true}) {
                if (drop && (mask & bit) == 0)
                    continue;
                const std::uint64_t before = held - (drop ? bytes_of(chain, cur) : 0);
                const std::uint64_t after = before + tape_of(chain, cur);
                if (before + running(chain, cur) + step_of(chain, cur).adjoint_bytes <= budget &&
                    after + bytes_of(chain, cur + 1) <= budget)
                    relax(d + step_of(chain, cur).forward, cur + 1, next, drop ? mask & ~bit : mask, tapes | bit);
            }
        }
        if (cur >= 0 && cur < t && (mask & (1u << cur)) == 0 && held + 2 * bytes_of(chain, cur) <= budget)
            relax(d, cur, next, mask | (1u << cur), tapes);
        if (next >= 0 && (tapes & (1u << next)) == 0 && cur == next &&
            held + running(chain, cur) + step_of(chain, cur).adjoint_bytes <= budget)
            relax(d + step_of(chain, cur).adjoint, -1, next - 1, mask, tapes);
        if (next >= 0 && (tapes & (1u << next)) != 0 && (cur == -1 || cur == next + 1) &&
            held + (cur < 0 ? 0 : bytes_of(chain, cur)) <= budget)
            relax(d + taped_reverse_cost(chain, next), -1, next - 1, mask, tapes & ~(1u << next));
        for (step_t j = 0; j < t; ++j) {
            if ((mask & (1u << j)) == 0)
                continue;
            if (j > next || (j == next && cur == j) || (tapes & (1u << j)) != 0)
                relax(d, cur, next, mask & ~(1u << j), tapes); // free x_j
            if (j <= next && held + bytes_of(chain, j) <= budget)
                relax(d, j, next, mask, tapes); // restore x_j
        }
    }
    return inf;
}

} // namespace remat::test
