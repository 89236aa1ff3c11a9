// remat::price_taped_chain against tests/support's independent replay of the taped model: on every plan of
// remat::plan_taped_chain over a random grid of chains and budgets, the same peak, cost and counts; on those
// plans broken one action at a time (an action dropped, two swapped, a field moved by one), refused exactly
// where the replay finds an illegal action (remat::argument_error naming it), else priced as the replay does.
#define BOOST_TEST_MODULE chain_taped_price
#include <boost/test/unit_test.hpp>

#include "chain_taped_reference.hpp"
#include "random_chain.hpp"

#include "remat/error.hpp"
#include "remat/schedule/chain_taped.hpp"
#include "remat/schedule/chain_taped_price.hpp"

#include <random>
#include <string>
#include <variant>

using namespace remat;

namespace {

chain_model random_chain(std::mt19937_64& rng, step_t steps)
{
    return test::random_chain(rng, steps, {.most_state_bytes = 9, .most_adjoint_bytes = 12});
}

// Every plan of plan_taped_chain at units of one byte on a grid of chains and budgets, least to all-taped.
template <class Visit>
void for_every_plan(Visit visit)
{
    std::mt19937_64 rng(3838);
    for (step_t t = 1; t <= 9; ++t)
        for (int trial = 0; trial < 12; ++trial) {
            chain_model m = random_chain(rng, t);
            if (trial % 3 == 2) // tapes of their own size (chain_step::tape_bytes), 1 byte to past m_k + a_k
                for (chain_step& st : m.steps)
                    st.tape_bytes =
                        std::uniform_int_distribution<std::uint64_t>(0, st.state_bytes + st.adjoint_bytes + 4)(rng);
            const std::uint64_t top = all_taped_bytes(m);
            const std::uint64_t least = plan_taped_chain(m, top, 1).least_budget_bytes;
            for (std::uint64_t budget = least; budget <= top; budget += 1 + (top - least) / 6)
                visit(m, plan_taped_chain(m, budget, 1).actions);
        }
}

// The action with one of its fields moved by `by`.
action moved(action a, int field, step_t by)
{
    std::visit(
        [&](auto& x) {
            using A = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<A, advance>)
                (field == 0 ? x.from : x.to) += by;
            else if constexpr (std::is_same_v<A, store> || std::is_same_v<A, restore>)
                (field == 0 ? x.step : x.slot) += by;
            else if constexpr (std::is_same_v<A, free_slot>)
                x.slot += by;
            else
                x.step += by;
        },
        a);
    return a;
}

// Whether price_taped_chain agrees with the replay on `actions`: refused where it finds an illegal action, else
// the same price. Returns whether it was refused.
bool agrees_with_the_replay(const chain_model& m, const std::vector<action>& actions)
{
    const test::chain_replay r = test::replay_taped_chain(m, actions);
    if (r.error) {
        BOOST_CHECK_THROW((void)price_taped_chain(m, actions), argument_error);
        return true;
    }
    const taped_chain_price p = price_taped_chain(m, actions);
    BOOST_TEST(p.peak_bytes == r.peak_bytes);
    BOOST_TEST(p.cost == r.cost);
    BOOST_TEST(p.forward_steps == r.forward_steps);
    BOOST_TEST(p.stores == r.stores);
    BOOST_TEST(p.restores == r.restores);
    return false;
}

} // namespace

BOOST_AUTO_TEST_CASE(prices_every_plan_as_the_replay_and_as_the_plan_reports)
{
    int plans = 0;
    for_every_plan([&](const chain_model& m, const std::vector<action>& actions) {
        BOOST_TEST(!agrees_with_the_replay(m, actions));
        std::uint64_t taped = 0;
        for (const action& a : actions)
            taped += std::holds_alternative<advance>(a) && std::get<advance>(a).taped ? 1 : 0;
        BOOST_TEST(price_taped_chain(m, actions).taped_steps == taped);
        ++plans;
    });
    BOOST_TEST(plans > 300);
}

