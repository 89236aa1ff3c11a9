// Drives pyrevolve's C++ `Revolve` (its header and sources are outside this repository: see
// bench/pyrevolve_peer.sh) the way a user's loop does: one call per action until `terminate`.
#include "pyrevolve_peer.hpp"

#include <revolve.h>

#include "remat/schedule/binomial.hpp"

#include <limits>

namespace remat::bench::pyrevolve {

bool supports(std::int64_t steps, std::int64_t slots)
{
    constexpr std::int64_t int_max = std::numeric_limits<int>::max();
    if (steps < 2 || slots < 1 || steps > int_max || slots > checkup)
        return false;
    const std::uint64_t r = remat::binomial::repetition_number(steps, slots);
    if (r > repsup)
        return false;
    // Its loop ends on range = beta(slots, r) after forming beta(slots, r-1) * (slots + r) = beta(slots, r) * r.
    const std::uint64_t top = remat::binomial::max_steps(slots, r);
    return top <= static_cast<std::uint64_t>(int_max) / (r > 0 ? r : 1);
}

pass_counts run_pass(std::int64_t steps, std::int64_t slots)
{
    pass_counts counts;
    Revolve plan(static_cast<int>(steps), static_cast<int>(slots));
    for (;;) {
        switch (plan.revolve()) {
        case ACTION::advance:
            counts.forward_steps += static_cast<std::uint64_t>(plan.getcapo() - plan.getoldcapo());
            break;
        case ACTION::takeshot:
        case ACTION::restore:
            counts.checksum += static_cast<std::uint64_t>(plan.getcheck());
            break;
        case ACTION::firsturn:
        case ACTION::youturn:
            ++counts.reversed;
            break;
        case ACTION::terminate:
            return counts;
        case ACTION::error:
            counts.error = true;
            return counts;
        }
    }
}

} // namespace remat::bench::pyrevolve
