#include "taped_search.hpp"

#include <bit>
#include <deque>
#include <stdexcept>
#include <vector>

namespace remat::test {

std::optional<std::uint64_t> fewest_taped_evaluations(step_t steps, slot_t units, slot_t tape_units, slot_t rerun_units)
{
    if (steps < 1 || steps > 8)
        throw std::invalid_argument("fewest_taped_evaluations: T must be 1..8");
    const auto t = static_cast<unsigned>(steps);
    const unsigned masks = 1u << t;
    // A state: next = the next step to reverse + 1 (0: done), cur = the current x_k + 1 (0: none).
    auto index = [&](unsigned next, unsigned cur, unsigned snaps, unsigned tapes) {
        return ((next * (t + 2) + cur) * masks + snaps) * masks + tapes;
    };
    const std::size_t size = static_cast<std::size_t>(t + 1) * (t + 2) * masks * masks;
    constexpr std::uint32_t unseen = UINT32_MAX;
    std::vector<std::uint32_t> dist(size, unseen);
    std::vector<bool> done(size, false);
    std::deque<std::uint32_t> queue;
    const unsigned start = index(t, 1, 0, 0);
    dist[start] = 0;
    queue.push_back(start);
    auto relax = [&](unsigned to, std::uint32_t d, bool free_move) {
        if (d < dist[to]) {
            dist[to] = d;
            if (free_move)
                queue.push_front(to);
            else
                queue.push_back(to);
        }
    };
    while (!queue.empty()) {
        const unsigned at = queue.front();
        queue.pop_front();
        if (done[at])
            continue;
        done[at] = true;
        const std::uint32_t d = dist[at];
        const unsigned tapes = at % masks;
        const unsigned snaps = (at / masks) % masks;
        const unsigned cur = (at / masks / masks) % (t + 2);
        const unsigned next = at / masks / masks / (t + 2);
        if (next == 0)
            return d;
        const unsigned r = next - 1; // the step to reverse next
        const slot_t held = std::popcount(snaps) + std::popcount(tapes) * tape_units;
        if (cur > 0) {
            const unsigned k = cur - 1; // x_k is current
            if (k < r)
                relax(index(next, cur + 1, snaps, tapes), d + 1, false);
            if (k <= r && (tapes & (1u << k)) == 0 && held + tape_units <= units)
                relax(index(next, k + 1 <= r ? cur + 1 : 0, snaps, tapes | (1u << k)), d + 1, false);
            if ((snaps & (1u << k)) == 0 && held + 1 <= units)
                relax(index(next, cur, snaps | (1u << k), tapes), d, true);
        }
        for (unsigned k = 0; k <= r; ++k)
            if ((snaps & (1u << k)) != 0) {
                relax(index(next, cur, snaps & ~(1u << k), tapes), d, true); // free
                relax(index(next, k + 1, snaps, tapes), d, true);            // restore
            }
        const unsigned dropped_snaps = snaps & ~(1u << r);
        if ((tapes & (1u << r)) != 0)
            relax(index(r, 0, dropped_snaps, tapes & ~(1u << r)), d, true);
        else if (cur == r + 1 && held + rerun_units - (rerun_units > 0 && (snaps & (1u << r)) != 0 ? 1 : 0) <= units)
            relax(index(r, 0, dropped_snaps, tapes), d + 1, false);
    }
    return std::nullopt;
}

} // namespace remat::test
