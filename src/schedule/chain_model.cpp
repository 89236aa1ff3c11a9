#include "remat/schedule/chain_model.hpp"

#include "remat/detail/validate.hpp"
#include "remat/error.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <string>

namespace remat {

chain_model chain_model::uniform(step_t steps, double forward, double adjoint, std::uint64_t state_bytes,
                                 std::uint64_t adjoint_bytes)
{
    detail::require_positive_steps(steps);
    chain_model m;
    m.steps.assign(static_cast<std::size_t>(steps), chain_step{forward, adjoint, state_bytes, adjoint_bytes, 0});
    m.final_state_bytes = state_bytes;
    return m;
}

std::uint64_t chain_model::adjoint_need(step_t k) const noexcept
{
    return std::max(state_bytes(k), state_bytes(k + 1)) + steps[static_cast<std::size_t>(k)].adjoint_bytes;
}

double chain_model::store_all_cost() const noexcept
{
    double cost = 0;
    for (std::size_t k = 0; k < steps.size(); ++k)
        cost += (k + 1 < steps.size() ? steps[k].forward : 0.0) + steps[k].adjoint;
    return cost;
}

std::uint64_t chain_model::store_all_bytes() const noexcept
{
    // held = bytes of x_0..x_{k-1}; the forward sweep stores x_0..x_{T-2}, then each x_k is restored, freed and
    // reversed (a restore's snapshot + copy never exceeds the step that follows it).
    const step_t t = size();
    std::uint64_t held = 0;
    std::uint64_t peak = 0;
    for (step_t k = 0; k + 1 < t; ++k) {
        held += state_bytes(k);
        peak = std::max(peak, held + std::max(state_bytes(k), state_bytes(k + 1)));
    }
    peak = std::max(peak, held + adjoint_need(t - 1));
    for (step_t k = t - 2; k >= 0; --k) {
        held -= state_bytes(k);
        peak = std::max(peak, held + adjoint_need(k));
    }
    return peak;
}

namespace {

// The shortest text that reads back as `v` (std::to_string rounds to six decimals: -1e-9 became "-0.000000").
std::string shortest(double v)
{
    char buffer[32];
    return {buffer, std::to_chars(buffer, buffer + sizeof buffer, v).ptr};
}

} // namespace

void validate(const chain_model& chain)
{
    if (chain.steps.empty())
        throw argument_error("a chain needs at least one step, got none");
    std::uint64_t total = 0;
    std::uint64_t largest_adjoint = 0;
    auto add = [&](std::uint64_t bytes) {
        if (__builtin_add_overflow(total, bytes, &total))
            throw argument_error("the chain's state and tape sizes add up to more than 2^64-1 bytes (a tape: "
                                 "tape_bytes, or state_bytes + adjoint_bytes where 0)");
    };
    for (std::size_t k = 0; k < chain.steps.size(); ++k) {
        const chain_step& s = chain.steps[k];
        const std::string at = "step " + std::to_string(k);
        if (!std::isfinite(s.forward) || s.forward < 0)
            throw argument_error(at + ": forward cost must be finite and >= 0, got " + shortest(s.forward));
        if (!std::isfinite(s.adjoint) || s.adjoint < 0)
            throw argument_error(at + ": adjoint cost must be finite and >= 0, got " + shortest(s.adjoint));
        if (s.state_bytes == 0)
            throw argument_error(at + ": state_bytes must be at least 1, got 0");
        add(s.state_bytes);
        // A tape may be held with every state: its bytes count on top of them (the taped planners sum them). Where
        // tape_bytes is 0 the tape is m_k + a_k, and x_k, counted above, is its m_k.
        add(s.tape_bytes != 0 ? s.tape_bytes : s.adjoint_bytes);
        largest_adjoint = std::max(largest_adjoint, s.adjoint_bytes);
    }
    if (chain.final_state_bytes == 0)
        throw argument_error("final_state_bytes must be at least 1, got 0");
    add(chain.final_state_bytes);
    add(largest_adjoint);
    // Every memory total of a schedule is at most (all states) + (largest state) + (largest a_k).
    std::uint64_t largest = chain.final_state_bytes;
    for (const chain_step& s : chain.steps)
        largest = std::max(largest, s.state_bytes);
    add(largest);
}

namespace {

std::string exact_number(double v)
{
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.17g", v);
    return buffer;
}

} // namespace

std::string to_json(const chain_model& chain)
{
    std::string out = "{\"steps\": [";
    for (std::size_t k = 0; k < chain.steps.size(); ++k) {
        const chain_step& s = chain.steps[k];
        out += k == 0 ? "\n  " : ",\n  ";
        out += "{\"forward\": " + exact_number(s.forward) + ", \"adjoint\": " + exact_number(s.adjoint) +
               ", \"state_bytes\": " + std::to_string(s.state_bytes) +
               ", \"adjoint_bytes\": " + std::to_string(s.adjoint_bytes);
        if (s.tape_bytes != 0)
            out += ", \"tape_bytes\": " + std::to_string(s.tape_bytes);
        out += "}";
    }
    out += "],\n \"final_state_bytes\": " + std::to_string(chain.final_state_bytes) + "}\n";
    return out;
}

} // namespace remat
