// The dynamic program of remat/schedule/chain_taped.hpp: remat::chain's recurrence (docs/heterogeneous.md)
// with a third way to start a part, a taped advance. In units of g bytes, with u_k = ceil(m_k / g),
// p_k = max(u_k, u_{k+1}), c_k = ceil(a_k / g), r_k = p_k + c_k and the tape t_k = u_k + c_k:
//
//   H(s, 1, M) = b_s                                   if M >= r_s   (x_s current, not stored)
//   H(s, l, M) = min(E(s, l, M), P(s, l, M))           for l >= 2
//   P(s, l, M) = f_s + H(s+1, l-1, M - t_s) + max(0, b_s - f_s)    if M >= r_s   (tape step s)
//   E(s, 1, M) = b_s                                   if M >= max(2 u_s, r_s)   (x_s current and stored)
//   E(s, l, M) = min(min over 1 <= j < l, M >= u_s + max(p_s .. p_{s+j-1}) of
//                        F(s, s+j) + H(s+j, l-j, M - u_s) + E(s, j, M),
//                    P(s, l, M) if M >= 2 u_s)         (free x_s's snapshot: the tape holds x_s)
//
// The tables are small (a network's blocks: tens to hundreds), so this is the plain recurrence, filled by
// length; each entry keeps the option it took, and the actions are read off those.
#include "remat/schedule/chain_taped.hpp"

#include "remat/error.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <string>

namespace remat {
namespace {

constexpr std::uint64_t max_units = 4096;
constexpr std::uint64_t max_entries = std::uint64_t{1} << 23;
constexpr double infinity = std::numeric_limits<double>::infinity();

std::uint64_t units_of(std::uint64_t bytes, std::uint64_t g)
{
    return bytes / g + (bytes % g != 0 ? 1 : 0);
}

// The sizes of the model in units of g.
struct unit_chain {
    std::vector<std::uint64_t> u, p, r, t; // u has T + 1 entries
    std::vector<double> f, b, bt;
    unit_chain(const chain_model& c, std::uint64_t g)
    {
        const auto n = static_cast<std::size_t>(c.size());
        u.resize(n + 1);
        for (std::size_t k = 0; k <= n; ++k)
            u[k] = units_of(c.state_bytes(static_cast<step_t>(k)), g);
        for (std::size_t k = 0; k < n; ++k) {
            const std::uint64_t a = units_of(c.steps[k].adjoint_bytes, g);
            p.push_back(std::max(u[k], u[k + 1]));
            r.push_back(p[k] + a);
            t.push_back(u[k] + a);
            f.push_back(c.steps[k].forward);
            b.push_back(c.steps[k].adjoint);
            bt.push_back(std::max(0.0, c.steps[k].adjoint - c.steps[k].forward));
        }
    }
    // The all-taped plan's peak in units (what more memory never improves on).
    [[nodiscard]] std::uint64_t all_taped() const
    {
        std::uint64_t held = 0;
        std::uint64_t peak = 0;
        for (std::size_t k = 0; k < f.size(); ++k) {
            peak = std::max(peak, held + r[k]);
            held += t[k];
        }
        return peak;
    }
};

class tables {
public:
    tables(const unit_chain& c, std::uint64_t units) : c_(c), n_(c.f.size()), width_(units + 1)
    {
        for (std::size_t s = 0; s < n_; ++s) {
            offset_.push_back(rows_);
            rows_ += n_ - s;
        }
        h_.assign(rows_ * width_, infinity);
        e_.assign(rows_ * width_, infinity);
        h_choice_.assign(rows_ * width_, 0);
        e_choice_.assign(rows_ * width_, 0);
        for (std::size_t l = 1; l <= n_; ++l)
            for (std::size_t s = 0; s + l <= n_; ++s)
                fill(s, l);
    }
    [[nodiscard]] double h(std::size_t s, std::size_t l, std::uint64_t m) const { return h_[at(s, l, m)]; }

    void emit_h(std::size_t s, std::size_t l, std::uint64_t m, slot_t slot, std::vector<action>& out) const
    {
        if (l == 1) {
            out.emplace_back(reverse{static_cast<step_t>(s)});
        } else if (h_choice_[at(s, l, m)] < 0) {
            emit_taped(s, l, m, slot, out);
        } else {
            out.emplace_back(store{0, slot, static_cast<step_t>(s)});
            emit_e(s, l, m, slot, out);
        }
    }

private:
    [[nodiscard]] std::size_t at(std::size_t s, std::size_t l, std::uint64_t m) const
    {
        return (offset_[s] + l - 1) * width_ + m;
    }

