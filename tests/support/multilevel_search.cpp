#include "multilevel_search.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <queue>
#include <sstream>
#include <stdexcept>
#include <unordered_map>
#include <vector>

namespace remat::test {
namespace {

constexpr double infinity = std::numeric_limits<double>::infinity();

std::uint64_t capacity_of(const level_spec& level, step_t steps)
{
    return std::min<std::uint64_t>(level.slots, static_cast<std::uint64_t>(steps) + 1);
}

} // namespace

double exhaustive_multilevel_optimum(step_t steps, const cost_model& model)
{
    const std::size_t n = model.levels.size();
    if (steps > 8 || n > 3)
        throw std::invalid_argument("exhaustive_multilevel_optimum is exponential: T <= 8, at most 3 levels");
    // Node: current position + 1 (0: none), next step to reverse + 1, then one 8-bit mask per level.
    using masks_t = std::array<unsigned, 3>;
    auto key = [](int current, int next, const masks_t& masks) {
        return static_cast<std::uint64_t>(current + 1) | static_cast<std::uint64_t>(next + 1) << 4 |
               static_cast<std::uint64_t>(masks[0]) << 8 | static_cast<std::uint64_t>(masks[1]) << 16 |
               static_cast<std::uint64_t>(masks[2]) << 24;
    };
    std::array<std::uint64_t, 3> capacity{};
    for (std::size_t i = 0; i < n; ++i)
        capacity[i] = capacity_of(model.levels[i], steps);
    using entry = std::pair<double, std::uint64_t>;
    std::priority_queue<entry, std::vector<entry>, std::greater<>> queue;
    std::unordered_map<std::uint64_t, double> dist;
    dist.reserve(1 << 16);
    auto relax = [&](int current, int next, masks_t masks, double cost) {
        for (unsigned& m : masks) // snapshots beyond the next step to reverse are dead: drop them
            m &= next >= 0 ? (2u << next) - 1 : 0u;
        const std::uint64_t k = key(current, next, masks);
        const auto [it, fresh] = dist.try_emplace(k, cost);
        if (fresh || cost < it->second) {
            it->second = cost;
            queue.push({cost, k});
        }
    };
    relax(0, static_cast<int>(steps) - 1, masks_t{}, 0.0);
    while (!queue.empty()) {
        const auto [cost, k] = queue.top();
        queue.pop();
        if (dist[k] < cost)
            continue;
        const int current = static_cast<int>(k & 15) - 1;
        const int next = static_cast<int>((k >> 4) & 15) - 1;
        const masks_t masks{static_cast<unsigned>((k >> 8) & 255), static_cast<unsigned>((k >> 16) & 255),
                            static_cast<unsigned>((k >> 24) & 255)};
        if (next < 0)
            return cost;
        if (current >= 0 && current < next)
            relax(current + 1, next, masks, cost + model.step_cost);
        if (current == next)
            relax(-1, next - 1, masks, cost + model.reverse_cost);
        for (std::size_t i = 0; i < n; ++i) {
            const auto held = static_cast<std::uint64_t>(__builtin_popcount(masks[i]));
            if (current >= 0 && !(masks[i] & (1u << current)) && held < capacity[i]) {
                masks_t stored = masks;
                stored[i] |= 1u << current;
                relax(current, next, stored, cost + model.levels[i].write_cost);
            }
            for (int p = 0; p <= next; ++p) {
                if (!(masks[i] & (1u << p)))
                    continue;
                if (p != current)
                    relax(p, next, masks, cost + model.levels[i].read_cost);
                masks_t freed = masks;
                freed[i] &= ~(1u << p);
                relax(current, next, freed, cost);
            }
        }
    }
    throw std::logic_error("exhaustive_multilevel_optimum found no schedule");
}

double reference_multilevel_optimum(step_t steps, const cost_model& model)
{
    const std::size_t n = model.levels.size();
    if (steps > 255 || n > 4)
        throw std::invalid_argument("reference_multilevel_optimum: T <= 255, at most 4 levels");
    // Free slots per level, at most 254; 255 marks a level that is never counted down (unlimited, or
    // with room for the whole loop).
    constexpr unsigned uncounted = 255;
    std::vector<unsigned> initial(n);
    for (std::size_t i = 0; i < n; ++i)
        initial[i] = model.levels[i].slots < steps ? static_cast<unsigned>(model.levels[i].slots) : uncounted;
    auto key = [&](step_t l, const std::vector<unsigned>& free, std::size_t L, bool may_move) {
        std::uint64_t k = static_cast<std::uint64_t>(l) | static_cast<std::uint64_t>(L) << 8 |
                          static_cast<std::uint64_t>(may_move) << 10;
        for (std::size_t i = 0; i < n; ++i)
            k |= static_cast<std::uint64_t>(free[i]) << (11 + 8 * i);
        return k;
    };
    std::unordered_map<std::uint64_t, double> memo;
    // cost(l, free, L, may_move): x_a current and held on L; everything until its slot is freed.
    std::function<double(step_t, const std::vector<unsigned>&, std::size_t, bool)> cost =
        [&](step_t l, const std::vector<unsigned>& free, std::size_t L, bool may_move) -> double {
        const std::uint64_t k = key(l, free, L, may_move);
        if (const auto it = memo.find(k); it != memo.end())
            return it->second;
        double best = infinity;
        if (l == 1) {
            best = model.reverse_cost;
        } else {
            for (step_t m = 1; m < l; ++m) {
                const double left = model.levels[L].read_cost + cost(m, free, L, true);
                const double advance = model.step_cost * static_cast<double>(m);
                if (l - m == 1) {
                    best = std::min(best, advance + model.reverse_cost + left);
                    continue;
                }
                for (std::size_t to = 0; to < n; ++to) {
                    if (free[to] == 0)
                        continue;
                    auto less = free;
                    if (less[to] != uncounted)
                        --less[to];
                    best = std::min(best, advance + model.levels[to].write_cost + cost(l - m, less, to, true) + left);
                }
            }
        }
        if (may_move)
            for (std::size_t to = 0; to < n; ++to) {
                if (to == L || free[to] == 0)
                    continue;
                auto moved = free;
                if (moved[to] != uncounted)
                    --moved[to];
                if (moved[L] != uncounted)
                    ++moved[L];
                best = std::min(best, model.levels[to].write_cost + cost(l, moved, to, false));
            }
        memo[k] = best;
        return best;
    };
    if (steps == 1)
        return model.reverse_cost;
    double best = infinity;
    for (std::size_t L = 0; L < n; ++L) {
        auto free = initial;
        if (free[L] != uncounted)
            --free[L];
        best = std::min(best, model.levels[L].write_cost + cost(steps, free, L, true));
    }
    return best;
}

std::vector<slot_t> level_capacities(const cost_model& model)
{
    std::vector<slot_t> c;
    for (const level_spec& l : model.levels)
        c.push_back(l.slots);
    return c;
}

std::string describe(step_t steps, const cost_model& model)
{
    std::ostringstream s;
    s << "T=" << steps;
    for (const level_spec& l : model.levels)
        s << " [" << (l.slots == level_spec::unlimited ? std::string("inf") : std::to_string(l.slots))
          << " W=" << l.write_cost << " R=" << l.read_cost << "]";
    return s.str();
}

double replayed_price(const replay_counts& counts, const cost_model& model)
{
    double total = model.step_cost * static_cast<double>(counts.forward_steps) +
                   model.reverse_cost * static_cast<double>(counts.reverse_steps);
    for (std::size_t i = 0; i < model.levels.size(); ++i)
        total += model.levels[i].write_cost * static_cast<double>(counts.stores_per_level[i]) +
                 model.levels[i].read_cost * static_cast<double>(counts.restores_per_level[i]);
    return total;
}

} // namespace remat::test
