// The kinds of the parts of a taped chain (chain_taped_table.hpp, part_kinds): which parts have the same steps,
// step by step, so that the runs form and the memory-at-a-time form fill their alike rows once.
#include "chain_taped_table.hpp"

#include <map>
#include <tuple>

namespace remat::detail {

std::vector<std::size_t> part_kinds(const taped_unit_chain& c, const std::vector<std::size_t>& offset)
{
    const std::size_t n = c.f.size();
    using step = std::tuple<std::uint64_t, std::uint64_t, std::uint64_t, std::uint64_t, double, double, double>;
    std::map<step, std::size_t> steps;
    std::vector<std::size_t> kind(n); // of step k
    for (std::size_t k = 0; k < n; ++k)
        kind[k] = steps.try_emplace(step{c.u[k], c.p[k], c.r[k], c.t[k], c.f[k], c.b[k], c.bt[k]}, steps.size())
                      .first->second;
    std::vector<std::size_t> kinds(offset.back() + 1);
    std::vector<std::size_t> part = kind; // of part (s, l), for the length l at hand
    constexpr std::size_t unseen = static_cast<std::size_t>(-1);
    std::vector<std::size_t> pair_kind(n * n, unseen), met;
    for (std::size_t l = 1; l <= n; ++l) {
        for (std::size_t s = 0; s + l <= n; ++s)
            kinds[offset[s] + l - 1] = part[s];
        // A part one step longer: its kind from (its kind, the next step's); both numbers are below n.
        std::size_t kinds_met = 0;
        for (std::size_t s = 0; s + l < n; ++s) {
            std::size_t& longer = pair_kind[part[s] * n + kind[s + l]];
            if (longer == unseen) {
                longer = kinds_met++;
                met.push_back(part[s] * n + kind[s + l]);
            }
            part[s] = longer;
        }
        for (const std::size_t i : met)
            pair_kind[i] = unseen;
        met.clear();
    }
    return kinds;
}

} // namespace remat::detail