    void fill(std::size_t s, std::size_t l)
    {
        double* h = &h_[at(s, l, 0)];
        double* e = &e_[at(s, l, 0)];
        std::int32_t* ec = &e_choice_[at(s, l, 0)];
        std::int8_t* hc = &h_choice_[at(s, l, 0)];
        const std::uint64_t units = width_ - 1;
        if (l == 1) {
            for (std::uint64_t m = c_.r[s]; m <= units; ++m) {
                h[m] = c_.b[s];
                if (m >= 2 * c_.u[s])
                    e[m] = c_.b[s];
            }
            return;
        }
        double forward = 0;
        std::uint64_t widest = 0;
        for (std::size_t j = 1; j < l; ++j) {
            forward += c_.f[s + j - 1];
            widest = std::max(widest, c_.p[s + j - 1]);
            const double* right = &h_[at(s + j, l - j, 0)];
            const double* left = &e_[at(s, j, 0)];
            for (std::uint64_t m = c_.u[s] + widest; m <= units; ++m) {
                const double v = forward + right[m - c_.u[s]] + left[m];
                if (v < e[m]) {
                    e[m] = v;
                    ec[m] = static_cast<std::int32_t>(j);
                }
            }
        }
        const double* rest = &h_[at(s + 1, l - 1, 0)];
        for (std::uint64_t m = 0; m <= units; ++m) {
            const double taped = m >= c_.r[s] ? c_.f[s] + rest[m - c_.t[s]] + c_.bt[s] : infinity;
            if (m >= 2 * c_.u[s] && taped < e[m]) {
                e[m] = taped;
                ec[m] = -1;
            }
            h[m] = e[m];
            if (taped <= h[m] && taped != infinity) { // on a tie, no snapshot to store and free at once
                h[m] = taped;
                hc[m] = -1;
            }
        }
    }

    // x_s current (its snapshot, if any, freed): tape step s, reverse the rest from x_{s+1}, then step s.
    void emit_taped(std::size_t s, std::size_t l, std::uint64_t m, slot_t slot, std::vector<action>& out) const
    {
        const auto k = static_cast<step_t>(s);
        out.emplace_back(advance{k, k + 1, true});
        emit_h(s + 1, l - 1, m - c_.t[s], slot, out);
        out.emplace_back(reverse{k});
    }

    // x_s current and stored in `slot`.
    void emit_e(std::size_t s, std::size_t l, std::uint64_t m, slot_t slot, std::vector<action>& out) const
    {
        const auto k = static_cast<step_t>(s);
        if (l == 1) {
            out.emplace_back(free_slot{0, slot});
            out.emplace_back(reverse{k});
            return;
        }
        const std::int32_t j = e_choice_[at(s, l, m)];
        if (j < 0) {
            out.emplace_back(free_slot{0, slot});
            emit_taped(s, l, m, slot, out);
            return;
        }
        out.emplace_back(advance{k, k + j, false});
        emit_h(s + static_cast<std::size_t>(j), l - static_cast<std::size_t>(j), m - c_.u[s], slot + 1, out);
        out.emplace_back(restore{0, slot, k});
        emit_e(s, static_cast<std::size_t>(j), m, slot, out);
    }

