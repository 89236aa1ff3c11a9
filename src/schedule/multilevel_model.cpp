// The multi-level cost model: validation and the predicted cost of a schedule's counts.
#include "remat/schedule/multilevel_model.hpp"

#include "remat/error.hpp"

#include <cmath>
#include <string>

namespace remat {
namespace {

std::string describe(const level_spec& level, std::size_t index)
{
    return "level " + std::to_string(index) + (level.name.empty() ? std::string() : " (" + level.name + ")");
}

void require_cost(double value, const char* what, const std::string& where)
{
    if (!std::isfinite(value) || value < 0)
        throw argument_error(where + ": the " + what + " must be finite and >= 0, got " + std::to_string(value));
}

} // namespace

cost_model cost_model::single_level(slot_t slots)
{
    return cost_model{{level_spec{"memory", slots, 0.0, 0.0}}, 1.0, 0.0};
}

void validate(const cost_model& model)
{
    if (model.levels.empty())
        throw argument_error("a multi-level cost model needs at least one level, got none");
    if (model.levels.size() > max_levels)
        throw argument_error("a multi-level cost model takes at most " + std::to_string(max_levels) + " levels, got " +
                             std::to_string(model.levels.size()));
    for (std::size_t i = 0; i < model.levels.size(); ++i) {
        const level_spec& level = model.levels[i];
        if (level.slots < 1)
            throw argument_error(describe(level, i) + " must hold at least 1 slot, got " + std::to_string(level.slots));
        require_cost(level.write_cost, "write cost", describe(level, i));
        require_cost(level.read_cost, "read cost", describe(level, i));
    }
    if (!std::isfinite(model.step_cost) || model.step_cost <= 0)
        throw argument_error("the step cost must be finite and > 0, got " + std::to_string(model.step_cost));
    require_cost(model.reverse_cost, "reverse cost", "the model");
}

double predicted_cost(const schedule_cost& counts, const cost_model& model)
{
    if (counts.levels.size() > model.levels.size())
        throw argument_error("the schedule uses " + std::to_string(counts.levels.size()) +
                             " levels but the model has only " + std::to_string(model.levels.size()));
    double total = model.step_cost * static_cast<double>(counts.forward_steps) +
                   model.reverse_cost * static_cast<double>(counts.reverse_steps);
    for (std::size_t i = 0; i < counts.levels.size(); ++i)
        total += model.levels[i].write_cost * static_cast<double>(counts.levels[i].stores) +
                 model.levels[i].read_cost * static_cast<double>(counts.levels[i].restores);
    return total;
}

} // namespace remat
