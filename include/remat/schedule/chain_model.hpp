// remat/schedule/chain_model.hpp — a loop whose steps differ in cost and state size (docs/heterogeneous.md).
//
// Step k (0 <= k < T) maps x_k to x_{k+1}. It has a forward cost f_k >= 0, an adjoint cost b_k >= 0 (the
// re-run of step k inside the adjoint included), the size m_k of its input state x_k in bytes (x_T's size
// is final_state_bytes) and the extra bytes a_k >= 0 its adjoint needs while it runs.
//
// Memory in use at any moment of a schedule is
//     the bytes of every stored snapshot (from its store until its free)
//   + the current state: m_j while x_j is current between steps; max(m_k, m_{k+1}) while step k runs
//     (forward, or inside its adjoint); nothing while no state is current (after a reverse)
//   + a_k while the adjoint of step k runs,
// and its peak must not exceed the budget. A schedule's cost is the f_k of every step run by an advance
// plus every b_k. A store copies the current state, so right after `store` the snapshot and the current
// state both count; `restore` likewise (free the slot right after its last restore to drop it).
//
// Taped plans (chain_taped.hpp) also hold step k's tape, t_k bytes, from its taped advance to `reverse k`:
// tape_bytes where given, else m_k + a_k (its input and what its adjoint needs besides). Why a size of its
// own: a_k also serves the untaped reverse, whose re-run holds its output with nothing else holding it, while
// a tape may share storage with its neighbour's (a block that saves its output, followed by one that saves
// that same tensor as its input: one storage, counted in one tape only). remat::chain ignores it.
#pragma once

#include "remat/types.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace remat {

/// One step of a heterogeneous chain (see the model at the top of this header).
///
///     remat::chain_step s{1.0, 2.5, 1 << 20, 0};   // f_k, b_k, m_k = 1 MiB, a_k
struct chain_step {
    double forward = 0;              ///< f_k: running step k forward
    double adjoint = 0;              ///< b_k: the adjoint of step k, its re-run of step k included
    std::uint64_t state_bytes = 0;   ///< m_k: bytes of x_k (at least 1)
    std::uint64_t adjoint_bytes = 0; ///< a_k: extra bytes while the adjoint of step k runs
    std::uint64_t tape_bytes = 0;    ///< t_k: bytes of step k's tape (taped plans); 0: m_k + a_k
    friend bool operator==(const chain_step&, const chain_step&) = default;
};

/// A chain of T steps: steps[k] describes step k; x_T has final_state_bytes bytes.
///
///     remat::chain_model m = remat::chain_model::uniform(10, 1.0, 2.0, 4096);
///     m.steps[3].forward = 5;   // step 3 is five times as expensive
struct chain_model {
    std::vector<chain_step> steps;
    std::uint64_t final_state_bytes = 0;
    friend bool operator==(const chain_model&, const chain_model&) = default;

    /// T equal steps (the model of remat::revolve).
    [[nodiscard]] static chain_model uniform(step_t steps, double forward, double adjoint, std::uint64_t state_bytes,
                                             std::uint64_t adjoint_bytes = 0);
    [[nodiscard]] step_t size() const noexcept { return static_cast<step_t>(steps.size()); }
    /// m_k for 0 <= k <= T.
    [[nodiscard]] std::uint64_t state_bytes(step_t k) const noexcept
    {
        return k == size() ? final_state_bytes : steps[static_cast<std::size_t>(k)].state_bytes;
    }
    /// t_k for 0 <= k < T: tape_bytes, or m_k + a_k where it is 0.
    [[nodiscard]] std::uint64_t tape_bytes(step_t k) const noexcept
    {
        const chain_step& s = steps[static_cast<std::size_t>(k)];
        return s.tape_bytes != 0 ? s.tape_bytes : s.state_bytes + s.adjoint_bytes;
    }
    /// The memory step k needs on its own while its adjoint runs: max(m_k, m_{k+1}) + a_k. No schedule
    /// fits a budget below the largest of these.
    [[nodiscard]] std::uint64_t adjoint_need(step_t k) const noexcept;
    /// Bytes of storing every state x_0..x_{T-2} and reversing x_{T-1} where it stands: the peak of a
    /// store-all run (x_{T-1} current and its adjoint running on top of every snapshot).
    [[nodiscard]] std::uint64_t store_all_bytes() const noexcept;
    /// The cost of a store-all run: every step forward once but the last (reversed where it stands), and
    /// every adjoint.
    [[nodiscard]] double store_all_cost() const noexcept;
};

/// Checks a chain: at least one step; every cost finite and >= 0; every state (final one included) at
/// least 1 byte; byte totals that fit 64 bits (every state, every tape: tape_bytes, or m_k + a_k where 0, and the
/// largest state and a_k besides). Throws remat::argument_error naming the step and value.
///
///     remat::validate(m);
void validate(const chain_model& chain);

/// The JSON text of a chain, the form `remat plan --chain FILE` reads (costs printed with 17 significant
/// digits, so they read back exactly):
///
///     {"steps": [{"forward": 1.0, "adjoint": 2.5, "state_bytes": 1048576, "adjoint_bytes": 0}, ...],
///      "final_state_bytes": 1048576}
///
/// A step's "tape_bytes" is written only where it is not 0 (and is optional where read).
///
///     std::ofstream("costs.json") << remat::to_json(remat::profile(...));
[[nodiscard]] std::string to_json(const chain_model& chain);

} // namespace remat
