// The table of remat::plan_taped_chain: docs/heterogeneous.md's recurrence ("Taped advances"), in units of g bytes,
// with u_k, p_k, r_k, t_k and bt_k as in chain_taped_table.hpp:
//
//   H(s, 1, M) = b_s                                   if M >= r_s   (x_s current, not stored)
//   H(s, l, M) = min(E(s, l, M), P(s, l, M))           for l >= 2
//   P(s, l, M) = f_s + H(s+1, l-1, M - t_s) + bt_s     if M >= r_s   (tape step s)
//   E(s, 1, M) = b_s                                   if M >= max(2 u_s, r_s)   (x_s current and stored)
//   E(s, l, M) = min(min over 1 <= j < l, M >= u_s + max(p_s .. p_{s+j-1}) of
//                        F(s, j) + H(s+j, l-j, M - u_s) + E(s, j, M),
//                    P(s, l, M) if M >= 2 u_s)         (free x_s's snapshot: the tape holds x_s)
//
// with F(s, j) = f_s + ... + f_{s+j-1}. Priced plainly, every entry takes a minimum over its l - 1 splits: about
// T^3 U / 6 split points, 2.3 x 10^9 at T = 1000. Three exact shortcuts cut that down:
//
// (1) A row is constant from a memory on: each option is, once the memories of the rows it reads are past their own
//     constant points (and its conditions hold); past the largest of those the row is copied, not priced.
// (2) The excess of a part over its no-recompute cost LB(s, l) = (f + bt)_s + ... + (f + bt)_{s+l-2} + b_{s+l-1} never
//     falls as the part grows at its end: E(s, l+1, M) - LB(s, l+1) >= E(s, l, M) - LB(s, l), and so for H (by
//     induction on l, each option of the longer part against the same option of the shorter one; the new split
//     j = l costs F(s, l) + b_{s+l} + E(s, l, M), and F(s, l) >= f_{s+l-1} >= max(0, f - b)_{s+l-1}; infeasible
//     stays infeasible). So over splits j in [a, c] the cost is at least
//         E(s, a, M) - LB(s, a) + min over x in [s+a, s+c] of (Fp(x) + Q(x-1) + b_{x-1} + H(x, end - x, M - u_s))
//         - Fp(s) - Q(s),
//     Fp and Q the prefix sums of f and of f + bt, end = s + l: the minimum is over parts that end where this one
//     does, a range minimum of a sparse table kept for the end being filled (the table is filled by end, then by
//     start from the right). Rows over 25 steps search their splits by branch and bound over halving ranges,
//     seeded with the previous memory's split; a range is dropped when its bound cannot beat the best so far (the
//     taped option first; nor tie it from a larger split: ties go to the least split, as the plain scan takes
//     them), with a slack far above the bound's rounding (1e-9 of its size: the bound sums the values in another
//     order). E(s, a, M) infinite means every longer left part is too: the range is dropped. Ranges under 24
//     splits are priced split by split (measured: fewer bounds pay).
//     Where the costs are flat across the splits (1,000 steps in 14 units: the best split costs within 3% of the
//     worst), bounds drop little and the search still prices ~100 split points an entry.
// (3) Short rows (l <= 25) keep the plain scan over every split.
//
// Each split point priced, exactly as the plain recurrence prices it ((F + H) + E, F summed from s), so the optimum
// and the option kept are the plain recurrence's, to the bit.
#include "chain_taped_table.hpp"
#include "table_substrate.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <limits>