BOOST_AUTO_TEST_CASE(refuses_exactly_the_broken_plans_the_replay_refuses)
{
    int refused = 0, legal = 0;
    for_every_plan([&](const chain_model& m, const std::vector<action>& actions) {
        for (std::size_t i = 0; i < actions.size(); ++i) {
            std::vector<action> broken = actions;
            broken.erase(broken.begin() + static_cast<std::ptrdiff_t>(i));
            (agrees_with_the_replay(m, broken) ? refused : legal) += 1;
            if (i + 1 < actions.size()) {
                broken = actions;
                std::swap(broken[i], broken[i + 1]);
                (agrees_with_the_replay(m, broken) ? refused : legal) += 1;
            }
            for (int field = 0; field < 2; ++field)
                for (step_t by : {-1, 1}) {
                    broken = actions;
                    broken[i] = moved(actions[i], field, by);
                    (agrees_with_the_replay(m, broken) ? refused : legal) += 1;
                }
        }
    });
    BOOST_TEST(refused > 1000);
    BOOST_TEST(legal > 100); // some changes leave a legal plan (a slot renamed, independent actions swapped)
}

BOOST_AUTO_TEST_CASE(names_the_action_and_the_rule)
{
    const chain_model m = chain_model::uniform(3, 1.0, 2.0, 4);
    const auto message = [&](const std::vector<action>& actions) {
        try {
            (void)price_taped_chain(m, actions);
        } catch (const argument_error& e) {
            return std::string(e.what());
        }
        return std::string("not refused");
    };
    BOOST_TEST(message({store{0, 0, 0}, advance{0, 2, false}, reverse{1}})
                   .find("action 2 (reverse 1) is out of order: step 2 is next") != std::string::npos);
    BOOST_TEST(
        message({advance{0, 2, true}}).find("action 0 (advance 0 2 tape) keeps the tape of more than one step") !=
        std::string::npos);
    BOOST_TEST(message({restore{0, 0, 0}}).find("action 0 (restore 0 0 0) names a slot not in use") !=
               std::string::npos);
    BOOST_TEST(message({advance{0, 2, false}, reverse{2}}).find("the actions end before step 1 is reversed") !=
               std::string::npos);
    BOOST_TEST(message({advance{0, 2, false}, reverse{2}, reverse{1}})
                   .find("action 2 (reverse 1) needs x_1 current, where no state is") != std::string::npos);
    BOOST_CHECK_THROW((void)price_taped_chain(chain_model{}, {}), argument_error); // no steps
}

// The example of docs/heterogeneous.md ("Pricing a plan"), as it stands there.
BOOST_AUTO_TEST_CASE(the_documented_example)
{
    remat::chain_model m = remat::chain_model::uniform(6, 1.0, 2.5, 1 << 20, 1 << 20);
    // two segments: x_0 and x_3 stored, each segment run taped from its input, then reversed
    std::vector<remat::action> segments = {
        remat::store{0, 0, 0},      remat::advance{0, 3, false}, remat::store{0, 1, 3},  remat::advance{3, 4, true},
        remat::advance{4, 5, true}, remat::reverse{5},           remat::reverse{4},      remat::reverse{3},
        remat::free_slot{0, 1},     remat::restore{0, 0, 0},     remat::free_slot{0, 0}, remat::advance{0, 1, true},
        remat::advance{1, 2, true}, remat::reverse{2},           remat::reverse{1},      remat::reverse{0}};
    remat::taped_chain_price p = remat::price_taped_chain(m, segments);
    // p.peak_bytes: the largest plan within it costs no more
    remat::taped_chain_plan best = remat::plan_taped_chain(m, p.peak_bytes);
    BOOST_TEST(best.cost <= p.cost);
    BOOST_TEST(p.peak_bytes == test::replay_taped_chain(m, segments).peak_bytes);
}
