// The dynamic program of remat::plan_taped_chain (include/remat/schedule/chain_taped.hpp; internal to
// src/schedule): the chain in memory units, and the table of its optimum over every part and memory, each entry
// with the option it took, from which the plan's actions are read.
#pragma once

#include "remat/schedule/action.hpp"
#include "remat/schedule/chain_model.hpp"

#include <cstdint>
#include <memory>
#include <vector>

namespace remat {
struct taped_chain_plan;
} // namespace remat

namespace remat::detail {

/// The sizes of the model in units of g: u_k = ceil(m_k / g), p_k = max(u_k, u_{k+1}), c_k = ceil(a_k / g),
/// r_k = p_k + c_k (a step's run) and t_k (its tape: ceil(tape_bytes / g) where given, else u_k + c_k);
/// bt_k = max(0, b_k - f_k); taped_from_k = max(r_k, t_k), the least memory where step k's taped advance is priced
/// (H(s+1, l-1, M - t_s) needs M >= t_s; a tape given larger than the step's run may pass r_k).
struct taped_unit_chain {
    std::vector<std::uint64_t> u, p, r, t, taped_from; // u has T + 1 entries
    std::vector<double> f, b, bt;
    taped_unit_chain(const chain_model& c, std::uint64_t g);
    /// The all-taped plan's peak in units (what more memory never improves on).
    [[nodiscard]] std::uint64_t all_taped() const;
};

/// An entry's options: E's in the low bits (the split j, e_taped, or 0 where nothing fits), H's in h_taped.
inline constexpr std::uint16_t e_taped = 0x3fff;
inline constexpr std::uint16_t e_option = 0x3fff;
inline constexpr std::uint16_t h_taped = 0x8000;

/// H(s, l, M) and E(s, l, M) of docs/heterogeneous.md ("Taped advances") for every part s..s+l-1 of the chain
/// and every memory M <= units, and the option each took: the same optimum and the same choices (ties broken
/// alike: the least split, a split before the taped advance in E, the taped advance before E in H) as the plain
/// recurrence. Three ways to fill it: a dense table with a bounded search over the splits (chain_taped_table.cpp),
/// runs of equal entries for few steps in many units (chain_taped_runs.cpp), and, for long chains, a memory at a
/// time with every split priced in vector loops (chain_taped_layers.cpp).
class taped_chain_optimum {
public:
    explicit taped_chain_optimum(const taped_unit_chain& chain) : c_(chain) {}
    virtual ~taped_chain_optimum() = default;
    taped_chain_optimum(const taped_chain_optimum&) = delete;
    taped_chain_optimum& operator=(const taped_chain_optimum&) = delete;

    /// H(0, T, m): the optimum of the whole chain in m units (infinity where nothing fits).
    [[nodiscard]] virtual double whole(std::uint64_t m) const = 0;
    /// The options of entry (s, l, m).
    [[nodiscard]] virtual std::uint16_t code(std::size_t s, std::size_t l, std::uint64_t m) const = 0;
    /// The least memory in which the whole chain has a plan, given one in `most` (whole(most) finite). By halving:
    /// more memory never costs more.
    [[nodiscard]] virtual std::uint64_t least(std::uint64_t most) const;
    /// The actions of the whole chain's optimum in m units (whole(m) finite), read off its codes
    /// (chain_taped_emit.hpp).
    void emit(std::uint64_t m, std::vector<action>& out) const;
    /// Split points priced (and ranges of them bounded, runs of them merged) while filling the table.
    [[nodiscard]] std::uint64_t work() const { return work_; }

protected:
    const taped_unit_chain& c_;
    mutable std::uint64_t work_ = 0; // a form may price some entries only when asked
};

/// The optimum of `chain` in up to `units` units, held the way that suits its size.
[[nodiscard]] std::unique_ptr<taped_chain_optimum> taped_chain_solve(const taped_unit_chain& chain,
                                                                     std::uint64_t units);

/// The dense table: every entry stored.
class taped_chain_table final : public taped_chain_optimum {
public:
    taped_chain_table(const taped_unit_chain& chain, std::uint64_t units);
    ~taped_chain_table() override;
    [[nodiscard]] double whole(std::uint64_t m) const override;
    [[nodiscard]] std::uint16_t code(std::size_t s, std::size_t l, std::uint64_t m) const override;

private:
    struct storage;
    [[nodiscard]] std::size_t row(std::size_t s, std::size_t l) const { return offset_[s] + l - 1; }
    void fill_single(std::size_t s);
    void fill(std::size_t s, std::size_t l);
    [[nodiscard]] std::uint64_t constant_from(std::size_t s, std::size_t l) const;
    void splits_by_scan(std::size_t s, std::size_t l, std::uint64_t hi, double* e, std::uint16_t* code);
    void splits_by_bounds(std::size_t s, std::size_t l, std::uint64_t hi, const double* taped, double* e,
                          std::uint16_t* code);
    void add_to_range_minima(std::size_t s, std::size_t end);
    [[nodiscard]] double least_g(std::size_t from, std::size_t to, std::uint64_t m) const;

