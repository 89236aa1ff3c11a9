// The plan of a taped chain read off its options (chain_taped_emit.hpp): H and E of docs/heterogeneous.md, each
// option the actions that run it.
#include "chain_taped_emit.hpp"

namespace remat::detail {
namespace {

class taped_emitter {
public:
    taped_emitter(const taped_unit_chain& chain, const taped_options_fn& options, std::vector<action>& out)
        : c_(chain), options_(options), out_(out)
    {
    }

    // x_s current (its snapshot, if any, freed).
    void h(std::size_t s, std::size_t l, std::uint64_t m, slot_t slot) const
    {
        if (l == 1) {
            out_.emplace_back(reverse{static_cast<step_t>(s)});
            return;
        }
        const taped_part_options o = options_(s, l, m);
        if (o.h_taped) {
            taped(s, l, m, slot);
        } else {
            out_.emplace_back(store{0, slot, static_cast<step_t>(s)});
            e(s, l, m, slot, o);
        }
    }

private:
    // x_s current (its snapshot, if any, freed): tape step s, reverse the rest from x_{s+1}, then step s.
    void taped(std::size_t s, std::size_t l, std::uint64_t m, slot_t slot) const
    {
        const auto k = static_cast<step_t>(s);
        out_.emplace_back(advance{k, k + 1, true});
        h(s + 1, l - 1, m - c_.t[s], slot);
        out_.emplace_back(reverse{k});
    }

    // x_s current and stored in `slot`.
    void e(std::size_t s, std::size_t l, std::uint64_t m, slot_t slot) const
    {
        if (l == 1) {
            out_.emplace_back(free_slot{0, slot});
            out_.emplace_back(reverse{static_cast<step_t>(s)});
            return;
        }
        e(s, l, m, slot, options_(s, l, m));
    }

    // The same, with part (s, l)'s options (l >= 2) already read as H's: a form may find them again at a cost
    // (chain_taped_layers.cpp prices every split of the entry).
    void e(std::size_t s, std::size_t l, std::uint64_t m, slot_t slot, const taped_part_options& o) const
    {
        const auto k = static_cast<step_t>(s);
        if (o.e_split == e_tapes) {
            out_.emplace_back(free_slot{0, slot});
            taped(s, l, m, slot);
            return;
        }
        const std::size_t j = o.e_split;
        out_.emplace_back(advance{k, k + static_cast<step_t>(j), false});
        h(s + j, l - j, m - c_.u[s], slot + 1);
        out_.emplace_back(restore{0, slot, k});
        e(s, j, m, slot);
    }

    const taped_unit_chain& c_;
    const taped_options_fn& options_;
    std::vector<action>& out_;
};

} // namespace

void emit_taped_chain(const taped_unit_chain& chain, std::uint64_t m, const taped_options_fn& options,
                      std::vector<action>& out)
{
    taped_emitter(chain, options, out).h(0, chain.f.size(), m, 0);
}

} // namespace remat::detail
