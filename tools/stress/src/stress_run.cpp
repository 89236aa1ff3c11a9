#include "stress_run.hpp"

#include "remat/detail/median_seconds.hpp"
#include "remat/detail/xxh64.hpp"
#include "remat/driver/resume.hpp"
#include "remat/driver/run.hpp"
#include "remat/error.hpp"
#include "remat/hdf5/hdf5_store.hpp"
#include "remat/schedule/multilevel.hpp"
#include "remat/schedule/multilevel_model.hpp"
#include "remat/schedule/revolve.hpp"
#include "remat/store/host_store.hpp"
#include "remat/store/tiered_store.hpp"
#if REMAT_STRESS_DEVICE
#include "remat/cuda/device_missing.hpp"
#include "remat/cuda/device_store.hpp"
#endif

#include "remat/hdf5_internal/fault_hook.hpp"

#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace remat::stress {
namespace {

// The forward and adjoint callables of one gradient: the adjoint seeds dJ/dx_T at its first call, from
// x_{T-1} (the terminal state is never stored).
struct loop {
    const reaction_diffusion& model;
    step_t steps;
    const round_hooks* hooks = nullptr;
    field scratch{};
    field lambda{};
    field last{};
    gradient g{};

    void forward(step_t k, field& x)
    {
        if (hooks != nullptr && hooks->on_forward)
            hooks->on_forward(k);
        model.step(x, scratch);
    }
    void adjoint(step_t k, field& x)
    {
        if (hooks != nullptr && hooks->on_adjoint)
            hooks->on_adjoint(k);
        if (k == steps - 1) {
            last = x;
            model.step(last, scratch);
            reaction_diffusion::seed(last, lambda, g.energy);
            field().swap(last);
        }
        model.adjoint(x, lambda, scratch, g);
    }
    gradient result()
    {
        g.dx0 = std::move(lambda);
        return std::move(g);
    }
};

multilevel plan_for(const round_setup& setup)
{
    std::vector<level_spec> levels;
    if (setup.device_slots > 0)
        levels.push_back({"device", setup.device_slots, setup.device_cost, setup.device_cost});
    levels.push_back({"host", setup.host_slots, 0, 0});
    levels.push_back({"disk", level_spec::unlimited, setup.disk_write_cost, setup.disk_read_cost});
    return multilevel(setup.steps, cost_model{levels});
}

// The tested run over `levels` (the file last), from x_0 or resumed from `point`.
template <class Store>
void run_tested(const multilevel& plan, const std::optional<resume_point>& point, const round_setup& setup,
                Store& levels, loop& l, field& x, tested_run& out)
{
    auto forward = [&](step_t k, field& s) { l.forward(k, s); };
    auto adjoint = [&](step_t k, field& s) { l.adjoint(k, s); };
    if (point) {
        for (const remat::store& h : point->held)
            levels.adopt(h.level, h.slot, h.step, setup.state_bytes);
        out.report = run_resumed(plan, *point, levels, x, remat::forward_step(forward), remat::adjoint_step(adjoint));
        out.resumed = true;
        out.resumed_from = point->step;
        out.forward_steps_saved = point->forward_steps_saved;
    } else {
        out.report = run(plan, levels, x, remat::forward_step(forward), remat::adjoint_step(adjoint));
    }
    levels.flush();
}

} // namespace

slot_t planned_disk_slots(const round_setup& setup)
{
    return plan_for(setup).cost().levels.back().peak_slots;
}

reaction_diffusion model_for(std::size_t state_bytes)
{
    reaction_diffusion m;
    m.points = state_bytes / sizeof(double);
    return m;
}

gradient reference_gradient(const round_setup& setup, capped_memory& memory)
{
    const reaction_diffusion model = model_for(setup.state_bytes);
    field x = model.initial(setup.seed);
    loop l{model, setup.steps};
    host_store ram(setup.reference_slots, {.memory = &memory});
    run(revolve(setup.steps, setup.reference_slots), ram, x,
        remat::forward_step([&](step_t k, field& s) { l.forward(k, s); }),
        remat::adjoint_step([&](step_t k, field& s) { l.adjoint(k, s); }));
    return l.result();
}

