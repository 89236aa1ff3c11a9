// The table of remat::plan_taped_chain as runs of equal entries (chain_taped_table.hpp, taped_chain_runs): the
// recurrence of chain_taped_table.cpp taken run by run along the memory. Every row is a step function of the memory
// (non-increasing, each step a change of plan): at 24 steps in 4,096 units, tens of runs a row. A split's cost
// (F(s, j) + H(s+j, l-j, M - u_s)) + E(s, j, M) is priced once per run of the union of its two rows' runs and E's so
// far, in the same order of sums and with the same comparisons as the dense table, so the optimum and the options
// kept are the dense table's, to the bit. A part whose steps are those of a part further left shares its row (filled
// once); the first starts are not held as runs but priced at the memories asked (chain_taped_points.cpp).
#include "chain_taped_table.hpp"
#include "table_substrate.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <utility>

namespace remat::detail {
namespace {

constexpr double infinity = std::numeric_limits<double>::infinity();
constexpr std::uint64_t beyond = std::numeric_limits<std::uint64_t>::max();
using run = taped_chain_runs::run;

// Appends a run unless it continues the last one.
[[gnu::always_inline]] inline void push(std::vector<run>& out, std::uint64_t m, double value, std::uint16_t code)
{
    if (!out.empty() && out.back().value == value && out.back().code == code)
        return;
    out.push_back({m, value, code});
}

// Runs read along the memory, their memories shifted up by `shift` (a part held beside a snapshot or a tape).
// Where the next run starts is kept at hand: most reads stay in the run read last.
class cursor {
public:
    cursor(const run* first, const run* last, std::uint64_t shift)
        : at_(first), last_(last), shift_(shift), next_(start_of(first + 1))
    {
    }
    // The run covering m (>= shift).
    const run& at(std::uint64_t m)
    {
        while (next_ <= m)
            next_ = start_of(++at_ + 1);
        return *at_;
    }
    // Where the run read last ends.
    [[nodiscard]] std::uint64_t next() const { return next_; }

private:
    [[nodiscard]] std::uint64_t start_of(const run* r) const { return r != last_ ? r->from + shift_ : beyond; }

