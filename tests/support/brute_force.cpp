#include "brute_force.hpp"

#include <algorithm>
#include <map>
#include <queue>
#include <stdexcept>
#include <tuple>

namespace remat::test {

split_optimum::split_optimum(step_t max_steps, slot_t max_slots)
    : inner_(static_cast<std::size_t>(max_slots) + 1,
             std::vector<forward_and_stores>(static_cast<std::size_t>(max_steps) + 1))
{
    const auto L = static_cast<std::size_t>(max_steps);
    for (std::size_t s = 1; s < inner_.size(); ++s) {
        auto& row = inner_[s];
        row[1] = {0, 0};
        for (std::size_t l = 2; l <= L; ++l) {
            if (s == 1) { // one slot holding x_0: run to the end, reverse, come back, repeat
                row[l] = {l * (l - 1) / 2, 0};
                continue;
            }
            forward_and_stores best{UINT64_MAX, UINT64_MAX};
            for (std::size_t m = 1; m < l; ++m) {
                const auto& right = inner_[s - 1][l - m];
                const auto& left = row[m];
                const std::uint64_t store_right = l - m >= 2 ? 1 : 0; // x_m is stored unless reversed at once
                best = std::min(
                    best, forward_and_stores{m + right.first + left.first, store_right + right.second + left.second});
            }
            row[l] = best;
        }
    }
}

forward_and_stores split_optimum::operator()(step_t steps, slot_t slots) const
{
    const auto& v = inner_.at(static_cast<std::size_t>(slots)).at(static_cast<std::size_t>(steps));
    return {v.first, v.second + (steps >= 2 ? 1 : 0)};
}

forward_and_stores general_optimum(step_t steps, slot_t slots)
{
    if (steps > 16)
        throw std::invalid_argument("general_optimum is exponential: T <= 16");
    // State: current position (-1: none), set of stored positions (bitmask), next step to reverse.
    using node = std::tuple<int, unsigned, int>;
    using cost = forward_and_stores;
    std::map<node, cost> dist;
    using entry = std::pair<cost, node>;
    std::priority_queue<entry, std::vector<entry>, std::greater<>> queue;
    const node start{0, 0u, static_cast<int>(steps) - 1};
    dist[start] = {0, 0};
    queue.push({{0, 0}, start});
    auto relax = [&](const node& n, const cost& c) {
        const auto it = dist.find(n);
        if (it == dist.end() || c < it->second) {
            dist[n] = c;
            queue.push({c, n});
        }
    };
    while (!queue.empty()) {
        const auto [c, n] = queue.top();
        queue.pop();
        if (dist[n] != c)
            continue;
        const auto [cur, stored, next] = n;
        if (next < 0)
            return c;
        const int count = __builtin_popcount(stored);
        if (cur >= 0 && cur < next)
            relax({cur + 1, stored, next}, {c.first + 1, c.second});
        if (cur >= 0 && !(stored & (1u << cur)) && count < slots)
            relax({cur, stored | (1u << cur), next}, {c.first, c.second + 1});
        for (int p = 0; p < static_cast<int>(steps); ++p) {
            if (!(stored & (1u << p)))
                continue;
            if (p <= next)
                relax({p, stored, next}, c);            // restore
            relax({cur, stored & ~(1u << p), next}, c); // free
        }
        if (cur == next)
            relax({-1, stored, next - 1}, c); // reverse
    }
    throw std::logic_error("general_optimum found no schedule");
}

} // namespace remat::test
