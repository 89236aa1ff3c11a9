// remat/schedule/chain_greedy.hpp — the greedy memory/compute ranking on a heterogeneous chain: what people use
// instead of an optimal plan, and what remat::chain falls back to where its near-optimal plan (in blocks, or with
// a short horizon) costs more (docs/heterogeneous.md).
#pragma once

#include "remat/schedule/action.hpp"
#include "remat/schedule/action_list.hpp"
#include "remat/schedule/chain_model.hpp"
#include "remat/schedule/cost.hpp"
#include "remat/schedule/range.hpp"

#include <cstdint>
#include <memory>
#include <vector>

namespace remat {

/// A fixed list of actions as a schedule, with its price on the chain it was made for.
class listed_plan : public action_range<listed_plan> {
public:
    listed_plan() = default;
    listed_plan(step_t steps, std::shared_ptr<const std::vector<action>> actions, schedule_cost counts,
                std::uint64_t peak_bytes = 0)
        : steps_(steps), actions_(std::move(actions)), counts_(counts), peak_bytes_(peak_bytes)
    {
    }
    [[nodiscard]] step_t steps() const noexcept { return steps_; }
    /// Counts and predicted_cost under the chain's model (remat::evaluate).
    [[nodiscard]] schedule_cost cost() const { return counts_; }
    /// Its peak memory under the chain's model, in true bytes.
    [[nodiscard]] std::uint64_t peak_bytes() const noexcept { return peak_bytes_; }
    [[nodiscard]] const std::shared_ptr<const std::vector<action>>& actions() const noexcept { return actions_; }
    [[nodiscard]] bool empty() const noexcept { return actions_ == nullptr || actions_->empty(); }

    using cursor_type = action_list_cursor;
    [[nodiscard]] cursor_type cursor() const { return cursor_type(actions_); }

private:
    step_t steps_ = 0;
    std::shared_ptr<const std::vector<action>> actions_;
    schedule_cost counts_{};
    std::uint64_t peak_bytes_ = 0;
};

/// The plan with checkpoints at the marked states (checkpoint[k], and x_0 always): the forward sweep stores each
/// checkpoint, and each segment between checkpoints is re-run storing every state, then reversed.
[[nodiscard]] std::vector<action> segment_actions(step_t steps, const std::vector<bool>& checkpoint);

/// The greedy memory/compute ranking: every state x_1..x_{T-1} a checkpoint, then those with the most bytes
/// per forward cost of the step that produced them dropped first, at the count (every count, or in steps of
/// T/200 on long chains) that fits `budget_bytes` most cheaply under the chain's model. Empty when none fits.
///
///     remat::listed_plan g = remat::greedy_ranking(m, 4ull << 30);
///     if (!g.empty()) g.cost().predicted_cost;
[[nodiscard]] listed_plan greedy_ranking(const chain_model& chain, std::uint64_t budget_bytes);

} // namespace remat
