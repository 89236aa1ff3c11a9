#include "chain_refetch_reference.hpp"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <map>
#include <tuple>

namespace remat::test {
namespace {

// The persistent recurrence of docs/heterogeneous.md at one byte per unit (E, H), memoised, and with
// `refetch` the extension: a right part may start at x_c without storing it for good. QE(c, l, M):
// x_c stored and current, reverse steps c+1..c+l-1 (not c); x_c may be freed before step c+1 runs, and is
// freed at the end. QH: the same from x_c current, not stored. E gains the split "advance j steps, reverse
// the right part but its first step by QH, then the left part one step longer" (the enclosing checkpoint
// x_s re-creates x_{s+j} for step s+j). With refetch off this must equal the persistent exhaustive search,
// which checks the memory rules; with it on, it must never beat the search over every schedule.
class refetch_model {
public:
    refetch_model(const chain_model& m, bool refetch) : m_(m), refetch_(refetch) {}

    double plan_cost(std::uint64_t budget) { return get(kind::h, 0, m_.size(), static_cast<long long>(budget)); }

private:
    enum class kind { e, h, qe, qh };
    static constexpr double inf = std::numeric_limits<double>::infinity();

    long long u(step_t k) const { return static_cast<long long>(m_.state_bytes(k)); }
    long long p(step_t k) const { return std::max(u(k), u(k + 1)); }
    long long r(step_t k) const
    {
        return p(k) + static_cast<long long>(m_.steps[static_cast<std::size_t>(k)].adjoint_bytes);
    }
    double f(step_t k) const { return m_.steps[static_cast<std::size_t>(k)].forward; }
    double b(step_t k) const { return m_.steps[static_cast<std::size_t>(k)].adjoint; }

    double get(kind k, step_t s, step_t l, long long mem)
    {
        if (mem < 0)
            return inf;
        const auto key = std::make_tuple(static_cast<int>(k), s, l, mem);
        if (const auto it = memo_.find(key); it != memo_.end())
            return it->second;
        double v = inf;
        switch (k) {
        case kind::h:
            v = l == 1 ? (mem >= r(s) ? b(s) : inf) : get(kind::e, s, l, mem);
            break;
        case kind::e:
            if (l == 1)
                v = mem >= std::max(2 * u(s), r(s)) ? b(s) : inf;
            else
                v = splits(s, l, mem, false);
            break;
        case kind::qe:
            if (mem >= 2 * u(s)) {
                if (mem >= p(s)) // free x_c, then run step c: the rest has all the memory
                    v = f(s) + get(kind::h, s + 1, l - 1, mem);
                v = std::min(v, splits(s, l, mem, true));
            }
            break;
        case kind::qh:
            if (mem >= p(s))
                v = f(s) + get(kind::h, s + 1, l - 1, mem);
            if (mem >= 2 * u(s))
                v = std::min(v, get(kind::qe, s, l, mem));
            break;
        }
        memo_[key] = v;
        return v;
    }

    // Keeping x_s: advance j, the right part with x_s's units taken, then the left part with all of them.
    double splits(step_t s, step_t l, long long mem, bool skip_first)
    {
        const kind left = skip_first ? kind::qe : kind::e;
        double v = inf;
        double forward = 0;
        long long widest = 0;
        for (step_t j = 1; j < l; ++j) {
            forward += f(s + j - 1);
            widest = std::max(widest, p(s + j - 1));
            if (mem < u(s) + widest)
                break;
            if (!skip_first || j >= 2)
                v = std::min(v, forward + get(kind::h, s + j, l - j, mem - u(s)) + get(left, s, j, mem));
            if ((refetch_ || skip_first) && l - j >= 2)
                v = std::min(v, forward + get(kind::qh, s + j, l - j, mem - u(s)) + get(left, s, j + 1, mem));
        }
        return v;
    }

    const chain_model& m_;
    bool refetch_;
    std::map<std::tuple<int, step_t, step_t, long long>, double> memo_;
};

} // namespace

double refetch_recurrence_cost(const chain_model& chain, std::uint64_t budget, bool refetch)
{
    return refetch_model(chain, refetch).plan_cost(budget);
}

} // namespace remat::test
