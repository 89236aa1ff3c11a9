// The extended recurrence of chain_refetch.hpp. With u_k, p_k = max(u_k, u_{k+1}), r_k = p_k + units of a_k
// and F(a, b) as in chain_plan.hpp:
//   E(s, l, M)  (x_s current and held, M units with its snapshot): as in chain_plan.hpp, plus for l - j >= 2
//               F(s, s+j) + QH(s+j, l-j, M - u_s) + E(s, j+1, M)
//   QE(c, l, M) (x_c current and held; reverse steps c+1..c+l-1 only, free x_c by the end), l >= 2:
//               M >= 2 u_c and either f_c + H(c+1, l-1, M) (free x_c, run step c: M >= p_c)
//               or a split of E's kinds whose left part is QE (the H kind only for j >= 2)
//   QH(c, l, M) (x_c current, not held): f_c + H(c+1, l-1, M) (M >= p_c), or store it (M >= 2 u_c): QE.
// The new split advances j steps from x_s, reverses the right part but its first step (its start x_{s+j} is
// dropped once it is no longer needed), then reverses the left part one step longer: x_s re-creates x_{s+j}
// for step s+j. Every snapshot still nests (the one freed early is the newest), so slot = depth.
// bench/chain_gap checks the same recurrence against the exhaustive search over every schedule.
#include "chain_refetch.hpp"

#include <algorithm>
#include <cstddef>
#include <limits>

namespace remat::detail {
namespace {

constexpr double infinite = std::numeric_limits<double>::infinity();

class refetch_tables {
public:
    refetch_tables(const chain_model& m, std::uint64_t granularity, std::uint64_t units)
        : m_(m), t_(m.size()), row_(units + 1)
    {
        const auto units_of = [&](std::uint64_t bytes) { return (bytes + granularity - 1) / granularity; };
        for (step_t k = 0; k <= t_; ++k)
            u_.push_back(units_of(m.state_bytes(k)));
        for (step_t k = 0; k < t_; ++k) {
            const auto ki = static_cast<std::size_t>(k);
            p_.push_back(std::max(u_[ki], u_[ki + 1]));
            r_.push_back(p_[ki] + units_of(m.steps[ki].adjoint_bytes));
        }
        std::uint64_t rows = 0;
        for (step_t s = 0; s < t_; ++s) {
            first_.push_back(rows);
            rows += static_cast<std::uint64_t>(t_ - s);
        }
        e_.assign(rows * row_, infinite);
        q_.assign(rows * row_, infinite);
    }

    void fill()
    {
        for (step_t s = t_ - 1; s >= 0; --s)
            for (step_t l = 1; l <= t_ - s; ++l)
                for (std::uint64_t mem = 0; mem < row_; ++mem) {
                    e_[at(s, l) + mem] = e_choice(s, l, mem, nullptr);
                    if (l >= 2)
                        q_[at(s, l) + mem] = q_choice(s, l, mem, nullptr);
                }
    }

    double h(step_t s, step_t l, std::uint64_t mem) const
    {
        if (l == 1)
            return mem >= r_[idx(s)] ? b(s) : infinite;
        return e_[at(s, l) + mem];
    }
    double qh(step_t s, step_t l, std::uint64_t mem) const
    {
        double v = mem >= p_[idx(s)] ? f(s) + h(s + 1, l - 1, mem) : infinite;
        if (mem >= 2 * u_[idx(s)])
            v = std::min(v, q_[at(s, l) + mem]);
        return v;
    }
    /// Whether QH(s, l, mem)'s first option, running step s without storing x_s, reaches its value.
    bool qh_runs(step_t s, step_t l, std::uint64_t mem) const
    {
        return mem >= p_[idx(s)] && f(s) + h(s + 1, l - 1, mem) == qh(s, l, mem);
    }
    double e(step_t s, step_t l, std::uint64_t mem) const { return e_[at(s, l) + mem]; }
    double q(step_t s, step_t l, std::uint64_t mem) const { return q_[at(s, l) + mem]; }

    // A decision: j steps advanced (0: free the start and run its step, QE only), and whether the right part
    // drops its start (QH).
    struct choice {
        step_t j = 0;
        bool drop = false;
    };

    // E(s, l, mem), and with `out` the first choice reaching `target` (the table's value).
    double e_choice(step_t s, step_t l, std::uint64_t mem, choice* out, double target = 0) const
    {
        if (l == 1)
            return mem >= std::max(2 * u_[idx(s)], r_[idx(s)]) ? b(s) : infinite;
        return splits(s, l, mem, false, out, target, infinite);
    }
    double q_choice(step_t s, step_t l, std::uint64_t mem, choice* out, double target = 0) const
    {
        if (mem < 2 * u_[idx(s)])
            return infinite;
        const double run = mem >= p_[idx(s)] ? f(s) + h(s + 1, l - 1, mem) : infinite;
        if (out != nullptr && run == target) {
            *out = {0, false};
            return run;
        }
        return splits(s, l, mem, true, out, target, run);
    }

