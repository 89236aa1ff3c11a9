// multilevel_table.hpp — the exact dynamic program of multi-level checkpointing (internal to src/schedule).
//
// Subproblem F(l, f, L): reverse l steps [a, a+l) when x_a is the current state and is held in a slot
// of level L, with f_i further free slots on each level i (a finite level's free count is tracked, an
// unlimited one's is not). Its cost counts every action from now until x_a's slot is freed, x_a's
// store excluded. With Q(1, f) = 0 (a last step is reversed where it stands) and, for k >= 2,
//
//     Q(k, f)    = min over levels L' with f_L' >= 1 of  W_L' + F(k, f - e_L', L')
//     G(1, f, L) = 0
//     G(l, f, L) = R_L + min over 1 <= m < l of  U*m + F(m, f, L) + Q(l-m, f)
//     F(l, f, L) = min( G(l, f, L),  min over L' != L with f_L' >= 1 of  W_L' + G(l, f - e_L' + e_L, L') )
//
// G splits: advance m steps, store x_{a+m} on the level Q chose, reverse the right part, free it, then
// restore x_a and reverse the left part with the same free slots. F may first *move* x_a to another level
// (store it there, free its old slot); the exhaustive search in the tests finds schedules that need moves.
// A plan for T steps stores x_0 first: min over L of W_L + F(T, c - e_L, L).
//
// Work: sum over l of (l-1) * rows * n  ~  T^2/2 * rows * n (plus, per length, the first terms of each minimum,
// the moves and Q's placements: rows * n * (32 + 2n) * T), rows = product over finite levels of
// (c_i + 1) (levels with c_i >= T-1 count as unlimited: a segment never holds more than T-1 snapshots).
// Memory: (13 * n + 9) * rows * (T+1) bytes.
//
// A *grid* table runs the same recurrence over super-steps of g steps: advancing m super-steps costs
// U*g*m, a segment of one super-step is reversed by a fine table over g steps (G(1, f, L) = F_fine(g, f,
// L); Q(1, f) = the fine cost of placing an unheld start), so every snapshot whose right part spans
// whole super-steps sits on the grid and everything inside a super-step is exact. The loop's last
// super-step may be shorter: segments that end with it use a second grid table (`last` steps in its last
// super-step) whose left parts come from the first one.
//
// A *layered* table runs the recurrence for one level o only (the outer level; every other level has a
// free limit of 0 here) and may hand any segment to an inner table (the `fine` one) as a *leaf*, which
// reverses it with every other level free and o holding at most the leaf's own start (the inner table's
// free limit of o is 0). With f the free slots of o, s(l) the steps of l units and I the inner table,
//
//     G(l, f) = min( F_I(s(l), full, o),  R_o + min over 1 <= m < l of  U*g*m + F(m, f) + Q(l-m, f) )
//     Q(k, f) = min( W_o + F(k, f - 1)  (f >= 1),  the cost of I placing an unheld start of s(k) steps )
//
// so a segment between two checkpoints of o is a leaf from its start on o, and a right part may also be
// a leaf whose start I places on a faster level. (g = 1 for a recurrence over single steps.) A leaf from
// a held start is recorded as split 0, a placed one as Q's level -1. Because the faster levels are all free
// whenever a leaf starts, I needs no row for what o holds: its work is that of the faster levels alone,
// and the outer recurrence's is (c_o + 1) * N^2/2 for N units. I is a table over steps, or (g > 1) a grid
// table over the same units with the same last unit, so that leaves may be longer than a table over steps
// could reach, exact within each unit.
#pragma once

#include "table_substrate.hpp"

#include "remat/error.hpp"
#include "remat/schedule/action.hpp"
#include "remat/schedule/multilevel_model.hpp"
#include "remat/types.hpp"

#include <array>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace remat::detail {

/// What the actions of one subtree of a multi-level schedule do: the counts of schedule_cost, with the
/// peaks counted from the subtree's own start snapshot (which is held throughout) upwards.
struct multilevel_counts {
    std::uint64_t forward_steps = 0;
    std::uint64_t repetition = 0; ///< the most advances of any one step of the subtree
    slot_t peak_slots = 0;        ///< all levels together
    std::array<std::uint64_t, max_levels> stores{};
    std::array<std::uint64_t, max_levels> restores{};
    std::array<slot_t, max_levels> peak{};
};

class multilevel_table;