    std::size_t n_;
    std::uint64_t units_;
    std::size_t width_;
    std::vector<std::size_t> offset_; // rows of start s: offset_[s] + l - 1
    std::unique_ptr<storage> t_;
    double slack_ = 0; // what the bounds' rounding may miss by (chain_taped_table.cpp)
};

/// The table a memory at a time (chain_taped_layers.cpp): every split priced, in loops that stream; E and H held
/// memory after memory, the options found again when asked.
class taped_chain_layers final : public taped_chain_optimum {
public:
    taped_chain_layers(const taped_unit_chain& chain, std::uint64_t units);
    ~taped_chain_layers() override;
    [[nodiscard]] double whole(std::uint64_t m) const override;
    [[nodiscard]] std::uint16_t code(std::size_t s, std::size_t l, std::uint64_t m) const override;

private:
    class table;
    using add_split_fn = void (*)(double*, const double*, double, double, std::size_t);
    void fill_layer(std::uint64_t m, add_split_fn add_split);
    [[nodiscard]] double taped_cost(std::size_t s, std::size_t l, std::uint64_t m) const;
    [[nodiscard]] double* layer(table& t, std::uint64_t m) const;
    [[nodiscard]] const double* layer(const table& t, std::uint64_t m) const;

    std::size_t n_;
    std::uint64_t units_;
    std::size_t width_;
    std::size_t rows_ = 0;
    std::vector<std::size_t> offset_;   // rows of start s: offset_[s] + l - 1
    std::unique_ptr<table> e_, h_;      // width x rows: E(s, l, m) and H(s, l, m) at m * rows + row
    std::vector<double> forward_;       // rows: F(s, j)
    std::vector<std::uint64_t> widest_; // rows: max(p_s .. p_{s+j-1})
    std::vector<std::size_t> alike_;    // starts: a start to its right, in a tile filled before, whose rows its
                                        // first ones are (n_: none); its rows from n_ - alike_[s] on are filled
};

/// The kind of every part (s, l) of the chain, at offset[s] + l - 1 (a number below T): parts of one kind have the
/// same steps, step by step (sizes in units and costs), so the same entries. A stack of identical blocks has T
/// kinds of parts, not T (T + 1) / 2.
[[nodiscard]] std::vector<std::size_t> part_kinds(const taped_unit_chain& chain,
                                                  const std::vector<std::size_t>& offset);

/// The table as runs of equal entries along the memory: a row of few steps changes at tens of memories out of
/// thousands, and the recurrence's sums and minima are taken run by run (chain_taped_runs.cpp). The first starts,
/// which the whole chain reads at a few memories only (the first at one), are priced at the memories asked
/// (chain_taped_points.cpp).
class taped_chain_runs final : public taped_chain_optimum {
public:
    taped_chain_runs(const taped_unit_chain& chain, std::uint64_t units);
    [[nodiscard]] double whole(std::uint64_t m) const override;
    [[nodiscard]] std::uint16_t code(std::size_t s, std::size_t l, std::uint64_t m) const override;
    [[nodiscard]] std::uint64_t least(std::uint64_t most) const override;

