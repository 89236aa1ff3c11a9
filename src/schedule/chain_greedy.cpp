// The greedy memory/compute ranking (remat/schedule/chain_greedy.hpp).
#include "remat/schedule/chain_greedy.hpp"

#include "remat/schedule/any_schedule.hpp"
#include "remat/schedule/chain.hpp"

#include "chain_ranking.hpp"

#include <algorithm>
#include <limits>

namespace remat {

std::vector<action> segment_actions(step_t t, const std::vector<bool>& checkpoint)
{
    std::vector<action> list;
    std::vector<step_t> starts;
    for (step_t k = 0; k < t; ++k)
        if (k == 0 || checkpoint[static_cast<std::size_t>(k)])
            starts.push_back(k);
    const auto n = static_cast<slot_t>(starts.size());
    // x_a current, held in `slot` (or not held: -1); reverse [a, b) storing x_{a+1}..x_{b-2} in the slots from
    // `above` on (those of the later checkpoints, freed by then: the slots in use stay 0 .. peak_slots - 1)
    const auto reverse_segment = [&](step_t a, step_t b, slot_t slot, slot_t above) {
        for (step_t k = a; k + 1 < b; ++k) {
            if (k > a)
                list.emplace_back(store{0, above + (k - a - 1), k});
            list.emplace_back(advance{k, k + 1});
        }
        if (b - 1 > a)
            list.emplace_back(reverse{b - 1});
        for (step_t k = b - 2; k > a; --k) {
            list.emplace_back(restore{0, above + (k - a - 1), k});
            list.emplace_back(free_slot{0, above + (k - a - 1)});
            list.emplace_back(reverse{k});
        }
        if (b - 1 > a && slot >= 0)
            list.emplace_back(restore{0, slot, a});
        if (slot >= 0)
            list.emplace_back(free_slot{0, slot});
        list.emplace_back(reverse{a});
    };
    for (slot_t i = 0; i + 1 < n; ++i) { // the forward sweep keeps every segment start but the last
        list.emplace_back(store{0, i, starts[static_cast<std::size_t>(i)]});
        list.emplace_back(advance{starts[static_cast<std::size_t>(i)], starts[static_cast<std::size_t>(i) + 1]});
    }
    const step_t last = starts.back();
    if (t - last > 1)
        list.emplace_back(store{0, n - 1, last});
    reverse_segment(last, t, t - last > 1 ? n - 1 : -1, n);
    for (slot_t i = n - 2; i >= 0; --i) {
        const auto a = starts[static_cast<std::size_t>(i)];
        list.emplace_back(restore{0, i, a});
        reverse_segment(a, starts[static_cast<std::size_t>(i) + 1], i, i + 1);
    }
    return list;
}

listed_plan greedy_ranking(const chain_model& m, std::uint64_t budget)
{
    const step_t t = m.size();
    const std::vector<step_t> order = detail::states_by_bytes_per_forward_cost(m, 0, t); // states 1..T-1
    // Dropping checkpoints shrinks the forward sweep's memory but grows the segments re-run at once, so the
    // peak is not monotone: try every count (in steps of T/200 on long chains) and keep the cheapest that fits.
    listed_plan best;
    double best_cost = std::numeric_limits<double>::infinity();
    const std::size_t stride = std::max<std::size_t>(1, order.size() / 200);
    std::vector<bool> keep(static_cast<std::size_t>(t), true);
    for (std::size_t dropped = 0; dropped <= order.size(); dropped += stride) {
        std::fill(keep.begin(), keep.end(), true);
        for (std::size_t i = 0; i < dropped; ++i)
            keep[static_cast<std::size_t>(order[i])] = false;
        auto actions = std::make_shared<const std::vector<action>>(segment_actions(t, keep));
        const listed_plan candidate(t, actions, {});
        const chain_evaluation e = evaluate(m, candidate);
        if (e.peak_bytes <= budget && e.cost < best_cost) {
            best_cost = e.cost;
            best = listed_plan(t, std::move(actions), e.counts, e.peak_bytes);
        }
    }
    return best;
}

} // namespace remat