/// How a grid or layered table's lengths count steps and hand segments to another table (see the top of
/// this header). The tables it names must outlive it.
struct multilevel_grid {
    const multilevel_table* fine = nullptr; ///< the table one unit (grid) or a leaf (layered) is handed to
    step_t steps = 1;                       ///< g: steps per unit
    step_t last = 1;                        ///< steps of the last unit of this table's segments
    const multilevel_table* left = nullptr; ///< the table of left parts, or null for this one
    /// Layered: the outer level, the only one this table stores on; -1 for a grid table (same free-slot
    /// limits as its fine table, every level).
    level_t outer = -1;
};

/// Counts already computed, per table and node (tables reach into each other's subtrees).
using multilevel_counts_cache =
    std::unordered_map<const multilevel_table*, std::unordered_map<std::uint64_t, multilevel_counts>>;

/// A free-slot limit that stands for an unlimited level (level_spec::unlimited as the tables' unsigned
/// limits hold it).
inline constexpr std::uint64_t unlimited_free = static_cast<std::uint64_t>(level_spec::unlimited);

/// The table of F, Q and their decisions for all lengths 1..horizon and all free-slot vectors up to the
/// given limits. Immutable once built; shared by a schedule and its cursors.
class multilevel_table {
public:
    /// `free_limit[i]` is the most free slots level i can have (unlimited_free for an unlimited level). `grid` makes a
    /// grid table. Throws remat::capacity_error when the table would exceed `max_entries` entries.
    multilevel_table(const cost_model& model, const std::vector<std::uint64_t>& free_limit, step_t horizon,
                     std::uint64_t max_entries, const multilevel_grid& grid = {});

    /// Inner-loop iterations of building the table (T^2/2 * rows * n), saturated at 2^64-1. A layered
    /// table computes one level: pass levels = 1.
    [[nodiscard]] static std::uint64_t work(std::size_t levels, const std::vector<std::uint64_t>& free_limit,
                                            step_t horizon) noexcept;
    /// Table entries (lengths x rows x levels), saturated at 2^64-1.
    [[nodiscard]] static std::uint64_t entries(std::size_t levels, const std::vector<std::uint64_t>& free_limit,
                                               step_t horizon) noexcept;

    [[nodiscard]] step_t horizon() const noexcept { return horizon_; }
    [[nodiscard]] level_t levels() const noexcept { return static_cast<level_t>(levels_); }
    /// The row with every level at its free limit (nothing held yet).
    [[nodiscard]] std::uint64_t full_row() const noexcept { return rows_ - 1; }

    [[nodiscard]] bool has_free(std::uint64_t row, level_t level) const noexcept
    {
        const auto i = static_cast<std::size_t>(level);
        return unlimited_[i] || (row / stride_[i]) % dims_[i] > 0;
    }
    /// The row with one slot of `level` taken (has_free must hold).
    [[nodiscard]] std::uint64_t taken(std::uint64_t row, level_t level) const noexcept
    {
        const auto i = static_cast<std::size_t>(level);
        return unlimited_[i] ? row : row - stride_[i];
    }
    /// The row with one slot of `level` given back (saturating at the limit).
    [[nodiscard]] std::uint64_t given_back(std::uint64_t row, level_t level) const noexcept
    {
        const auto i = static_cast<std::size_t>(level);
        return unlimited_[i] || (row / stride_[i]) % dims_[i] + 1 == dims_[i] ? row : row + stride_[i];
    }

    /// F(l, row, L), without the U*l of the stored table.
    [[nodiscard]] double value(step_t length, std::uint64_t row, level_t level) const noexcept
    {
        return p_[index(length, row, level)] - step_cost_ * static_cast<double>(length);
    }
    /// The level F moves x_a to before splitting, or -1.
    [[nodiscard]] level_t move(step_t length, std::uint64_t row, level_t level) const noexcept
    {
        return move_[index(length, row, level)];
    }
    /// G's split m (1 <= m < l) for l >= 2; 0 for a leaf of a layered table.
    [[nodiscard]] step_t split(step_t length, std::uint64_t row, level_t level) const noexcept
    {
        return static_cast<step_t>(split_[index(length, row, level)]);
    }
    /// The level Q stores the right part's start on; -1: a single step reversed where it stands, or the
    /// right part handed to the fine table from an unheld start (a grid's super-step, a layered leaf).
    [[nodiscard]] level_t store_level(std::uint64_t row, step_t k) const noexcept
    {
        return q_level_[row * stride_length() + static_cast<std::uint64_t>(k)];
    }

