#include "chain_cost_limit.hpp"

#include "remat/error.hpp"

#include <charconv>
#include <string>

namespace remat::detail {
namespace {

std::string approx(double v)
{
    char buffer[32];
    return {buffer, std::to_chars(buffer, buffer + sizeof buffer, v, std::chars_format::scientific, 2).ptr};
}

} // namespace

void require_costs_within(const chain_model& chain, double limit, const char* held_as)
{
    double forward = 0;
    double adjoint = 0;
    for (const chain_step& s : chain.steps) {
        forward += s.forward;
        adjoint += s.adjoint;
    }
    const double bound = static_cast<double>(chain.size()) * forward + adjoint;
    if (!(bound <= limit))
        throw argument_error("the chain's costs are too large for the planner's " + std::string(held_as) +
                             " tables: T * (sum of forward costs) + (sum of adjoint costs) = " + approx(bound) +
                             ", more than " + approx(limit) +
                             "; scale them all down alike (which leaves the optimal plan the same)");
}

} // namespace remat::detail
