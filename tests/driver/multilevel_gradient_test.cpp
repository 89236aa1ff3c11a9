// Multi-level schedules driven by remat::run over a store of several levels (host stores behind a small
// adapter): gradients bit-identical to a store-everything run, and the run's per-level counts equal to
// the schedule's prediction.
#define BOOST_TEST_MODULE multilevel_gradient
#include <boost/test/unit_test.hpp>

#include "burgers.hpp"
#include "burgers_gradient.hpp"
#include "lorenz63.hpp"

#include "remat/driver/run.hpp"
#include "remat/schedule/multilevel.hpp"
#include "remat/schedule/uniform.hpp"
#include "remat/store/host_store.hpp"

#include <cstring>
#include <utility>
#include <vector>

using namespace remat;
using examples::vec3;

namespace {

// One host_store per level, each with that level's slot capacity.
class layered_store {
public:
    explicit layered_store(const cost_model& model)
    {
        for (const level_spec& level : model.levels)
            levels_.emplace_back(level_capacity{.slots = level.slots == level_spec::unlimited
                                                             ? level_capacity::unlimited_slots
                                                             : static_cast<slot_t>(level.slots)},
                                 host_store::options{.name = level.name.c_str()});
    }
    static constexpr bool prefetches = false;
    [[nodiscard]] level_t level_count() const noexcept { return static_cast<level_t>(levels_.size()); }
    [[nodiscard]] level_capacity capacity(level_t level) const { return at(level).capacity(); }
    void write(level_t level, slot_t slot, step_t step, const_bytes src) { at(level).write(slot, step, src); }
    void read(level_t level, slot_t slot, step_t step, mutable_bytes dst) { at(level).read(slot, step, dst); }
    void release(level_t level, slot_t slot) { at(level).release(slot); }
    void release_all() noexcept
    {
        for (host_store& s : levels_)
            s.release_all();
    }
    void prefetch(level_t, slot_t, step_t) noexcept {}
    [[nodiscard]] std::size_t snapshot_bytes(level_t level, slot_t slot) const
    {
        return at(level).snapshot_bytes(slot);
    }
    [[nodiscard]] store_stats stats() const
    {
        store_stats all;
        for (const host_store& s : levels_)
            all.levels.push_back(s.stats());
        return all;
    }

private:
    host_store& at(level_t level) { return levels_.at(static_cast<std::size_t>(level)); }
    [[nodiscard]] const host_store& at(level_t level) const { return levels_.at(static_cast<std::size_t>(level)); }
    std::vector<host_store> levels_;
};
static_assert(snapshot_store<layered_store>);

constexpr slot_t inf = level_spec::unlimited;

struct lorenz_result {
    vec3 dx0{};
    vec3 dp{};
    run_report report;
};

template <class Schedule>
lorenz_result lorenz_gradient(const Schedule& plan, const cost_model& levels)
{
    const examples::lorenz63 model;
    vec3 x{1.0, 1.0, 1.0};
    vec3 lambda{0, 0, 1};
    lorenz_result g;
    layered_store store(levels);
    g.report = run(plan, store, x, remat::forward_step([&](step_t, vec3& s) { model.step(s); }),
                   remat::adjoint_step([&](step_t, vec3& s) { model.adjoint_step(s, lambda, g.dp); }));
    g.dx0 = lambda;
    return g;
}

bool same_bits(const vec3& a, const vec3& b)
{
    return std::memcmp(a.data(), b.data(), sizeof(vec3)) == 0;
}

multilevel with_method(step_t steps, const cost_model& m, multilevel::method how,
                       multilevel::structure only = multilevel::structure::binomial, step_t size = 0)
{
    multilevel::options o;
    o.how = how;
    o.only = only;
    (only == multilevel::structure::grid ? o.grid : o.horizon) = size;
    return multilevel(steps, m, o);
}

} // namespace

BOOST_AUTO_TEST_CASE(lorenz_gradients_through_two_and_three_levels_are_bit_identical)
{
    const step_t steps = 2000;
    const cost_model all{{{"host", steps, 0, 0}}};
    const lorenz_result reference = lorenz_gradient(store_all(steps, steps - 1), all);
    const std::vector<cost_model> models{
        {{{"host", 3, 0, 0}, {"disk", inf, 2, 2}}, 1, 0},
        {{{"host", 2, 0.5, 0.5}, {"disk", 4, 3, 1}}, 1, 0},
        {{{"device", 2, 0, 0}, {"host", 3, 1, 1}, {"disk", inf, 6, 4}}, 1, 0},
        {{{"device", 1, 0, 0}, {"host", 2, 1, 2}, {"disk", 3, 4, 4}}, 1, 0},
    };
    using structure = multilevel::structure;
    for (const cost_model& m : models) {
        const structure outer = m.levels.back().slots == inf ? structure::spine : structure::nested;
        for (const auto& [plan, expected] :
             {std::pair{with_method(steps, m, multilevel::method::exact), structure::exact},
              std::pair{with_method(steps, m, multilevel::method::near_optimal, structure::grid, 30), structure::grid},
              std::pair{with_method(steps, m, multilevel::method::near_optimal, outer, 60), outer},
              std::pair{with_method(steps, m, multilevel::method::near_optimal, structure::layered, 60),
                        structure::layered}}) {
            // `only` falls back to another structure where the one asked for does not apply: not here.
            BOOST_TEST((plan.structure_used() == expected), static_cast<int>(expected));
            const lorenz_result g = lorenz_gradient(plan, m);
            BOOST_TEST_REQUIRE(same_bits(g.dx0, reference.dx0));
            BOOST_TEST_REQUIRE(same_bits(g.dp, reference.dp));
            const schedule_cost c = plan.cost();
            BOOST_TEST(g.report.forward_steps == c.forward_steps);
            BOOST_TEST(g.report.peak_slots == c.peak_slots);
            BOOST_TEST_REQUIRE(g.report.levels.size() == m.levels.size());
            for (std::size_t i = 0; i < m.levels.size(); ++i) {
                BOOST_TEST(g.report.levels[i].name == m.levels[i].name);
                BOOST_TEST(g.report.levels[i].stores == c.levels[i].stores);
                BOOST_TEST(g.report.levels[i].restores == c.levels[i].restores);
                BOOST_TEST(g.report.levels[i].peak_slots == c.levels[i].peak_slots);
                BOOST_TEST(g.report.levels[i].bytes_written == c.levels[i].stores * sizeof(vec3));
            }
        }
    }
}

BOOST_AUTO_TEST_CASE(burgers_gradient_through_host_and_disk_is_bit_identical)
{
    const examples::burgers model = test::small_burgers(96);
    const step_t steps = 300;
    auto gradient = [&](const auto& plan, const cost_model& levels) {
        layered_store store(levels);
        return test::burgers_gradient(model, plan, store).gradient;
    };
    const cost_model all{{{"host", steps, 0, 0}}};
    const std::vector<double> reference = gradient(store_all(steps, steps - 1), all);
    const cost_model two{{{"host", 2, 0, 0}, {"disk", inf, 1.5, 1.5}}, 1, 0};
    const std::vector<double> g = gradient(multilevel(steps, two), two);
    BOOST_TEST_REQUIRE(g.size() == reference.size());
    BOOST_TEST(test::same_bits(g, reference));
}
