// The spiral trainer, written once and compiled per back end (trainer_cpu.cpp: Thrust CPP + OpenBLAS;
// trainer_cuda.cu: Thrust CUDA + cuBLAS).
//
// The model is dy/dt = f(y^3; p), an MLP fed the cubed state as in Chen et al. (cubed_input.hpp), solved by a
// fixed-step Runge–Kutta method over [0, t_end] with T steps. The batch holds `starts` trajectories: member j starts at
// the data point s_j (evenly spaced over the data, s_0 = 0 is y(0)) and is compared with the data at every step it has
// data for:
//     L = 1/M sum_{k=1..T} sum_j [s_j + k <= T] |y_{j,k} - d_{s_j + k}|^2      (M: the number of terms).
// Since f does not depend on t, member j's solve is the model's prediction from the state observed at
// t_{s_j}; the first member is the whole horizon from y(0). Every gradient integrates all T steps and
// runs their adjoint through remat::run, the snapshots kept by the chosen schedule and store.
#pragma once

#include "cubed_input.hpp"
#include "spiral_training.hpp"

#include "remat/dense/adam.hpp"
#include "remat/dense/blas.hpp"
#include "remat/dense/elementwise.hpp"
#include "remat/ode/error.hpp"
#include "remat/ode/fixed_step.hpp"
#include "remat/ode/mlp.hpp"
#include "remat/ode/mlp_layout.hpp"
#include "remat/ode/tableau.hpp"
#include <remat/remat.hpp>

#include "remat/cuda/host_level.hpp"
#include "remat/cuda/thrust_traits.hpp"
#if !REMAT_DEVICE_SYSTEM_HOST
#include "remat/cuda/copy.hpp"
#include "remat/cuda/device_store.hpp"
#endif
#if REMAT_EXAMPLE_HDF5
#include "remat/hdf5/hdf5_store.hpp"
#endif

#include <thrust/device_vector.h>
#include <thrust/functional.h>
#include <thrust/host_vector.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace remat::examples {