    std::uint64_t u(step_t k) const { return u_[idx(k)]; }

private:
    double splits(step_t s, step_t l, std::uint64_t mem, bool skip_first, choice* out, double target, double v) const
    {
        double forward = 0;
        std::uint64_t widest = 0;
        for (step_t j = 1; j < l; ++j) {
            forward += f(s + j - 1);
            widest = std::max(widest, p_[idx(s + j - 1)]);
            if (mem < u_[idx(s)] + widest)
                break;
            const std::uint64_t right = mem - u_[idx(s)];
            if (!skip_first || j >= 2) {
                const double c = forward + h(s + j, l - j, right) + (skip_first ? q(s, j, mem) : e(s, j, mem));
                if (out != nullptr && c == target) {
                    *out = {j, false};
                    return c;
                }
                v = std::min(v, c);
            }
            if (l - j >= 2) {
                const double c = forward + qh(s + j, l - j, right) + (skip_first ? q(s, j + 1, mem) : e(s, j + 1, mem));
                if (out != nullptr && c == target) {
                    *out = {j, true};
                    return c;
                }
                v = std::min(v, c);
            }
        }
        return v;
    }

    static std::size_t idx(step_t k) { return static_cast<std::size_t>(k); }
    std::size_t at(step_t s, step_t l) const
    {
        return static_cast<std::size_t>((first_[idx(s)] + static_cast<std::uint64_t>(l - 1)) * row_);
    }
    double f(step_t k) const { return m_.steps[idx(k)].forward; }
    double b(step_t k) const { return m_.steps[idx(k)].adjoint; }

    const chain_model& m_;
    step_t t_;
    std::uint64_t row_;
    std::vector<std::uint64_t> u_, p_, r_, first_;
    std::vector<double> e_, q_;
};

// Walks the tables' choices, writing the actions; snapshots nest, so the slot of a store is the depth.
class refetch_writer {
public:
    explicit refetch_writer(const refetch_tables& tables) : t_(tables) {}

    void h(step_t s, step_t l, std::uint64_t mem)
    {
        if (l == 1) {
            out.push_back(reverse{s});
            return;
        }
        const slot_t slot = depth_++;
        out.push_back(store{0, slot, s});
        e(s, l, mem, slot);
    }

    std::vector<action> out;

private:
    void e(step_t s, step_t l, std::uint64_t mem, slot_t slot)
    {
        if (l == 1) {
            release(slot);
            out.push_back(reverse{s});
            return;
        }
        refetch_tables::choice c;
        (void)t_.e_choice(s, l, mem, &c, t_.e(s, l, mem));
        split(s, mem, slot, c, l, false);
    }

    void q(step_t s, step_t l, std::uint64_t mem, slot_t slot)
    {
        refetch_tables::choice c;
        (void)t_.q_choice(s, l, mem, &c, t_.q(s, l, mem));
        if (c.j == 0) { // free x_s, run step s, the rest with all the memory
            release(slot);
            out.push_back(advance{s, s + 1});
            h(s + 1, l - 1, mem);
            return;
        }
        split(s, mem, slot, c, l, true);
    }

    void qh(step_t s, step_t l, std::uint64_t mem)
    {
        if (t_.qh_runs(s, l, mem)) { // running step s without storing x_s first reaches QH
            out.push_back(advance{s, s + 1});
            h(s + 1, l - 1, mem);
            return;
        }
        const slot_t slot = depth_++;
        out.push_back(store{0, slot, s});
        q(s, l, mem, slot);
    }

    void split(step_t s, std::uint64_t mem, slot_t slot, refetch_tables::choice c, step_t l, bool skip_first)
    {
        out.push_back(advance{s, s + c.j});
        const std::uint64_t right = mem - t_.u(s);
        if (c.drop)
            qh(s + c.j, l - c.j, right);
        else
            h(s + c.j, l - c.j, right);
        out.push_back(restore{0, slot, s});
        const step_t left = c.drop ? c.j + 1 : c.j;
        if (skip_first)
            q(s, left, mem, slot);
        else
            e(s, left, mem, slot);
    }

    void release(slot_t slot)
    {
        out.push_back(free_slot{0, slot});
        --depth_;
    }

    const refetch_tables& t_;
    slot_t depth_ = 0;
};

} // namespace

std::optional<std::vector<action>> plan_refetch(const chain_model& chain, std::uint64_t granularity,
                                                std::uint64_t units, std::uint64_t max_entries, std::uint64_t max_work)
{
    // Two tables of T (T + 1) / 2 rows of U + 1 doubles, each entry at most T splits of two kinds.
    const auto t = static_cast<std::uint64_t>(chain.size());
    std::uint64_t entries = 0;
    std::uint64_t work = 0;
    if (t < 1 || granularity < 1 || __builtin_mul_overflow(t * (t + 1) / 2, units + 1, &entries) ||
        entries > max_entries || __builtin_mul_overflow(entries, 2 * t, &work) || work > max_work)
        return std::nullopt;
    refetch_tables tables(chain, granularity, units);
    tables.fill();
    if (tables.h(0, chain.size(), units) == infinite)
        return std::nullopt;
    refetch_writer writer(tables);
    writer.h(0, chain.size(), units);
    return std::move(writer.out);
}

} // namespace remat::detail