tested_run tested_gradient(const round_setup& setup, capped_memory& memory, const round_hooks& hooks)
{
    const reaction_diffusion model = model_for(setup.state_bytes);
    const multilevel plan = plan_for(setup);
    field x = model.initial(setup.seed);
    const std::string identity = run_identity(plan, x);
    // A file reused from an earlier round is opened as a resume would open it (its identity checked, its
    // records read), and then holds nothing.
    const bool reuse = !hooks.resume && setup.reuse_file && std::filesystem::exists(setup.file);
    hdf5_store::options disk_options{.mode = hooks.resume || reuse ? hdf5_store::open_mode::resume
                                                                   : hdf5_store::open_mode::replace,
                                     .element = hdf5_element::float64,
                                     .run_identity = identity};
    hdf5_store disk(setup.file, level_capacity{}, disk_options);
    detail::hdf5_store_access::set_fault_hook(disk, hooks.disk_faults);
    if (reuse)
        disk.release_all();

    tested_run out;
    std::optional<resume_point> point;
    const auto file_level = static_cast<level_t>(plan.cost().levels.size() - 1);
    if (hooks.resume) {
        // The last level is the file; RAM and GPU memory lost everything with the killed process.
        point = find_resume_point(plan, [&](level_t level, slot_t slot) {
            return level == file_level ? disk.snapshot_step(slot) : step_t{-1};
        });
        // The slots the killed run used: a multi-level plan's disk slots are below its peak.
        const slot_t disk_slots = plan.cost().levels.back().peak_slots;
        if (point)
            release_except(disk, disk_slots, *point, file_level);
        else
            disk.release_all();
    }
    const tier_options disk_tier{.asynchronous = true, .async = {.staging_buffers = setup.staging_buffers}};
    loop l{model, setup.steps, &hooks};
    if (setup.device_slots > 0) {
#if REMAT_STRESS_DEVICE
        tiered_store<timed_level<cuda::device_store>, timed_level<host_store>, timed_level<hdf5_store>> levels(
            {tier_options{}, tier_options{}, disk_tier},
            timed_level<cuda::device_store>(
                cuda::device_store(level_capacity{.slots = setup.device_slots}, {.slot_bytes = setup.state_bytes})),
            timed_level<host_store>(host_store(setup.host_slots, {.memory = &memory})),
            timed_level<hdf5_store>(std::move(disk)));
        run_tested(plan, point, setup, levels, l, x, out);
        out.times = {levels.level<0>().time(), levels.level<1>().time(), levels.level<2>().time()};
#else
        throw argument_error("device slots: " + device_level_missing());
#endif
    } else {
        tiered_store<timed_level<host_store>, timed_level<hdf5_store>> levels(
            {tier_options{}, disk_tier}, timed_level<host_store>(host_store(setup.host_slots, {.memory = &memory})),
            timed_level<hdf5_store>(std::move(disk)));
        run_tested(plan, point, setup, levels, l, x, out);
        out.times = {levels.level<0>().time(), levels.level<1>().time()};
    }
    out.g = l.result();
    return out;
}

double device_transfer_seconds(std::size_t state_bytes)
{
#if REMAT_STRESS_DEVICE
    cuda::device_store probe(level_capacity{.slots = 1}, {.slot_bytes = state_bytes});
    field x(state_bytes / sizeof(double), 1.0);
    const double pair = detail::median_seconds(
        5,
        [&](int i) {
            if (i > 0)
                probe.release(0); // the previous pair's snapshot, untimed
        },
        [&](int) {
            probe.write(0, 0, snapshot_traits<field>::bytes(std::as_const(x)));
            probe.read(0, 0, snapshot_traits<field>::bytes(x));
        });
    return pair / 2;
#else
    (void)state_bytes;
    throw argument_error("device slots: " + device_level_missing());
#endif
}

std::string device_level_missing()
{
#if REMAT_STRESS_DEVICE
    return cuda::device_missing();
#else
    return "this build has no device level (remat::cuda was not built: nvcc was not found)";
#endif
}

bool same_bits(const gradient& a, const gradient& b)
{
    return a.dx0.size() == b.dx0.size() &&
           std::memcmp(a.dx0.data(), b.dx0.data(), a.dx0.size() * sizeof(double)) == 0 &&
           std::memcmp(&a.da, &b.da, sizeof(double)) == 0 && std::memcmp(&a.db, &b.db, sizeof(double)) == 0 &&
           std::memcmp(&a.energy, &b.energy, sizeof(double)) == 0;
}

std::uint64_t gradient_hash(const gradient& g)
{
    detail::xxh64_state h;
    h.update(g.dx0.data(), g.dx0.size() * sizeof(double));
    h.update(&g.da, sizeof g.da);
    h.update(&g.db, sizeof g.db);
    h.update(&g.energy, sizeof g.energy);
    return h.digest();
}

} // namespace remat::stress