inline namespace REMAT_DENSE_BACKEND_NS {

namespace spiral_impl {

// The loss term of step k for element e (member e / 2, component e % 2), and its gradient.
struct residual {
    const double* y;
    const double* data;
    const std::int64_t* start;
    std::int64_t k;
    std::int64_t steps;
    REMAT_HOST_DEVICE bool valid(std::int64_t e) const { return start[e / 2] + k <= steps; }
    REMAT_HOST_DEVICE double operator()(std::int64_t e) const { return y[e] - data[2 * (start[e / 2] + k) + e % 2]; }
};
struct squared_residual {
    residual r;
    REMAT_HOST_DEVICE double operator()(std::int64_t e) const
    {
        if (!r.valid(e))
            return 0.0;
        const double d = r(e);
        return d * d;
    }
};
struct add_residual_gradient {
    residual r;
    double* a;
    double scale; // 2 / M
    REMAT_HOST_DEVICE void operator()(std::int64_t e) const
    {
        if (r.valid(e))
            a[e] += scale * r(e);
    }
};

inline std::string describe(double v)
{
    std::ostringstream s;
    s << v;
    return s.str();
}

} // namespace spiral_impl

/// Weights drawn from N(0, 0.1^2) and zero biases, as Chen et al. initialise their spiral network: with
/// inputs y^3 up to 8 in size the hidden units start in tanh's linear range.
inline std::vector<double> initial_parameters(const ode::mlp_layout& layout, std::uint64_t seed)
{
    std::vector<double> p(static_cast<std::size_t>(layout.parameter_count()), 0.0);
    std::mt19937_64 gen(seed);
    std::normal_distribution<double> weight(0.0, 0.1);
    for (const ode::mlp_layer& l : layout.layers())
        for (std::int64_t i = 0; i < l.in * l.out; ++i)
            p[static_cast<std::size_t>(l.w_offset + i)] = weight(gen);
    return p;
}

/// One model, its data and its gradient by remat::run.
class spiral_model {
public:
    using vector = thrust::device_vector<double>;

    spiral_model(const spiral_config& config, const spiral_data& data)
        : steps_(config.steps), layout_({.dim = 2, .hidden = config.hidden, .act = config.act, .time_input = false}),
          net_(blas_, layout_, shard_size(config)), field_(net_),
          solver_(ode::method(config.method), field_, blas_, 0.0, data.t_end / static_cast<double>(config.steps)),
          data_(data.y.begin(), data.y.end()), a_(static_cast<std::size_t>(field_.state_size())),
          p_bar_(static_cast<std::size_t>(field_.parameter_count()))
    {
        if (data.steps != config.steps)
            throw argument_error("spiral data over " + std::to_string(data.steps) + " steps for a solve of " +
                                 std::to_string(config.steps));
        if (config.starts < 1 || config.starts > config.steps)
            throw argument_error("--starts " + std::to_string(config.starts) + " (expected 1.." +
                                 std::to_string(config.steps) + ")");
        h_ = data.t_end / static_cast<double>(config.steps);
        // Every member counts in the normalisation (terms_, the horizon's weights); this process integrates
        // its shard [first_member, first_member + shard_size).
        std::vector<std::int64_t> starts;
        std::vector<double> y0;
        terms_ = 0;
        const std::int64_t shard_end = config.first_member + shard_size(config);
        for (std::int64_t j = 0; j < config.starts; ++j) {
            const std::int64_t s = j * (config.steps / config.starts);
            starts_host_.push_back(s);
            terms_ += config.steps - s; // steps k = 1..T - s have data
            if (j < config.first_member || j >= shard_end)
                continue;
            starts.push_back(s);
            const auto d = data.at(s);
            y0.insert(y0.end(), d.begin(), d.end());
        }
        set_horizon(0);
        starts_ = thrust::device_vector<std::int64_t>(starts.begin(), starts.end());
        y0_ = vector(y0.begin(), y0.end());
        net_.set_parameters(initial_parameters(layout_, config.seed));
    }

    /// The network (its parameters are the ones trained).
    [[nodiscard]] ode::mlp<double>& field() noexcept { return net_; }
    [[nodiscard]] dense::blas& blas() noexcept { return blas_; }
    [[nodiscard]] std::uint64_t state_bytes() const noexcept
    {
        return static_cast<std::uint64_t>(y0_.size()) * sizeof(double);
    }
    [[nodiscard]] std::int64_t steps() const noexcept { return steps_; }
    /// Weights the gradient's terms by w_k = exp(-k h / horizon) (time since each trajectory's start),
    /// normalised to sum 1; 0 or infinity: every term alike, the gradient of L itself.
    void set_horizon(double horizon)
    {
        horizon_ = horizon;
        weight_sum_ = 0;
        for (step_t k = 1; k <= steps_; ++k) {
            std::int64_t members = 0;
            for (std::int64_t s : starts_host_)
                members += s + k <= steps_ ? 1 : 0;
            weight_sum_ += weight(k) * static_cast<double>(members);
        }
    }
    /// dL/dp of the last gradient() (device memory).
    [[nodiscard]] const vector& gradient_vector() const noexcept { return p_bar_; }

    /// The members of the batch this process integrates (all but in data-parallel training); throws
    /// argument_error for a shard outside the batch.
    static std::int64_t shard_size(const spiral_config& config)
    {
        const std::int64_t size = config.members > 0 ? config.members : config.starts - config.first_member;
        if (config.first_member < 0 || config.members < 0 || size < 1 || config.first_member + size > config.starts)
            throw argument_error("a shard of " + std::to_string(config.members) + " members from member " +
                                 std::to_string(config.first_member) + " of a batch of " +
                                 std::to_string(config.starts));
        return size;
    }

    /// Data-parallel training: replaces this process's loss and dL/dp by their sums over the processes.
    double sum_over_ranks(double loss, const std::function<void(std::span<double>)>& sum)
    {
        thrust::host_vector<double> both(p_bar_.size() + 1);
        thrust::copy(p_bar_.begin(), p_bar_.end(), both.begin());
        both[p_bar_.size()] = loss;
        sum(std::span<double>(both.data(), both.size()));
        thrust::copy(both.begin(), both.begin() + static_cast<std::ptrdiff_t>(p_bar_.size()), p_bar_.begin());
        return both[p_bar_.size()];
    }

    /// L and dL/dp (into gradient_vector(); the gradient of the weighted loss while a horizon is set) at
    /// the current parameters, with `plan` and `store`.
    template <class Schedule, class Store>
    double gradient(const Schedule& plan, Store& store, run_report* report = nullptr)
    {
        vector y = y0_;
        dense::fill(blas_, dense::view(a_), 0.0);
        dense::fill(blas_, dense::view(p_bar_), 0.0);
        double loss = 0;
        const run_report r =
            remat::run(plan, store, y, remat::forward_step([&](step_t k, vector& s) { solver_.step(k, s); }),
                       remat::adjoint_step([&](step_t k, vector& s) {
                           solver_.adjoint_step(k, s, a_, p_bar_);
                           if (k > 0) {
                               loss += loss_term(k, s);
                               add_loss_gradient(k, s);
                           }
                       }),
                       remat::final_state([&](const vector& yT) { // x_T's term, before the first adjoint step
                           loss += loss_term(steps_, yT);
                           add_loss_gradient(steps_, yT);
                       }));
        if (report != nullptr)
            *report = r;
        if (!dense::all_finite(blas_, dense::view(std::as_const(p_bar_))))
            throw ode::numerical_error("the gradient dL/dp is not finite (loss " + spiral_impl::describe(loss) + ")");
        return loss;
    }

    /// L by a plain forward solve (no adjoint, nothing kept); `trajectory`, when given, receives member
    /// 0's state at every step (2 values each, y_0 first).
    double loss(std::vector<double>* trajectory = nullptr)
    {
        vector y = y0_;
        double total = 0;
        auto record = [&] {
            if (trajectory == nullptr)
                return;
            thrust::host_vector<double> h(y.begin(), y.begin() + 2);
            trajectory->insert(trajectory->end(), h.begin(), h.end());
        };
        record();
        for (step_t k = 0; k < steps_; ++k) {
            solver_.step(k, y);
            total += loss_term(k + 1, y);
            record();
        }
        return total;
    }

private:
    spiral_impl::residual residual_at(step_t k, const vector& y) const
    {
        return {thrust::raw_pointer_cast(y.data()), thrust::raw_pointer_cast(data_.data()),
                thrust::raw_pointer_cast(starts_.data()), k, steps_};
    }
    // L's term for the state y_k; numerical_error when it is not finite (the solve went wrong there).
    double loss_term(step_t k, const vector& y)
    {
        const double s =
            dense::transform_reduce(blas_, static_cast<std::int64_t>(y.size()),
                                    spiral_impl::squared_residual{residual_at(k, y)}, 0.0, thrust::plus<double>{});
        if (!std::isfinite(s))
            throw ode::numerical_error("the state y_" + std::to_string(k) +
                                       " at t = " + spiral_impl::describe(solver_.time(k)) +
                                       " is not finite (its loss term is " + spiral_impl::describe(s) + ")");
        return s / static_cast<double>(terms_);
    }
    [[nodiscard]] double weight(step_t k) const
    {
        return horizon_ > 0 && std::isfinite(horizon_) ? std::exp(-static_cast<double>(k) * h_ / horizon_) : 1.0;
    }
    void add_loss_gradient(step_t k, const vector& y)
    {
        dense::for_each_index(blas_, static_cast<std::int64_t>(y.size()),
                              spiral_impl::add_residual_gradient{residual_at(k, y), thrust::raw_pointer_cast(a_.data()),
                                                                 2.0 * weight(k) / weight_sum_});
    }

    std::int64_t steps_;
    dense::blas blas_;
    ode::mlp_layout layout_;
    ode::mlp<double> net_;
    cubed_input<double, ode::mlp<double>> field_;
    ode::fixed_step<double, cubed_input<double, ode::mlp<double>>> solver_;
    vector data_;
    thrust::device_vector<std::int64_t> starts_;
    vector y0_;
    vector a_;
    vector p_bar_;
    std::int64_t terms_ = 0;
    std::vector<std::int64_t> starts_host_;
    double h_ = 0;
    double horizon_ = 0;
    double weight_sum_ = 0;
};

/// Calls body(store) with the store `config` asks for, holding `slots` snapshots of `state_bytes` each.
template <class Body>
void with_store(const spiral_config& config, slot_t slots, std::uint64_t state_bytes, Body&& body)
{
    const level_capacity capacity{.slots = slots};
    switch (config.store) {
    case spiral_store::device: {
#if REMAT_DEVICE_SYSTEM_HOST
        // On the CPU back end "device" memory is host memory: the same RAM slots, named as asked.
        (void)state_bytes;
        host_store store(capacity, {.name = "device"});
#else
        cuda::device_store store(capacity, {.slot_bytes = static_cast<std::size_t>(state_bytes)});
#endif
        body(store);
        return;
    }
    case spiral_store::host: {
        host_store store(capacity, cuda::host_level_options());
        body(store);
        return;
    }
    case spiral_store::disk: {
#if REMAT_EXAMPLE_HDF5
        hdf5_store::options o;
        o.durable_writes = false; // scratch snapshots: the OS holding them is enough
#if !REMAT_DEVICE_SYSTEM_HOST
        o.copy = cuda::copier();
#endif
        hdf5_store store(config.disk_file, capacity, o);
        body(store);
        return;
#else
        throw argument_error("--store disk: this build has no HDF5 level (remat::hdf5 was not built)");
#endif
    }
    }
}

/// Calls body(plan) with the schedule `config` asks for over `steps` steps and `slots` slots.
template <class Body>
void with_schedule(const spiral_config& config, step_t steps, slot_t slots, Body&& body)
{
    switch (config.schedule) {
    case spiral_schedule::revolve:
        body(revolve(steps, slots));
        return;
    case spiral_schedule::uniform:
        body(uniform::fit(steps, slots));
        return;
    case spiral_schedule::store_all:
        body(store_all(steps, steps - 1));
        return;
    }
}

/// The slots the configuration allows (store-all: one per state x_0..x_{T-2}; a budget that holds fewer is a
/// remat::capacity_error, not a budget exceeded).
inline slot_t slots_for(const spiral_config& config, std::uint64_t state_bytes)
{
    const slot_t budget_slots =
        config.budget_bytes ? plan_for_budget(config.steps, *config.budget_bytes, state_bytes).slots : 0;
    if (config.schedule == spiral_schedule::store_all) {
        const slot_t all = config.steps - 1;
        if (config.budget_bytes && budget_slots < all)
            throw capacity_error("--schedule store-all keeps " + std::to_string(all) + " states of " +
                                 std::to_string(state_bytes) + " bytes (" +
                                 std::to_string(static_cast<std::uint64_t>(all) * state_bytes) +
                                 " bytes); a budget of " + std::to_string(*config.budget_bytes) + " bytes holds " +
                                 std::to_string(budget_slots) + " (use --schedule revolve)");
        return all;
    }
    if (config.budget_bytes)
        return budget_slots;
    return config.slots.value_or(50);
}

inline std::vector<double> host_copy(const thrust::device_vector<double>& v)
{
    thrust::host_vector<double> h = v;
    return {h.begin(), h.end()};
}

/// |g.d - fd| / |fd| for a random direction d, fd the central difference (L(p + eps d) - L(p - eps d)) / 2 eps
/// by plain forward solves. Leaves the parameters as they were.
inline double directional_check(spiral_model& model, const std::vector<double>& g, std::uint64_t seed)
{
    const std::vector<double> p0 = model.field().parameters_on_host();
    std::mt19937_64 gen(seed ^ 0x9e3779b97f4a7c15ULL);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<double> d(p0.size());
    double along = 0;
    for (std::size_t i = 0; i < d.size(); ++i) {
        d[i] = u(gen);
        along += g[i] * d[i];
    }
    constexpr double eps = 1e-6;
    auto loss_at = [&](double e) {
        std::vector<double> p = p0;
        for (std::size_t i = 0; i < p.size(); ++i)
            p[i] += e * d[i];
        model.field().set_parameters(p);
        return model.loss();
    };
    const double fd = (loss_at(eps) - loss_at(-eps)) / (2 * eps);
    model.field().set_parameters(p0);
    return std::abs(along - fd) / std::abs(fd);
}

/// The loss horizon of iteration i (1-based): from two steps (matching the data's local motion) growing
/// geometrically to config.horizon at the last iteration; 0 throughout when config.horizon is 0.
inline double horizon_at(const spiral_config& config, std::int64_t i)
{
    if (config.horizon <= 0)
        return 0;
    const double first = std::min(config.horizon, 2 * config.t_end / static_cast<double>(config.steps));
    const double share =
        config.iterations > 1 ? static_cast<double>(i - 1) / static_cast<double>(config.iterations - 1) : 1.0;
    return first * std::pow(config.horizon / first, share);
}

inline spiral_result train_spiral(const spiral_config& config, const spiral_data& data, const spiral_progress& progress)
{
    spiral_model model(config, data);
    dense::adam<double> optimiser(model.field().parameter_count(), {.learning_rate = config.learning_rate});
    spiral_result result;
    result.state_bytes = model.state_bytes();
    result.store_all_bytes = static_cast<std::uint64_t>(config.steps - 1) * result.state_bytes;
    result.slots = std::min<slot_t>(slots_for(config, result.state_bytes), config.steps - 1);
    run_report report;
    auto& params = model.field().parameters();
    with_store(config, result.slots, result.state_bytes, [&](auto& store) {
        with_schedule(config, config.steps, result.slots, [&](const auto& plan) {
            for (std::int64_t i = 1; i <= config.iterations; ++i) {
                if (!dense::all_finite(model.blas(), dense::view(std::as_const(params))))
                    throw ode::numerical_error("the parameters are not finite after " + std::to_string(i - 1) +
                                               " updates");
                model.set_horizon(horizon_at(config, i));
                double loss = model.gradient(plan, store, &report);
                if (config.sum_over_ranks)
                    loss = model.sum_over_ranks(loss, config.sum_over_ranks);
                result.losses.push_back(loss);
                // A cosine decay of the learning rate to 5% of its start: large steps early, fine ones at the end.
                const double progress_share = static_cast<double>(i - 1) / static_cast<double>(config.iterations);
                optimiser.set_learning_rate(config.learning_rate *
                                            (0.05 + 0.95 * 0.5 * (1 + std::cos(3.141592653589793 * progress_share))));
                optimiser.step(model.blas(), dense::view(params), dense::view(model.gradient_vector()));
                progress(i, loss);
            }
            // At the trained parameters: this schedule's gradient against a store-everything run's.
            model.set_horizon(0);
            const double loss = model.gradient(plan, store, &report);
            const std::vector<double> checkpointed = host_copy(model.gradient_vector());
            spiral_config everything = config;
            everything.store = spiral_store::device;
            double loss_all = 0;
            std::vector<double> reference;
            with_store(everything, config.steps - 1, result.state_bytes, [&](auto& all) {
                loss_all = model.gradient(store_all(config.steps, config.steps - 1), all);
                reference = host_copy(model.gradient_vector());
            });
            result.bit_identical_vs_store_all =
                loss == loss_all &&
                std::memcmp(checkpointed.data(), reference.data(), checkpointed.size() * sizeof(double)) == 0;
            result.final_loss = loss;
            result.grad_check_rel_err = directional_check(model, checkpointed, config.seed);
        });
    });
    result.forward_steps = report.forward_steps;
    result.peak_snapshot_bytes = report.peak_snapshot_bytes;
    (void)model.loss(&result.learned);
    result.parameters = model.field().parameters_on_host();
    return result;
}

} // namespace REMAT_DENSE_BACKEND_NS

} // namespace remat::examples
