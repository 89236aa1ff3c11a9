// The first starts of remat::plan_taped_chain's runs form (chain_taped_table.hpp, taped_chain_runs), priced at the
// memories asked rather than held as runs. The whole chain is read at one memory (the plan's budget), and start s
// at m - u_x (a right part beside a snapshot of x_x, x < s) and m - t_{s-1} (after a taped advance) for the
// memories m its earlier starts are read at: few for the first starts (one, two, four...), where every entry of the
// start priced at each of them costs far less than its rows merged over thousands of memories. Each entry is priced
// as the plain recurrence prices it, in the same order of sums (the least split of the least price, the taped
// advance in E only where strictly cheaper, in H where at most as dear): the same values and options as the runs.
// A start's points are held flat, found through one record per memory asked (a start after them is read there off
// its runs once, for every length: starts before it read it at the same memories where blocks have equal sizes).
#include "chain_taped_table.hpp"

#include <algorithm>
#include <bit>
#include <iterator>
#include <limits>

namespace remat::detail {
namespace {

constexpr double infinity = std::numeric_limits<double>::infinity();

// A memory's first slot in a table of `size` slots, a power of two (Fibonacci hashing: the memories a plan asks for
// are often evenly spaced).
std::size_t memory_slot(std::uint64_t m, std::size_t size)
{
    return static_cast<std::size_t>((m * 0x9e3779b97f4a7c15U) >> (64 - std::countr_zero(size)));
}

} // namespace

// How many starts to price by points: the count that costs least, by a model of the three costs. Pricing start s at
// the memories it is read at costs about one look per split of each of its entries and memory; the first start held
// as runs is then read at those memories as columns, about `column` looks per entry of its rows and of the rows after
// it (a search in a row's runs); its rows and those after it, held as runs, cost about `merge` looks per split of
// each distinct row, and the rows of the starts after it that were alike its own are then distinct (a stack of
// identical blocks keeps one start's rows whatever the count, so there few starts are priced by points; mixed blocks
// keep all, so there more). The constants fitted to the counts measured fastest on the profiled transformer,
// heterogeneous and resnet stacks at 30% and 60% of their all-taped peak (2, 6 and 13 / 7 starts, loaded VM).
// The memories read: a superset, every split and taped advance the memory allows, whether or not the rest fits.
// From them, the entries the points may hold (those of the starts priced there, and a column of every start after
// them at the first one's memories), reserved at once: grown by doubling, the points were copied as often as written,
// and a plan that follows other work (its caches taken) pays for every line it touches.
taped_chain_runs::points_estimate taped_chain_runs::starts_by_points(const std::vector<std::size_t>& kinds) const
{
    constexpr double merge = 100;
    constexpr double column = 2;
    constexpr std::size_t most_memories = 1024; // a bound on this estimate's own work
    // distinct[s]: splits of the distinct rows of the starts from s on, as the runs fill them
    std::vector<double> distinct(n_ + 1, 0);
    std::vector<char> seen((n_ + 1) * n_, 0); // by length, then kind: met from s on
    for (std::size_t s = n_; s-- > 0;) {
        distinct[s] = distinct[s + 1];
        for (std::size_t l = 1; s + l <= n_; ++l) {
            char& met = seen[l * n_ + kinds[offset_[s] + l - 1]];
            if (met == 0)
                distinct[s] += static_cast<double>(l - 1);
            met = 1;
        }
    }
    // read: the memories start s is read at; beside: those after a snapshot of an earlier start (m - u_x, x < s)
    std::vector<std::uint64_t> read{units_}, beside, next;
    std::vector<std::size_t> read_at{1}; // by start: how many memories it is read at
    double by_points = 0;                // the starts before s priced by points
    std::size_t best = 0;
    double least = merge * distinct[0];
    std::size_t s = 0;
    for (; s < n_ && by_points < least; ++s) {
        const double length = static_cast<double>(n_ - s);
        if (s > 0) {
            next.clear();
            for (const std::uint64_t m : read)
                if (m >= c_.u[s - 1])
                    next.push_back(m - c_.u[s - 1]);
            const std::size_t old = beside.size();
            beside.insert(beside.end(), next.begin(), next.end());
            std::inplace_merge(beside.begin(), beside.begin() + static_cast<std::ptrdiff_t>(old), beside.end());
            beside.erase(std::unique(beside.begin(), beside.end()), beside.end());
            next.clear();
            for (const std::uint64_t m : read)
                if (m >= c_.taped_from[s - 1])
                    next.push_back(m - c_.t[s - 1]);
            read.clear();
            std::set_union(beside.begin(), beside.end(), next.begin(), next.end(), std::back_inserter(read));
            read.erase(std::unique(read.begin(), read.end()), read.end());
            if (read.size() > most_memories)
                break;
            read_at.push_back(read.size());
            // s the first start held as runs
            const double cost =
                by_points + column * static_cast<double>(read.size()) * length * (length + 1) / 2 + merge * distinct[s];
            if (cost < least) {
                least = cost;
                best = s;
            }
        }
        by_points += static_cast<double>(read.size()) * length * (length - 1) / 2; // more starts only add to it
    }
    if (s == n_ && by_points < least) // every start priced by points
        best = n_;
    std::size_t entries = 0;
    for (std::size_t x = 0; x < read_at.size() && x <= best; ++x)
        entries += read_at[x] * (x < best ? n_ - x : (n_ - x) * (n_ - x + 1) / 2);
    return {best, std::min<std::size_t>(entries, most_memories * n_)};
}

double taped_chain_runs::h_at(std::size_t s, std::size_t l, std::uint64_t m) const
{
    if (s < by_points_)
        return point_h_[at(s, m) + l - 1];
    const span h = h_row(s, l);
    return std::prev(std::upper_bound(h.first, h.last, m, [](std::uint64_t x, const run& r) { return x < r.from; }))
        ->value;
}

// The record of memory m, added where new: a table of open addressing, kept at most half full (a plan asks for a few
// memories to a few thousand, each many times).
std::size_t taped_chain_runs::memory_record(std::uint64_t m) const
{
    const std::size_t memories = records_.size() / n_; // one record each
    if (2 * (memories + 1) > memory_keys_.size()) {
        std::vector<std::uint64_t> keys(std::max<std::size_t>(64, 2 * memory_keys_.size()), no_memory);
        std::vector<std::size_t> records(keys.size());
        for (std::size_t i = 0; i < memory_keys_.size(); ++i)
            if (memory_keys_[i] != no_memory) {
                std::size_t slot = memory_slot(memory_keys_[i], keys.size());
                while (keys[slot] != no_memory)
                    slot = (slot + 1) & (keys.size() - 1);
                keys[slot] = memory_keys_[i];
                records[slot] = memory_records_[i];
            }
        memory_keys_.swap(keys);
        memory_records_.swap(records);
    }
    std::size_t slot = memory_slot(m, memory_keys_.size());
    for (; memory_keys_[slot] != no_memory; slot = (slot + 1) & (memory_keys_.size() - 1))
        if (memory_keys_[slot] == m)
            return memory_records_[slot];
    memory_keys_[slot] = m;
    memory_records_[slot] = memories;
    records_.resize(records_.size() + n_, unpriced);
    return memory_records_[slot];
}

std::size_t taped_chain_runs::at(std::size_t s, std::uint64_t m) const
{
    return at(s, memory_record(m), m);
}

std::size_t taped_chain_runs::at(std::size_t s, std::size_t record, std::uint64_t m) const
{
    if (records_[record * n_ + s] == unpriced) {
        const std::size_t offset = s < by_points_ ? price_point(s, m) : read_column(s, m);
        records_[record * n_ + s] = offset + 1;
    }
    return records_[record * n_ + s] - 1;
}

// A start held as runs, read at one memory for every length: a point that reads it as its right part or after its
// tape finds it once (the starts before it read it at the same memory often: blocks of equal sizes).
std::size_t taped_chain_runs::read_column(std::size_t s, std::uint64_t m) const
{
    const std::size_t offset = point_h_.size();
    for (std::size_t l = 1; s + l <= n_; ++l)
        point_h_.push_back(h_at(s, l, m));
    point_options_.resize(point_h_.size(), 0);
    return offset;
}

std::size_t taped_chain_runs::price_point(std::size_t s, std::uint64_t m) const
{
    const std::size_t length = n_ - s;
    // The splits that fit (the advance's width only grows with j) and the parts they read, found first: pricing
    // those may add points, so what this one reads is found by its offsets, held on a stack across that recursion.
    std::size_t splits = 1;
    for (std::uint64_t widest = 0; splits < length; ++splits) {
        widest = std::max(widest, c_.p[s + splits - 1]);
        if (c_.u[s] + widest > m)
            break;
    }
    const std::size_t base = offsets_.size();
    if (splits > 1) {
        const std::size_t beside = memory_record(m - c_.u[s]); // a snapshot of x_s held
        for (std::size_t j = 1; j < splits; ++j) {
            const std::size_t offset = at(s + j, beside, m - c_.u[s]);
            offsets_.push_back(offset);
        }
    }
    const bool taped_fits = length > 1 && m >= c_.taped_from[s];
    const std::size_t after_tape_at = taped_fits ? at(s + 1, m - c_.t[s]) : 0;
    // This point's entries go after every point it reads; the storage may move as it grows, so the places of what it
    // reads are taken after.
    const std::size_t offset = point_h_.size();
    point_h_.resize(offset + length);
    point_options_.resize(offset + length, 0);
    double* const h = point_h_.data() + offset;
    std::uint16_t* const options = point_options_.data() + offset;
    const double* const after_tape = point_h_.data() + after_tape_at;
    right_.resize(splits);
    for (std::size_t j = 1; j < splits; ++j)
        right_[j] = point_h_.data() + offsets_[base + j - 1];
    offsets_.resize(base);
    std::vector<double>& e = e_scratch_;
    e.resize(length);
    e[0] = m >= std::max(2 * c_.u[s], c_.r[s]) ? c_.b[s] : infinity;
    h[0] = m >= c_.r[s] ? c_.b[s] : infinity;
    for (std::size_t l = 2; l <= length; ++l) {
        const double taped = taped_fits ? c_.f[s] + after_tape[l - 2] + c_.bt[s] : infinity;
        double best = infinity;
        std::uint16_t option = 0;
        double forward = 0; // F(s, j), summed from s as the plain recurrence sums it
        for (std::size_t j = 1; j < std::min(l, splits); ++j) {
            forward += c_.f[s + j - 1];
            const double v = forward + right_[j][l - j - 1] + e[j - 1];
            if (v < best) {
                best = v;
                option = static_cast<std::uint16_t>(j);
            }
        }
        work_ += l;
        if (m >= 2 * c_.u[s] && taped < best) {
            best = taped;
            option = e_taped;
        }
        const bool tape = taped <= best && taped != infinity; // on a tie, no snapshot to store and free at once
        e[l - 1] = best;
        h[l - 1] = tape ? taped : best;
        options[l - 1] = static_cast<std::uint16_t>(option | (tape ? h_taped : 0));
    }
    return offset;
}

// The least memory at which the whole chain has a plan, from the least at which each H row is finite: the runs'
// first finite run; for the starts priced by points, the recurrence's thresholds (each option is finite from a
// memory on, as every row is non-increasing).
std::uint64_t taped_chain_runs::least_units() const
{
    const std::uint64_t none = units_ + 1;
    std::vector<std::uint64_t> least_h(offset_.back() + 1, none);
    for (std::size_t s = by_points_; s < n_; ++s)
        for (std::size_t l = 1; s + l <= n_; ++l) {
            const span h = h_row(s, l);
            const run* finite = std::find_if(h.first, h.last, [](const run& r) { return r.value != infinity; });
            least_h[row(s, l)] = finite != h.last ? finite->from : none;
        }
    const auto beside = [&](std::uint64_t held, std::uint64_t least) { return least >= none ? none : held + least; };
    for (std::size_t s = by_points_; s-- > 0;) {
        std::vector<std::uint64_t> least_e(n_ - s, none);
        least_e[0] = std::min(std::max(2 * c_.u[s], c_.r[s]), none);
        least_h[row(s, 1)] = std::min(c_.r[s], none);
        for (std::size_t l = 2; s + l <= n_; ++l) {
            const std::uint64_t taped = std::max(c_.taped_from[s], beside(c_.t[s], least_h[row(s + 1, l - 1)]));
            std::uint64_t e = std::max(2 * c_.u[s], taped);
            std::uint64_t widest = 0;
            for (std::size_t j = 1; j < l; ++j) {
                widest = std::max(widest, c_.p[s + j - 1]);
                e = std::min(e,
                             std::max({c_.u[s] + widest, beside(c_.u[s], least_h[row(s + j, l - j)]), least_e[j - 1]}));
            }
            least_e[l - 1] = std::min(e, none);
            least_h[row(s, l)] = std::min({e, taped, none});
        }
    }
    return least_h[row(0, n_)];
}

} // namespace remat::detail
