// Renders a chosen plan's cost as text or JSON, and its actions as text lines.
#pragma once

#include "plan_request.hpp"

#include <nlohmann/json.hpp>

#include <iosfwd>

namespace remat::cli {

nlohmann::ordered_json plan_json(const plan_choice& choice);
/// Adds a plan's counts to a JSON report: forward_steps, reverse_steps, stores, restores, peak_slots and
/// repetition (every schedule's report has them, in this order).
void add_counts(nlohmann::ordered_json& j, const schedule_cost& c);
void write_plan_text(std::ostream& out, const plan_choice& choice);
/// Streams every action; buffered, since T may be 10^7 or more.
void write_actions(std::ostream& out, const any_schedule& plan);

} // namespace remat::cli
