// Keeping a block of a chain planned in blocks (chain_plan.hpp): what each set of stored inner states holds and
// costs, and the options worth a place in the tables.
#include "chain_ranking.hpp"
#include "chain_stages.hpp"

#include <algorithm>
#include <limits>
#include <utility>

namespace remat::detail {

namespace {

/// Prices keeping block [a, b) with the inner states `flags` marks, in the tables' units, counted as
/// remat::evaluate counts the actions the cursor gives (keep_actions, kept_actions): x_a held; store each marked
/// state on the way; after the right part, from the last stored state: restore it, re-run to the next one storing
/// each state, reverse those steps, restore, free and reverse it.
chain_plan::keep_option price_keep(const chain_plan& p, step_t a, step_t b, const std::uint8_t* flags)
{
    const chain_model& fine = p.fine;
    const auto units = [&](step_t k) { return units_of(fine.state_bytes(k), p.granularity); };
    const auto running = [&](step_t k) { return std::max(units(k), units(k + 1)); };
    const auto reversing = [&](step_t k) {
        return running(k) + units_of(fine.steps[static_cast<std::size_t>(k)].adjoint_bytes, p.granularity);
    };
    const auto stored = [&](step_t k) { return k == a || flags[k - a - 1] != 0; };
    chain_plan::keep_option o;
    std::uint64_t held = units(a);
    std::uint64_t need = 0;
    for (step_t k = a; k < b; ++k) {
        if (k > a && stored(k)) {
            held += units(k);
            need = std::max(need, held + units(k));
        }
        need = std::max(need, held + running(k));
    }
    o.held = held;
    step_t q = b;
    for (step_t pos = b - 1; pos >= a; --pos) {
        if (!stored(pos))
            continue;
        need = std::max(need, held + units(pos)); // restore x_pos
        std::uint64_t extra = 0;                  // the states of the re-run, stored above
        for (step_t k = pos; k + 1 < q; ++k) {
            if (k > pos) {
                extra += units(k);
                need = std::max(need, held + extra + units(k));
            }
            need = std::max(need, held + extra + running(k));
            o.adjoint += fine.steps[static_cast<std::size_t>(k)].forward;
        }
        if (q - 1 > pos) {
            need = std::max(need, held + extra + reversing(q - 1));
            o.adjoint += fine.steps[static_cast<std::size_t>(q - 1)].adjoint;
            for (step_t k = q - 2; k > pos; --k) {
                need = std::max(need, held + extra + units(k));
                extra -= units(k);
                need = std::max(need, held + extra + reversing(k));
                o.adjoint += fine.steps[static_cast<std::size_t>(k)].adjoint;
            }
            need = std::max(need, held + units(pos)); // restore x_pos again
        }
        held -= units(pos);
        need = std::max(need, held + reversing(pos));
        o.adjoint += fine.steps[static_cast<std::size_t>(pos)].adjoint;
        q = pos;
    }
    o.need = need;
    return o;
}

} // namespace

/// Each block's keep options: every set of its inner states (up to 10 of them; else the nested sets that drop the
/// most units per forward cost first), of which those no other beats in both held units and cost, thinned to
/// max_keep_options.
void choose_keep_options(chain_plan& p)
{
    const chain_model& fine = p.fine;
    const auto t = static_cast<std::size_t>(p.steps);
    p.keep_first.assign(t + 1, 0);
    p.keep_options.clear();
    p.keep_flags.clear();
    std::vector<std::pair<chain_plan::keep_option, std::vector<std::uint8_t>>> found;
    for (std::size_t s = 0; s < t; ++s) {
        const step_t a = static_cast<step_t>(s) * p.block;
        const step_t b = std::min(fine.size(), a + p.block);
        const auto inner = static_cast<std::size_t>(b - a - 1);
        found.clear();
        std::vector<std::uint8_t> flags(inner, 0);
        if (inner <= 10) {
            for (std::uint32_t mask = 0; mask < (1U << inner); ++mask) {
                for (std::size_t i = 0; i < inner; ++i)
                    flags[i] = static_cast<std::uint8_t>((mask >> i) & 1U);
                found.emplace_back(price_keep(p, a, b, flags.data()), flags);
            }
        } else {
            const std::vector<step_t> order = states_by_bytes_per_forward_cost(fine, a, b);
            std::fill(flags.begin(), flags.end(), std::uint8_t{1});
            found.emplace_back(price_keep(p, a, b, flags.data()), flags);
            for (const step_t k : order) {
                flags[static_cast<std::size_t>(k - a - 1)] = 0;
                found.emplace_back(price_keep(p, a, b, flags.data()), flags);
            }
        }
        std::sort(found.begin(), found.end(), [](const auto& x, const auto& y) {
            return x.first.held != y.first.held         ? x.first.held < y.first.held
                   : x.first.adjoint != y.first.adjoint ? x.first.adjoint < y.first.adjoint
                                                        : x.first.need < y.first.need;
        });
        std::vector<std::size_t> front; // cheaper than every option that holds no more
        double cheapest = std::numeric_limits<double>::infinity();
        for (std::size_t i = 0; i < found.size(); ++i)
            if (found[i].first.adjoint < cheapest) {
                cheapest = found[i].first.adjoint;
                front.push_back(i);
            }
        const std::size_t n = std::min(front.size(), chain_plan::max_keep_options);
        for (std::size_t i = 0; i < n; ++i) { // evenly along the front, both ends included
            const std::size_t pick = n == 1 ? front.back() : front[i * (front.size() - 1) / (n - 1)];
            chain_plan::keep_option o = found[pick].first;
            o.flags = static_cast<std::uint32_t>(p.keep_flags.size());
            p.keep_flags.insert(p.keep_flags.end(), found[pick].second.begin(), found[pick].second.end());
            p.keep_options.push_back(o);
        }
        p.keep_first[s + 1] = static_cast<std::uint32_t>(p.keep_options.size());
    }
}

} // namespace remat::detail
