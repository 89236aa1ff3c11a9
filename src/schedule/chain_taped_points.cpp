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
#include <iterator>
#include <limits>

namespace remat::detail {
namespace {

constexpr double infinity = std::numeric_limits<double>::infinity();

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
std::size_t taped_chain_runs::starts_by_points(const std::vector<std::size_t>& kinds) const
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
    double by_points = 0; // the starts before s priced by points
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
    return best;
}

double taped_chain_runs::h_at(std::size_t s, std::size_t l, std::uint64_t m) const
{
    if (s < by_points_)
        return points_[s].h[at(s, m) + l - 1];
    const span h = h_row(s, l);
    return std::prev(std::upper_bound(h.first, h.last, m, [](std::uint64_t x, const run& r) { return x < r.from; }))
        ->value;
}

std::size_t taped_chain_runs::memory_record(std::uint64_t m) const
{
    const auto [found, added] = memories_.try_emplace(m, memories_.size());
    if (added)
        records_.resize(records_.size() + n_, unpriced);
    return found->second;
}

std::size_t taped_chain_runs::at(std::size_t s, std::uint64_t m) const
{
    return at(s, memory_record(m), m);
}

std::size_t taped_chain_runs::at(std::size_t s, std::size_t record, std::uint64_t m) const
{
    if (records_[record * n_ + s] == unpriced) {
        if (s < by_points_)
            price_point(s, m);
        else
            read_column(s, m);
        records_[record * n_ + s] = static_cast<std::uint32_t>(points_[s].h.size() / (n_ - s)); // its index, plus one
    }
    return (records_[record * n_ + s] - 1) * (n_ - s);
}

// A start held as runs, read at one memory for every length: a point that reads it as its right part or after its
// tape finds it once (the starts before it read it at the same memory often: blocks of equal sizes).
void taped_chain_runs::read_column(std::size_t s, std::uint64_t m) const
{
    std::vector<double>& h = points_[s].h;
    for (std::size_t l = 1; s + l <= n_; ++l)
        h.push_back(h_at(s, l, m));
}

void taped_chain_runs::price_point(std::size_t s, std::uint64_t m) const
{
    const std::size_t length = n_ - s;
    // The splits that fit (the advance's width only grows with j) and the parts they read, found first: pricing
    // those may add points, to later starts only, so what this one reads is found by its offsets, held on a stack.
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
    const double* after_tape = nullptr;
    if (taped_fits) {
        const std::size_t offset = at(s + 1, m - c_.t[s]);
        after_tape = points_[s + 1].h.data() + offset;
    }
    right_.resize(splits);
    for (std::size_t j = 1; j < splits; ++j)
        right_[j] = points_[s + j].h.data() + offsets_[base + j - 1];
    offsets_.resize(base);

    start_points& mine = points_[s];
    const std::size_t offset = mine.h.size();
    mine.h.resize(offset + length);
    mine.options.resize(offset + length, 0);
    double* const h = mine.h.data() + offset;
    std::uint16_t* const options = mine.options.data() + offset;
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
