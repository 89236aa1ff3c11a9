// Reference optima of multi-level checkpointing (tests only), independent of the library's table.
#pragma once

#include "simulator.hpp"

#include "remat/schedule/action.hpp"
#include "remat/schedule/multilevel_model.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace remat::test {

/// Dijkstra over *all* legal action sequences with levels: any advance, store (the same x_k may be kept
/// on several levels at once), restore, free and reverse, each priced by `model` (reverse costs
/// included). No split structure is assumed. Exponential; T <= 8 and at most 3 levels of at most 8
/// positions each.
double exhaustive_multilevel_optimum(step_t steps, const cost_model& model);

/// A top-down dynamic program over (segment length, free slots per level, level of the segment's start),
/// memoised in a map, trying every split point, every level for the split's snapshot (or none when one
/// step is left) and every move of the start; written apart from the library's bottom-up table.
/// Includes the reverse costs. Meant for T <= 200 and a few small levels.
double reference_multilevel_optimum(step_t steps, const cost_model& model);

/// The capacity of each level, in the simulator's form.
std::vector<slot_t> level_capacities(const cost_model& model);

/// "T=100 [4 W=0 R=0] [inf W=5 R=5]": a test case in failure messages.
std::string describe(step_t steps, const cost_model& model);

/// The price of replayed counts, computed from the model's formula (not with remat::predicted_cost).
double replayed_price(const replay_counts& counts, const cost_model& model);

} // namespace remat::test
