// A lower bound on the multi-level optimum (docs/multilevel.md, "How far from the optimum").
//
// Take an optimal schedule without useless stores (a snapshot never restored can be dropped at no loss).
// When it holds the most snapshots at once, P of them, p_L on level L: it is a single-level schedule with P
// slots, so it runs at least binomial::min_forward_steps(T, P) forward steps; each of those P snapshots
// was written once and is read at least once (W_L + R_L each); and every reverse but the last is followed
// by a restore, so at least T-1-P restores more, each at least the cheapest read. The cheapest choice of
// the p_L is the P slots of least W_L + R_L. Minimised over P: every P up to 4096, then ranges [a, 2a)
// bounded below by their ends (the forward steps fall with P, the prices grow).
#include "remat/schedule/multilevel.hpp"

#include "remat/detail/validate.hpp"
#include "remat/error.hpp"
#include "remat/schedule/binomial.hpp"

#include <algorithm>
#include <limits>
#include <vector>

namespace remat {

double multilevel_lower_bound(step_t steps, const cost_model& model)
{
    detail::require_positive_steps(steps);
    validate(model);
    const double reverse = model.reverse_cost * static_cast<double>(steps);
    if (steps == 1)
        return reverse;
    const auto most = static_cast<std::uint64_t>(steps - 1);
    struct priced_slots {
        double price; // W + R
        std::uint64_t count;
    };
    std::vector<priced_slots> slots;
    double cheapest_read = std::numeric_limits<double>::infinity();
    for (const level_spec& level : model.levels) {
        slots.push_back({level.write_cost + level.read_cost, std::min(static_cast<std::uint64_t>(level.slots), most)});
        cheapest_read = std::min(cheapest_read, level.read_cost);
    }
    std::sort(slots.begin(), slots.end(), [](const auto& a, const auto& b) { return a.price < b.price; });
    std::uint64_t total = 0;
    for (const priced_slots& s : slots)
        total = std::min(most, total + s.count);
    // The price of the cheapest p slots.
    auto fill = [&](std::uint64_t p) {
        double price = 0;
        for (const priced_slots& s : slots) {
            const std::uint64_t take = std::min(p, s.count);
            price += s.price * static_cast<double>(take);
            p -= take;
        }
        return price;
    };
    auto forward = [&](std::uint64_t p) {
        try {
            return static_cast<double>(binomial::min_forward_steps(steps, static_cast<slot_t>(p)));
        } catch (const overflow_error&) {
            return std::numeric_limits<double>::infinity();
        }
    };
    // Below any schedule whose peak lies in [a, b].
    auto bound = [&](std::uint64_t a, std::uint64_t b) {
        return model.step_cost * forward(b) + fill(a) + cheapest_read * static_cast<double>(most > b ? most - b : 0);
    };
    double best = std::numeric_limits<double>::infinity();
    constexpr std::uint64_t every = 4096;
    for (std::uint64_t p = 1; p <= std::min(total, every); ++p)
        best = std::min(best, bound(p, p));
    for (std::uint64_t a = every + 1; a <= total; a = 2 * a)
        best = std::min(best, bound(a, std::min(total, 2 * a - 1)));
    // A hair below, so that rounding in the sums never lifts the bound above an exact optimum.
    return (best + reverse) * (1 - 1e-12);
}

} // namespace remat
