// The plan of a taped chain read off its recurrence's options (docs/heterogeneous.md, "Taped advances"; internal to
// src/schedule): remat::plan_taped_chain's table, at a memory, and remat::plan_taped_chain_least's peaks take the
// same options for a part, in the same places, so one reader writes both plans' actions; each form says where it
// keeps the options and in how many bits.
#pragma once

#include "chain_taped_table.hpp"

#include "remat/schedule/action.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace remat::detail {

/// The options a part (s, l) took, of l >= 2 steps, decoded from the form that keeps them.
struct taped_part_options {
    bool h_taped = false;    ///< H tapes step s (else it stores x_s and goes on as E)
    std::size_t e_split = 0; ///< E's split j (1 .. l-1), or e_tapes: E frees x_s's snapshot and tapes step s
};

/// taped_part_options::e_split where E takes the taped advance (no split is 0 steps long).
inline constexpr std::size_t e_tapes = 0;

/// options(s, l, m): the options of part (s, l) where it has m units, asked once for each part the plan reads (the
/// table's layers find them again by pricing the entry's splits). A form without a memory axis (the least peak)
/// ignores m.
using taped_options_fn = std::function<taped_part_options(std::size_t s, std::size_t l, std::uint64_t m)>;

/// Appends to `out` the actions of the whole chain's plan in m units, as `options` chose it: m is what the whole
/// chain has, and what a part has is m less what the parts around it hold (x_s's snapshot u_s beside a split's
/// right part, step s's tape t_s under the rest).
void emit_taped_chain(const taped_unit_chain& chain, std::uint64_t m, const taped_options_fn& options,
                      std::vector<action>& out);

} // namespace remat::detail
