// The first starts of remat::plan_taped_chain's runs form (chain_taped_table.hpp, taped_chain_runs), priced at the
// memories asked rather than held as runs. The whole chain is read at one memory (the plan's budget), and start s
// at m - u_x (a right part beside a snapshot of x_x, x < s) and m - t_{s-1} (after a taped advance) for the
// memories m its earlier starts are read at: few for the first starts (one, two, four...), where every entry of the
// start priced at each of them costs far less than its rows merged over thousands of memories. Each entry is priced
// as the plain recurrence prices it, in the same order of sums (the least split of the least price, the taped
// advance in E only where strictly cheaper, in H where at most as dear): the same values and options as the runs.
#include "chain_taped_table.hpp"

#include <algorithm>
#include <iterator>
#include <limits>

namespace remat::detail {
namespace {

constexpr double infinity = std::numeric_limits<double>::infinity();

} // namespace

// How many starts to price by points: the count that costs least, by a model of the two. Pricing start s at the
// memories it is read at costs about one look per split of each of its entries and memory; its rows held as runs cost
// about `merge` looks per split of each distinct row (measured: 14-40 on the profiled 24-block chains), and the rows
// of the starts after it that were alike its own are then distinct (a stack of identical blocks keeps one start's
// rows whatever the count, so there few starts are priced by points; mixed blocks keep all, so there more).
// The memories read: a superset, every split and taped advance the memory allows, whether or not the rest fits.
std::size_t taped_chain_runs::starts_by_points(const std::vector<std::size_t>& kinds) const
{
    constexpr double merge = 30;
    constexpr std::size_t most_memories = 64;
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
    double by_points = 0;
    std::size_t best = 0;
    double least = merge * distinct[0];
    for (std::size_t s = 0; s < n_ && by_points < least; ++s) {
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
        }
        const double length = static_cast<double>(n_ - s);
        by_points += static_cast<double>(read.size()) * length * (length - 1) / 2; // more starts only add to it
        if (by_points + merge * distinct[s + 1] < least) {
            least = by_points + merge * distinct[s + 1];
            best = s + 1;
        }
    }
    return best;
}

double taped_chain_runs::h_at(std::size_t s, std::size_t l, std::uint64_t m) const
{
    if (s < by_points_)
        return at(s, m).h[l - 1];
    const span h = h_row(s, l);
    return std::prev(std::upper_bound(h.first, h.last, m, [](std::uint64_t x, const run& r) { return x < r.from; }))
        ->value;
}

const taped_chain_runs::point& taped_chain_runs::at(std::size_t s, std::uint64_t m) const
{
    std::map<std::uint64_t, point>& priced = points_[s];
    if (const auto found = priced.find(m); found != priced.end())
        return found->second;
    const std::size_t length = n_ - s;
    point p{std::vector<double>(length), std::vector<double>(length), std::vector<std::uint16_t>(length, 0)};
    p.e[0] = m >= std::max(2 * c_.u[s], c_.r[s]) ? c_.b[s] : infinity;
    p.h[0] = m >= c_.r[s] ? c_.b[s] : infinity;
    // The right parts beside a snapshot of x_s, at m - u_s: a start priced the same way is found once, not per entry.
    std::vector<const point*> right(length, nullptr);
    if (m >= c_.u[s])
        for (std::size_t j = 1; j < length && s + j < by_points_; ++j)
            right[j] = &at(s + j, m - c_.u[s]);
    const point* after_tape = s + 1 < by_points_ && m >= c_.taped_from[s] ? &at(s + 1, m - c_.t[s]) : nullptr;
    for (std::size_t l = 2; l <= length; ++l) {
        double taped = infinity;
        if (m >= c_.taped_from[s])
            taped =
                c_.f[s] + (after_tape != nullptr ? after_tape->h[l - 2] : h_at(s + 1, l - 1, m - c_.t[s])) + c_.bt[s];
        double best = infinity;
        std::uint16_t option = 0;
        double forward = 0; // F(s, j), summed from s as the plain recurrence sums it
        std::uint64_t widest = 0;
        for (std::size_t j = 1; j < l; ++j) {
            forward += c_.f[s + j - 1];
            widest = std::max(widest, c_.p[s + j - 1]);
            if (c_.u[s] + widest > m)
                break; // the advance's width only grows with j
            const double rest = right[j] != nullptr ? right[j]->h[l - j - 1] : h_at(s + j, l - j, m - c_.u[s]);
            const double v = forward + rest + p.e[j - 1];
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
        p.e[l - 1] = best;
        p.h[l - 1] = tape ? taped : best;
        p.options[l - 1] = static_cast<std::uint16_t>(option | (tape ? h_taped : 0));
    }
    return priced.emplace(m, std::move(p)).first->second;
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