    /// Grid tables: the fine table of one super-step; layered tables: the inner table of leaves (null for a
    /// table of single steps).
    [[nodiscard]] const multilevel_table* fine() const noexcept { return grid_.fine; }
    /// Steps per unit of length (g for a grid or layered table, else 1).
    [[nodiscard]] step_t unit_steps() const noexcept { return grid_.fine != nullptr ? grid_.steps : 1; }
    /// Steps of the last unit of a segment (the super-step a one-unit segment stands for).
    [[nodiscard]] step_t last_steps() const noexcept { return grid_.fine != nullptr ? grid_.last : 1; }
    /// The length, in the fine table's units, of a segment of `length` units handed to it: its steps
    /// ((length - 1) * g + last) for a fine table over steps, `length` for a layered table's grid inner
    /// table (same units, same last unit).
    [[nodiscard]] step_t fine_length(step_t length) const noexcept
    {
        if (grid_.fine != nullptr && grid_.fine->grid_.fine != nullptr)
            return length;
        return (length - 1) * unit_steps() + last_steps();
    }
    /// The table that left parts of this table's segments use.
    [[nodiscard]] const multilevel_table* left_table() const noexcept
    {
        return grid_.left != nullptr ? grid_.left : this;
    }
    /// Layered tables: the outer level; -1 otherwise.
    [[nodiscard]] level_t outer_level() const noexcept { return grid_.outer; }
    /// Whether the segment F(l, row, L) is handed to fine() (one unit of a grid, a leaf of a layered
    /// table), at fine() row fine_row(row) and length fine_length(l), after any move.
    [[nodiscard]] bool handed_over(step_t length, std::uint64_t row, level_t level) const noexcept
    {
        return grid_.fine != nullptr && (length == 1 || (grid_.outer >= 0 && split(length, row, level) == 0));
    }
    /// The fine table's row for a segment handed over from `row` (the same row for a grid table; for a
    /// layered one, every other level free).
    [[nodiscard]] std::uint64_t fine_row(std::uint64_t row) const noexcept
    {
        return grid_.outer >= 0 ? grid_.fine->full_row() : row;
    }

    /// The counts of the subtree F(l, row, L) (memoised over the nodes it reaches).
    [[nodiscard]] multilevel_counts counts(step_t length, std::uint64_t row, level_t level,
                                           multilevel_counts_cache& cache) const;
    /// The counts of a segment of `length` units whose start is current and unheld, placed as Q chose
    /// (nothing for one step). Empty when no level has room.
    [[nodiscard]] multilevel_counts placed_counts(step_t length, std::uint64_t row,
                                                  multilevel_counts_cache& cache) const;
    /// The cost of that placement, Q(length, row) (0 for one step, infinity when no level has room).
    [[nodiscard]] double placed_cost(step_t length, std::uint64_t row) const noexcept;

private:
    /// The best level for x_a when it is current but not yet stored, among the levels with a free slot
    /// in `row`; -1 when none has one. Its cost is W_L + F(l, row - e_L, L).
    struct placement {
        level_t level = -1;
        double cost = 0;
    };
    [[nodiscard]] placement place_start(step_t length, std::uint64_t row) const noexcept;
    [[nodiscard]] std::uint64_t stride_length() const noexcept { return static_cast<std::uint64_t>(horizon_) + 1; }
    [[nodiscard]] std::uint64_t index(step_t length, std::uint64_t row, level_t level) const noexcept
    {
        return (static_cast<std::uint64_t>(level) * rows_ + row) * stride_length() + static_cast<std::uint64_t>(length);
    }
    void build();
    // build(), by length l of a batch beginning at l0: the batched minima of G's splits 16 <= m < l0, then
    // G (its split), F (its move) and Q (its placement) of each length.
    struct build_scratch {
        std::vector<double> g; ///< G(l, row, L) of the length being built
        std::vector<double> bulk_value;
        std::vector<std::int64_t> bulk_m;
    };
    [[nodiscard]] bool leaf_at(std::int64_t l) const noexcept; // G and Q of length l may take the fine table's
    void build_bulk(std::int64_t l0, build_scratch& scratch) const;
    void build_split(std::int64_t l, std::int64_t l0, bool bulk, build_scratch& scratch);
    void build_move(std::int64_t l, const build_scratch& scratch);
    void build_place(std::int64_t l);

    step_t horizon_;
    std::size_t levels_;
    double step_cost_; // of one unit of length
    multilevel_grid grid_;
    std::vector<double> write_;
    std::vector<double> read_;
    std::vector<bool> unlimited_;
    std::vector<std::uint64_t> dims_;
    std::vector<std::uint64_t> stride_;
    std::uint64_t rows_ = 1;
    std::vector<double> p_;            // F(l, row, L) + U*l
    std::vector<std::uint32_t> split_; // G's m
    std::vector<std::int8_t> move_;    // F's move target or -1
    std::vector<double> q_;            // Q(k, row) at [row][k]
    std::vector<std::int8_t> q_level_; // Q's level at [row][k], -1 for k = 1
};

} // namespace remat::detail