    /// From memory `from` on (to the next run), the value and the options.
    struct run {
        run(std::uint64_t at, double v, std::uint16_t c) : value(v), from(static_cast<std::uint32_t>(at)), code(c) {}
        double value;
        std::uint32_t from; // a memory: below 2^23, the table's entries (16 bytes a run, not 24: less to touch)
        std::uint16_t code;
    };

private:
    struct span {
        const run* first;
        const run* last;
    };
    // A point: the entries of one start at one memory, priced when first asked, H(s, l, m) (of a start priced by
    // points, or read off the runs for the others) and the options at [its offset + l - 1]; one record per memory
    // asked holds every start's point there (its offset, plus one; 0: not yet).
    static constexpr std::size_t unpriced = 0;
    static constexpr std::uint64_t no_memory = ~std::uint64_t{0};
    [[nodiscard]] std::size_t row(std::size_t s, std::size_t l) const { return offset_[s] + l - 1; }
    [[nodiscard]] span h_row(std::size_t s, std::size_t l) const;
    [[nodiscard]] double h_at(std::size_t s, std::size_t l, std::uint64_t m) const;
    [[nodiscard]] std::size_t at(std::size_t s, std::uint64_t m) const;
    [[nodiscard]] std::size_t at(std::size_t s, std::size_t record, std::uint64_t m) const;
    [[nodiscard]] std::size_t memory_record(std::uint64_t m) const;
    // Each returns the offset of the point it adds.
    [[nodiscard]] std::size_t price_point(std::size_t s, std::uint64_t m) const;
    [[nodiscard]] std::size_t read_column(std::size_t s, std::uint64_t m) const;
    struct points_estimate {
        std::size_t starts;  // priced by points
        std::size_t entries; // the points' entries, about
    };
    [[nodiscard]] points_estimate starts_by_points(const std::vector<std::size_t>& kinds) const;
    [[nodiscard]] std::uint64_t least_units() const;
    void fill(std::size_t s, std::size_t l);
    void fill_single(std::size_t s);
    void add_split(std::size_t s, std::size_t l, std::size_t j, double forward, std::uint64_t fits);
    void store(std::size_t s, std::size_t l);

    std::size_t n_;
    std::uint64_t units_;
    std::size_t by_points_ = 0;                        // starts below it are priced at the memories asked
    mutable std::vector<double> point_h_;              // every point's H, at its offset
    mutable std::vector<std::uint16_t> point_options_; // and its options (a start priced by points)
    mutable std::vector<std::size_t> records_;         // record r: start s's point there, plus one, at r * T + s
    mutable std::vector<std::uint64_t> memory_keys_;   // the memories asked, hashed (open addressing)
    mutable std::vector<std::size_t> memory_records_;  // and their records
    mutable std::vector<double> e_scratch_;            // E(s, l, m) of the point being priced
    mutable std::vector<const double*> right_;         // H(s + j, ., m - u_s) of the point being priced
    mutable std::vector<std::size_t> offsets_;         // of the points the points being priced read, a stack
    std::uint64_t least_ = 0;                          // the least memory in which the whole chain has a plan
    std::vector<std::size_t> offset_;                  // rows of start s: offset_[s] + l - 1
    std::vector<std::size_t> first_, count_;           // rows: their runs in runs_
    std::vector<std::size_t> h_first_, h_count_;       // rows: their runs of H in h_
    std::vector<run> runs_;                            // E's value and both options, every row
    std::vector<run> h_;                               // H(s, l), every row
    std::vector<run> e_, next_, taped_, h_next_;       // the row being filled: E so far, its next, P, its H
};

} // namespace remat::detail
