// The stages that build a chain plan (chain_plan.hpp), in the order chain::build runs them: discretise the chain
// (chain_shape.cpp), price its blocks' keep options (chain_keep.cpp), fill the inner and outer tables
// (chain_inner.cpp, chain_outer.cpp); the cursor (chain_cursor.cpp) finds the inner splits again.
#pragma once

#include "chain_plan.hpp"

#include <cstdint>

namespace remat::detail {

/// Whole units of `granularity` bytes that hold `bytes` (rounded up).
inline std::uint64_t units_of(std::uint64_t bytes, std::uint64_t granularity)
{
    return bytes / granularity + (bytes % granularity != 0 ? 1 : 0);
}

/// Discretises p's fine chain (blocks of p.block steps) for its tables: model, steps, granularity, units, u, r,
/// horizon and wide. `limited`: the horizon is (or, where choose_horizon throws, may be) shorter than the chain.
void shape_tables(chain_plan& p, const chain::options& opts, bool& limited);
/// Sets p's granularity, lossless, budget_units and units from its fine chain, budget and block.
void choose_granularity(chain_plan& p, const chain::options& opts);
/// The chain of blocks of `block` steps (see chain_plan.hpp).
chain_model blocked(const chain_model& fine, step_t block);
/// Sets p's horizon: the longest the table allows within max_table_entries, or opts.horizon. Throws
/// capacity_error where even a horizon of 1 does not fit, or opts.horizon does not.
void choose_horizon(chain_plan& p, const chain::options& opts);
/// The units of storing every state (chain_model::store_all_bytes in rounded sizes): always enough.
std::uint64_t store_all_units(const chain_plan& p);

/// Fills p's keep_first, keep_options and keep_flags (a chain planned in blocks).
void choose_keep_options(chain_plan& p);

/// E(s, l, .) for every s and l <= min(K, T - s) (chain_inner.cpp).
void build_inner(chain_plan& p);
/// The plan's choice at E(s, l, M), l >= 2: a split j, or chain_plan::keep + a keep option.
std::uint16_t inner_split(const chain_plan& p, step_t s, step_t l, std::uint64_t m);

/// G(s, .) for T - s > K (chain_outer.cpp).
void build_outer(chain_plan& p);
/// The cost of the whole loop with M units: G(0, M).
double root_cost(const chain_plan& p, std::uint64_t m);
/// The least M with a finite G(0, M) (units + 1 when none).
std::uint64_t least_units(const chain_plan& p);

} // namespace remat::detail