    const run* at_;
    const run* last_;
    std::uint64_t shift_;
    std::uint64_t next_;
};

cursor read(const std::vector<run>& runs, std::uint64_t shift = 0)
{
    return {runs.data(), runs.data() + runs.size(), shift};
}

// For every part (s, l) from start `from` on, the least start s' >= from of its kind (chain_taped_table.hpp,
// part_kinds): the recurrence reads nothing but the steps, so its row is that part's, entry for entry and option
// for option (the splits' options count from the start), and is filled once.
std::vector<std::size_t> least_alike(const std::vector<std::size_t>& kinds, const std::vector<std::size_t>& offset,
                                     std::size_t from)
{
    const std::size_t n = offset.size();
    std::vector<std::size_t> least(kinds.size());
    std::vector<std::size_t> first(n); // a kind of part of the length at hand: its least start, plus one
    for (std::size_t l = 1; l <= n; ++l) {
        std::fill(first.begin(), first.end(), 0);
        for (std::size_t s = from; s + l <= n; ++s) {
            std::size_t& seen = first[kinds[offset[s] + l - 1]];
            if (seen == 0)
                seen = s + 1;
            least[offset[s] + l - 1] = seen - 1;
        }
    }
    return least;
}

} // namespace

taped_chain_runs::taped_chain_runs(const taped_unit_chain& chain, std::uint64_t units)
    : taped_chain_optimum(chain), n_(chain.f.size()), units_(units)
{
    // A run's memory is 32 bits: plan_taped_chain's tables hold at most 2^23 entries, so as many memories.
    if (units_ >= std::numeric_limits<std::uint32_t>::max())
        throw std::length_error("taped_chain_runs: more memories than a run can name");
    std::size_t rows = 0;
    for (std::size_t s = 0; s < n_; ++s) {
        offset_.push_back(rows);
        rows += n_ - s;
    }
    first_.resize(rows);
    count_.resize(rows);
    h_first_.resize(rows);
    h_count_.resize(rows);
    const std::vector<std::size_t> kinds = part_kinds(chain, offset_);
    const points_estimate points = starts_by_points(kinds);
    by_points_ = points.starts;
    point_h_.reserve(points.entries);
    point_options_.reserve(points.entries);
    const std::vector<std::size_t> alike = least_alike(kinds, offset_, by_points_);
    // By end, then by start from the right, as the dense table: a part alike one further left finds its row
    // filled at an earlier end.
    for (std::size_t end = by_points_ + 1; end <= n_; ++end) {
        for (std::size_t s = end; s-- > by_points_;) {
            const std::size_t r = row(s, end - s);
            if (alike[r] != s) {
                const std::size_t same = row(alike[r], end - s);
                first_[r] = first_[same];
                count_[r] = count_[same];
                h_first_[r] = h_first_[same];
                h_count_[r] = h_count_[same];
            } else if (s + 1 == end) {
                fill_single(s);
            } else {
                fill(s, end - s);
            }
        }
    }
    least_ = least_units();
    table_work_meter() += work_;
}

taped_chain_runs::span taped_chain_runs::h_row(std::size_t s, std::size_t l) const
{
    const run* first = h_.data() + h_first_[row(s, l)];
    return {first, first + h_count_[row(s, l)]};
}

void taped_chain_runs::fill_single(std::size_t s)
{
    const std::uint64_t stored = std::max(2 * c_.u[s], c_.r[s]);
    first_[row(s, 1)] = runs_.size();
    runs_.push_back({0, infinity, 0});
    if (stored <= units_)
        runs_.push_back({stored, c_.b[s], 0});
    count_[row(s, 1)] = runs_.size() - first_[row(s, 1)];
    h_first_[row(s, 1)] = h_.size();
    h_.push_back({0, infinity, 0});
    if (c_.r[s] <= units_)
        h_.push_back({c_.r[s], c_.b[s], 0});
    h_count_[row(s, 1)] = h_.size() - h_first_[row(s, 1)];
    work_ += 2;
}

void taped_chain_runs::fill(std::size_t s, std::size_t l)
{
    // P(s, l, m) = (f_s + H(s+1, l-1, m - t_s)) + bt_s from max(r_s, t_s) on
    taped_.clear();
    push(taped_, 0, infinity, 0);
    const span after = h_row(s + 1, l - 1);
    cursor rest(after.first, after.last, c_.t[s]);
    for (std::uint64_t m = c_.taped_from[s]; m <= units_; m = rest.next())
        push(taped_, m, c_.f[s] + rest.at(m).value + c_.bt[s], 0);
    // E starts as the taped advance from 2 u_s on; a split takes an entry from it on a tie too (the plain
    // recurrence prices the splits first and the taped advance only where strictly cheaper).
    e_.clear();
    push(e_, 0, infinity, 0);
    cursor p = read(taped_);
    for (std::uint64_t m = 2 * c_.u[s]; m <= units_; m = p.next()) {
        const double v = p.at(m).value;
        push(e_, m, v, v != infinity ? e_taped : 0);
    }
    double forward = 0; // F(s, j), summed from s as the plain recurrence sums it
    std::uint64_t widest = 0;
    for (std::size_t j = 1; j < l; ++j) {
        forward += c_.f[s + j - 1];
        widest = std::max(widest, c_.p[s + j - 1]);
        add_split(s, l, j, forward, c_.u[s] + widest);
    }
    store(s, l);
}

// E so far against split j: (F(s, j) + H(s+j, l-j, m - u_s)) + E(s, j, m) from `fits` = u_s + max(p_s .. p_{s+j-1}).
// Both rows are non-increasing in the memory, and so is the split's cost: within a run of E so far it is least at
// the run's last memory. A run the split cannot improve there is kept whole, without reading the split's rows
// inside it (most runs are; at 24 steps in 4,096 units this halves the merging); only the runs it improves are
// merged run by run, and from the first memory it improves to the run's end it wins throughout.
void taped_chain_runs::add_split(std::size_t s, std::size_t l, std::size_t j, double forward, std::uint64_t fits)
{
    if (fits > units_)
        return;
    const span h = h_row(s + j, l - j);
    const run* left = runs_.data() + first_[row(s, j)];
    const run* left_end = left + count_[row(s, j)];
    const run* const e_begin = e_.data();
    const run* const e_end = e_begin + e_.size();
    const auto last_at = [](const run* first, const run* last, std::uint64_t m) {
        return std::prev(std::upper_bound(first, last, m, [](std::uint64_t x, const run& r) { return x < r.from; }));
    };
    // The split costs least at the most memory, and E so far is largest where the split starts to fit: where
    // the one is above the other, the split changes nothing.
    const double least = forward + last_at(h.first, h.last, units_ - c_.u[s])->value + (left_end - 1)->value;
    ++work_;
    const run* first = last_at(e_begin, e_end, fits);
    if (least > first->value)
        return;
    // Nor from where E so far falls below that least cost (E so far is non-increasing): those runs are copied.
    const run* below = std::partition_point(first, e_end, [&](const run& r) { return !(r.value < least); });
    cursor probe_right(h.first, h.last, c_.u[s]);
    cursor probe_left(left, left_end, 0);
    const auto end_of = [&](const run* r) { return r + 1 != e_end ? (r + 1)->from : units_ + 1; };
    // A split takes an entry on a tie with the taped advance (the plain recurrence prices it last).
    const auto takes = [](double v, const run* r) { return v < r->value || (v == r->value && r->code == e_taped); };
    const auto improves = [&](const run* r) {
        const std::uint64_t last = end_of(r) - 1;
        return takes(forward + probe_right.at(last).value + probe_left.at(last).value, r);
    };
    std::uint64_t work = 1;
    const run* r = first;
    for (; r != below && !improves(r); ++r)
        ++work;
    if (r == below) { // E so far stays as it is (many splits change nothing)
        work_ += work;
        return;
    }
    next_.assign(e_begin, r);
    cursor right(h.first, h.last, c_.u[s]);
    cursor lefts(left, left_end, 0);
    const auto option = static_cast<std::uint16_t>(j);
    bool copied = false; // the last run out is a copy of the one before r (so r cannot continue it)
    for (; r != below; ++r) {
        ++work;
        if (!improves(r)) {
            if (copied)
                next_.push_back(*r);
            else
                push(next_, r->from, r->value, r->code);
            copied = true;
            continue;
        }
        copied = false;
        const std::uint64_t from = std::max<std::uint64_t>(r->from, fits);
        const std::uint64_t to = end_of(r);
        if (r->from < from)
            push(next_, r->from, r->value, r->code);
        for (std::uint64_t m = from; m < to; m = std::min({right.next(), lefts.next(), to})) {
            const double v = forward + right.at(m).value + lefts.at(m).value;
            if (takes(v, r))
                push(next_, m, v, option);
            else
                push(next_, m, r->value, r->code);
            ++work;
        }
    }
    work_ += work;
    if (below != e_end) {
        push(next_, below->from, below->value, below->code);
        next_.insert(next_.end(), below + 1, e_end);
    }
    std::swap(e_, next_);
}

// The row's runs (E's value, both options) and H(s, l) for the end being filled.
void taped_chain_runs::store(std::size_t s, std::size_t l)
{
    next_.clear();
    h_next_.clear();
    cursor e = read(e_);
    cursor p = read(taped_);
    for (std::uint64_t m = 0; m <= units_; m = std::min(e.next(), p.next())) {
        const run& now = e.at(m);
        const double v = p.at(m).value;
        const bool tape = v <= now.value && v != infinity; // on a tie, no snapshot to store and free at once
        push(next_, m, now.value, static_cast<std::uint16_t>(now.code | (tape ? h_taped : 0)));
        push(h_next_, m, tape ? v : now.value, 0);
        ++work_;
    }
    first_[row(s, l)] = runs_.size();
    count_[row(s, l)] = next_.size();
    runs_.insert(runs_.end(), next_.begin(), next_.end());
    h_first_[row(s, l)] = h_.size();
    h_count_[row(s, l)] = h_next_.size();
    h_.insert(h_.end(), h_next_.begin(), h_next_.end());
}

double taped_chain_runs::whole(std::uint64_t m) const
{
    return h_at(0, n_, m);
}

std::uint64_t taped_chain_runs::least(std::uint64_t /*most*/) const
{
    return least_;
}

std::uint16_t taped_chain_runs::code(std::size_t s, std::size_t l, std::uint64_t m) const
{
    if (s < by_points_)
        return point_options_[at(s, m) + l - 1];
    const run* first = runs_.data() + first_[row(s, l)];
    const run* at =
        std::upper_bound(first, first + count_[row(s, l)], m, [](std::uint64_t x, const run& r) { return x < r.from; });
    return (at - 1)->code;
}

} // namespace remat::detail