namespace remat::detail {
namespace {

constexpr double infinity = std::numeric_limits<double>::infinity();
constexpr std::size_t scan_limit = 24; // rows up to this long price every split
constexpr std::size_t no_split = std::numeric_limits<std::size_t>::max();
constexpr std::size_t leaf = 24; // ranges narrower than this are priced split by split (measured: 3-48)

std::uint64_t units_of(std::uint64_t bytes, std::uint64_t g)
{
    return bytes / g + (bytes % g != 0 ? 1 : 0);
}

// An array of the planners' table memory (huge pages where given), left unset: the table writes every entry.
template <class T>
class raw_array {
public:
    explicit raw_array(std::size_t n) : n_(n), p_(table_allocator<T>().allocate(n)) {}
    ~raw_array() { table_allocator<T>().deallocate(p_, n_); }
    raw_array(const raw_array&) = delete;
    raw_array& operator=(const raw_array&) = delete;
    T* data() { return p_; }
    const T* data() const { return p_; }

private:
    std::size_t n_;
    T* p_;
};

} // namespace

taped_unit_chain::taped_unit_chain(const chain_model& c, std::uint64_t g)
{
    const auto n = static_cast<std::size_t>(c.size());
    u.resize(n + 1);
    for (std::size_t k = 0; k <= n; ++k)
        u[k] = units_of(c.state_bytes(static_cast<step_t>(k)), g);
    for (std::size_t k = 0; k < n; ++k) {
        const std::uint64_t a = units_of(c.steps[k].adjoint_bytes, g);
        p.push_back(std::max(u[k], u[k + 1]));
        r.push_back(p[k] + a);
        // a tape of its own size where given (rounded up once), else its input and a_k, each rounded up
        t.push_back(c.steps[k].tape_bytes != 0 ? units_of(c.steps[k].tape_bytes, g) : u[k] + a);
        taped_from.push_back(std::max(r[k], t[k]));
        f.push_back(c.steps[k].forward);
        b.push_back(c.steps[k].adjoint);
        bt.push_back(std::max(0.0, c.steps[k].adjoint - c.steps[k].forward));
    }
}

std::uint64_t taped_unit_chain::all_taped() const
{
    std::uint64_t held = 0;
    std::uint64_t peak = 0;
    for (std::size_t k = 0; k < f.size(); ++k) {
        peak = std::max(peak, held + r[k]);
        held += t[k];
    }
    return peak;
}

struct taped_chain_table::storage {
    raw_array<double> e;               // rows x width: E(s, l, m)
    raw_array<std::uint16_t> code;     // rows x width: the options of E and H
    std::vector<double> forward;       // rows: F(s, j), summed from s as the plain scan sums it
    std::vector<std::uint64_t> widest; // rows: max(p_s .. p_{s+j-1})
    std::vector<std::uint64_t> hi;     // rows: the memory from which the row is constant
    std::vector<double> prefix;        // Fp(x) = f_0 + ... + f_{x-1}
    std::vector<double>
        least;             // Q(x) = (f_0 + bt_0) + ... + (f_{x-1} + bt_{x-1}): LB(s, l) = Q(s+l-1) - Q(s) + b_{s+l-1}
    std::vector<double> h; // starts x width: H(x, end - x, m) for the end being filled
    std::vector<std::uint64_t> peak; // starts: the all-taped peak of x..end-1
    std::vector<double> g; // levels x width x starts: minima of Fp(x) + Q(x-1) + b_{x-1} + H(x, end - x, m), 2^k starts
    std::vector<double> taped; // width: P(s, l, m) of the row being filled
    storage(std::size_t rows, std::size_t n, std::size_t width)
        : e(rows * width), code(rows * width), forward(rows), widest(rows), hi(rows), prefix(n + 1), least(n + 1),
          h(n * width), peak(n), taped(width)
    {
    }
};

taped_chain_table::taped_chain_table(const taped_unit_chain& chain, std::uint64_t units)
    : taped_chain_optimum(chain), n_(chain.f.size()), units_(units), width_(units + 1)
{
    std::size_t rows = 0;
    for (std::size_t s = 0; s < n_; ++s) {
        offset_.push_back(rows);
        rows += n_ - s;
    }
    t_ = std::make_unique<storage>(rows, n_, width_);
    for (std::size_t s = 0; s < n_; ++s) {
        double forward = 0;
        std::uint64_t widest = 0;
        for (std::size_t j = 1; s + j <= n_; ++j) {
            forward += c_.f[s + j - 1];
            widest = std::max(widest, c_.p[s + j - 1]);
            t_->forward[row(s, j)] = forward;
            t_->widest[row(s, j)] = widest;
        }
        t_->prefix[s + 1] = t_->prefix[s] + c_.f[s];
        t_->least[s + 1] = t_->least[s] + (c_.f[s] + c_.bt[s]);
    }
    slack_ = t_->prefix[n_] + t_->least[n_];
    if (n_ > scan_limit + 1) {
        t_->g.resize(static_cast<std::size_t>(std::bit_width(n_)) * n_ * width_);
    }
    // By end, then by start from the right: a row reads rows of its own end (H) and rows that end before (E).
    for (std::size_t end = 1; end <= n_; ++end) {
        fill_single(end - 1);
        if (end > scan_limit + 1)
            add_to_range_minima(end - 1, end);
        for (std::size_t s = end - 1; s-- > 0;) {
            fill(s, end - s);
            if (end > scan_limit + 1 && s > 0)
                add_to_range_minima(s, end);
        }
    }
    table_work_meter() += work_;
}

taped_chain_table::~taped_chain_table() = default;

double taped_chain_table::whole(std::uint64_t m) const
{
    return t_->h[m];
}

void taped_chain_table::fill_single(std::size_t s)
{
    const std::size_t at = row(s, 1) * width_;
    const std::uint64_t stored = std::max(2 * c_.u[s], c_.r[s]);
    double* h = &t_->h[s * width_];
    for (std::uint64_t m = 0; m <= units_; ++m) {
        t_->e.data()[at + m] = m >= stored ? c_.b[s] : infinity;
        t_->code.data()[at + m] = 0;
        h[m] = m >= c_.r[s] ? c_.b[s] : infinity;
    }
    t_->hi[row(s, 1)] = std::min(units_, stored);
    t_->peak[s] = c_.r[s];
    work_ += width_;
}

// (1): every option of row (s, l) is constant past this memory.
std::uint64_t taped_chain_table::constant_from(std::size_t s, std::size_t l) const
{
    if (t_->peak[s] >= units_)
        return units_; // a part's plain autograd does not fit: its row changes up to the last unit, likely
    std::uint64_t hi = std::max({c_.r[s], 2 * c_.u[s], c_.t[s] + t_->hi[row(s + 1, l - 1)]});
    for (std::size_t j = 1; j < l && hi < units_; ++j)
        hi = std::max({hi, c_.u[s] + t_->widest[row(s, j)], t_->hi[row(s, j)], c_.u[s] + t_->hi[row(s + j, l - j)]});
    return std::min(hi, units_);
}

void taped_chain_table::fill(std::size_t s, std::size_t l)
{
    t_->peak[s] = std::max(c_.r[s], c_.t[s] + t_->peak[s + 1]);
    const std::uint64_t hi = constant_from(s, l);
    const std::size_t at = row(s, l) * width_;
    double* e = t_->e.data() + at;
    std::uint16_t* code = t_->code.data() + at;
    double* h = &t_->h[s * width_];
    const double* rest = &t_->h[(s + 1) * width_];
    double* taped = t_->taped.data();
    for (std::uint64_t m = 0; m <= hi; ++m)
        taped[m] = m >= c_.taped_from[s] ? c_.f[s] + rest[m - c_.t[s]] + c_.bt[s] : infinity;
    if (l - 1 <= scan_limit) {
        std::fill(e, e + hi + 1, infinity);
        std::fill(code, code + hi + 1, std::uint16_t{0});
        splits_by_scan(s, l, hi, e, code);
        for (std::uint64_t m = 2 * c_.u[s]; m <= hi; ++m)
            if (taped[m] < e[m]) {
                e[m] = taped[m];
                code[m] = e_taped;
            }
    } else {
        splits_by_bounds(s, l, hi, taped, e, code);
    }
    for (std::uint64_t m = 0; m <= hi; ++m) {
        h[m] = e[m];
        if (taped[m] <= h[m] && taped[m] != infinity) { // on a tie, no snapshot to store and free at once
            h[m] = taped[m];
            code[m] |= h_taped;
        }
    }
    std::fill(e + hi + 1, e + width_, e[hi]);
    std::fill(code + hi + 1, code + width_, code[hi]);
    std::fill(h + hi + 1, h + width_, h[hi]);
    t_->hi[row(s, l)] = hi;
    work_ += width_ - hi;
}

void taped_chain_table::splits_by_scan(std::size_t s, std::size_t l, std::uint64_t hi, double* e, std::uint16_t* code)
{
    const std::uint64_t us = c_.u[s];
    for (std::size_t j = 1; j < l; ++j) {
        const double forward = t_->forward[row(s, j)];
        const double* right = &t_->h[(s + j) * width_];
        const double* left = t_->e.data() + row(s, j) * width_;
        const std::uint64_t from = us + t_->widest[row(s, j)];
        for (std::uint64_t m = from; m <= hi; ++m) {
            const double v = forward + right[m - us] + left[m];
            if (v < e[m]) {
                e[m] = v;
                code[m] = static_cast<std::uint16_t>(j);
            }
        }
        work_ += hi >= from ? hi - from + 1 : 0;
    }
}

// (2): per memory, the least split by branch and bound over ranges of splits.
void taped_chain_table::splits_by_bounds(std::size_t s, std::size_t l, std::uint64_t hi, const double* taped, double* e,
                                         std::uint16_t* code)
{
    const std::uint64_t us = c_.u[s];
    const double base = t_->prefix[s] + t_->least[s];
    std::size_t feasible = 0; // the most splits whose advance fits m (max p grows with j)
    std::size_t guess = 0;
    struct range {
        std::size_t from, to;
    };
    std::array<range, 2 * 64> stack{};
    for (std::uint64_t m = 0; m <= hi; ++m) {
        while (feasible + 1 < l && us + t_->widest[row(s, feasible + 1)] <= m)
            ++feasible;
        double best = m >= 2 * us ? taped[m] : infinity;
        std::size_t best_j = no_split;
        const auto price = [&](std::size_t j) {
            const double v =
                t_->forward[row(s, j)] + t_->h[(s + j) * width_ + m - us] + t_->e.data()[row(s, j) * width_ + m];
            if (v < best || (v == best && j < best_j && v != infinity)) {
                best = v;
                best_j = j;
            }
        };
        if (feasible >= 1) {
            if (guess >= 1 && guess <= feasible) {
                price(guess);
                ++work_;
            }
            std::size_t top = 0;
            stack[top++] = {1, feasible};
            while (top > 0) {
                const range r = stack[--top];
                ++work_;
                const double left = t_->e.data()[row(s, r.from) * width_ + m];
                if (left == infinity)
                    continue; // and so is every longer left part
                const double least = least_g(s + r.from, s + r.to, m - us);
                if (least == infinity)
                    continue; // every right part of the range is infeasible
                // E(s, j) - LB(s, j) >= E(s, a) - LB(s, a): the bound (2) of the head comment
                const double excess = left - (t_->least[s + r.from - 1] - t_->least[s] + c_.b[s + r.from - 1]);
                const double bound = excess + (least - base);
                const double tolerance = 1e-9 * (bound + slack_);
                if (!(bound - tolerance <= best) || (bound - tolerance >= best && r.from > best_j))
                    continue;
                if (r.to - r.from < leaf) {
                    for (std::size_t j = r.from; j <= r.to; ++j)
                        price(j);
                    work_ += r.to - r.from + 1;
                    continue;
                }
                const std::size_t mid = r.from + (r.to - r.from) / 2;
                if (best_j <= mid) { // the half nearer the best so far first
                    stack[top++] = {mid + 1, r.to};
                    stack[top++] = {r.from, mid};
                } else {
                    stack[top++] = {r.from, mid};
                    stack[top++] = {mid + 1, r.to};
                }
            }
        }
        e[m] = best;
        code[m] = best_j != no_split ? static_cast<std::uint16_t>(best_j) : best != infinity ? e_taped : 0;
        if (best_j != no_split)
            guess = best_j;
    }
}

// Fp(s) + Q(s-1) + b_{s-1} + H(s, end - s, m) into the range minima of the end being filled (entries of later starts
// are this end's).
void taped_chain_table::add_to_range_minima(std::size_t s, std::size_t end)
{
    // Laid out by level, then memory, then start: a search at one memory reads along starts.
    const std::size_t level = n_ * width_;
    const double* h = &t_->h[s * width_];
    const double over = t_->prefix[s] + t_->least[s - 1] + c_.b[s - 1];
    double* g = t_->g.data();
    for (std::size_t m = 0; m < width_; ++m)
        g[m * n_ + s] = over + h[m];
    for (std::size_t k = 1; s + (std::size_t{1} << k) <= end; ++k) {
        double* to = g + k * level + s;
        const double* a = g + (k - 1) * level + s;
        const std::size_t half = std::size_t{1} << (k - 1);
        for (std::size_t m = 0; m < width_; ++m)
            to[m * n_] = std::min(a[m * n_], a[m * n_ + half]);
    }
    work_ += width_;
}

double taped_chain_table::least_g(std::size_t from, std::size_t to, std::uint64_t m) const
{
    const auto k = static_cast<std::size_t>(std::bit_width(to - from + 1) - 1);
    const double* g = t_->g.data() + k * n_ * width_ + m * n_;
    return std::min(g[from], g[to + 1 - (std::size_t{1} << k)]);
}

std::uint16_t taped_chain_table::code(std::size_t s, std::size_t l, std::uint64_t m) const
{
    return t_->code.data()[row(s, l) * width_ + m];
}

} // namespace remat::detail
