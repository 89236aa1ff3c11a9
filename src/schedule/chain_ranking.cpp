#include "chain_ranking.hpp"

#include <algorithm>

namespace remat::detail {

std::vector<step_t> states_by_bytes_per_forward_cost(const chain_model& m, step_t first, step_t last)
{
    std::vector<step_t> order;
    for (step_t k = first + 1; k < last; ++k)
        order.push_back(k);
    const auto ratio = [&](step_t k) {
        return static_cast<double>(m.state_bytes(k)) /
               std::max(m.steps[static_cast<std::size_t>(k - 1)].forward, 1e-300);
    };
    std::stable_sort(order.begin(), order.end(), [&](step_t x, step_t y) { return ratio(x) > ratio(y); });
    return order;
}

} // namespace remat::detail
