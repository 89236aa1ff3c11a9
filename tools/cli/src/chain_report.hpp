// The cost report of a heterogeneous-chain plan (`remat plan --chain FILE --budget B [--taped-advances]`), as
// text or JSON.
#pragma once

#include "plan_request.hpp"

#include <nlohmann/json.hpp>

#include <iosfwd>

namespace remat::cli {

/// choice.chain or choice.taped_chain must hold the plan.
nlohmann::ordered_json chain_json(const plan_choice& choice);
void write_chain_text(std::ostream& out, const plan_choice& choice);

} // namespace remat::cli