    const unit_chain& c_;
    std::size_t n_;
    std::uint64_t width_;
    std::size_t rows_ = 0;
    std::vector<std::size_t> offset_;
    std::vector<double> h_, e_;
    std::vector<std::int8_t> h_choice_;
    std::vector<std::int32_t> e_choice_;
};

// Peak bytes and cost of the plan's actions under the model (true bytes).
void price(const chain_model& c, taped_chain_plan& plan)
{
    std::uint64_t held = 0;
    std::vector<std::uint64_t> slot_bytes;
    std::vector<std::uint64_t> tape(c.steps.size(), 0);
    std::uint64_t current = c.state_bytes(0);
    auto moment = [&](std::uint64_t bytes) { plan.peak_bytes = std::max(plan.peak_bytes, bytes); };
    moment(current);
    for (const action& a : plan.actions) {
        if (const auto* v = std::get_if<advance>(&a)) {
            for (step_t k = v->from; k < v->to; ++k) {
                const chain_step& st = c.steps[static_cast<std::size_t>(k)];
                moment(held + std::max(c.state_bytes(k), c.state_bytes(k + 1)) + (v->taped ? st.adjoint_bytes : 0));
                plan.cost += st.forward;
                ++plan.forward_steps;
            }
            if (v->taped) {
                ++plan.taped_steps;
                tape[static_cast<std::size_t>(v->from)] =
                    c.state_bytes(v->from) + c.steps[static_cast<std::size_t>(v->from)].adjoint_bytes;
                held += tape[static_cast<std::size_t>(v->from)];
                moment(held + c.state_bytes(v->to));
            }
            current = c.state_bytes(v->to);
        } else if (const auto* s = std::get_if<store>(&a)) {
            if (slot_bytes.size() <= static_cast<std::size_t>(s->slot))
                slot_bytes.resize(static_cast<std::size_t>(s->slot) + 1, 0);
            slot_bytes[static_cast<std::size_t>(s->slot)] = c.state_bytes(s->step);
            held += c.state_bytes(s->step);
            moment(held + current);
        } else if (const auto* r = std::get_if<restore>(&a)) {
            current = c.state_bytes(r->step);
            moment(held + current);
        } else if (const auto* f = std::get_if<free_slot>(&a)) {
            held -= slot_bytes[static_cast<std::size_t>(f->slot)];
        } else {
            const auto k = static_cast<std::size_t>(std::get<reverse>(a).step);
            const chain_step& st = c.steps[k];
            if (tape[k] != 0) {
                moment(held);
                plan.cost += std::max(0.0, st.adjoint - st.forward);
                held -= tape[k];
                tape[k] = 0;
            } else {
                moment(held +
                       std::max(c.state_bytes(static_cast<step_t>(k)), c.state_bytes(static_cast<step_t>(k) + 1)) +
                       st.adjoint_bytes);
                plan.cost += st.adjoint;
            }
            current = 0;
        }
    }
}

std::uint64_t auto_granularity(const chain_model& c, std::uint64_t budget)
{
    std::uint64_t g = 0;
    for (step_t k = 0; k <= c.size(); ++k)
        g = std::gcd(g, c.state_bytes(k));
    for (const chain_step& s : c.steps)
        g = std::gcd(g, s.adjoint_bytes);
    const std::uint64_t rows = static_cast<std::uint64_t>(c.size()) * static_cast<std::uint64_t>(c.size() + 1) / 2;
    const std::uint64_t most = std::max<std::uint64_t>(1, std::min(max_units, max_entries / rows - 1));
    const std::uint64_t wanted = std::min(budget, all_taped_bytes(c));
    if (wanted / g <= most)
        return g;
    return units_of(wanted, most);
}

} // namespace

std::uint64_t all_taped_bytes(const chain_model& chain)
{
    return unit_chain(chain, 1).all_taped();
}

taped_chain_plan plan_taped_chain(const chain_model& chain, std::uint64_t budget_bytes, std::uint64_t granularity)
{
    validate(chain);
    const auto n = static_cast<std::uint64_t>(chain.size());
    const std::uint64_t rows = n * (n + 1) / 2;
    std::uint64_t g = granularity != 0 ? granularity : auto_granularity(chain, budget_bytes);
    // Rounding every size up can take the all-taped peak past the units chosen: coarser until it fits.
    while (granularity == 0 && (std::min(budget_bytes / g, unit_chain(chain, g).all_taped()) + 1) * rows > max_entries)
        g += g / 8 + 1;
    const unit_chain units(chain, g);
    const std::uint64_t u = std::min(budget_bytes / g, units.all_taped());
    if ((u + 1) * rows > max_entries)
        throw capacity_error("plan_taped_chain: a table of " + std::to_string(n) + " steps at " + std::to_string(u) +
                             " units of " + std::to_string(g) + " bytes passes " + std::to_string(max_entries) +
                             " entries; give a coarser granularity");
    const tables t(units, u);
    const auto steps = static_cast<std::size_t>(n);
    if (t.h(0, steps, u) == infinity) {
        // The least budget: from a table that reaches the all-taped plan (which always fits its own peak).
        const std::uint64_t g2 = granularity != 0 && (units.all_taped() + 1) * rows <= max_entries
                                     ? g
                                     : auto_granularity(chain, all_taped_bytes(chain));
        const unit_chain wide(chain, g2);
        const tables all(wide, wide.all_taped());
        std::uint64_t least = 0;
        while (all.h(0, steps, least) == infinity)
            ++least;
        throw capacity_error("no schedule of this chain fits a budget of " + std::to_string(budget_bytes) +
                             " bytes at a granularity of " + std::to_string(g) + " bytes; it needs at least " +
                             std::to_string(least * g2) + " bytes");
    }
    std::uint64_t least = 0;
    while (t.h(0, steps, least) == infinity)
        ++least;
    taped_chain_plan plan;
    plan.granularity = g;
    plan.least_budget_bytes = least * g;
    t.emit_h(0, steps, u, 0, plan.actions);
    price(chain, plan);
    return plan;
}

} // namespace remat
