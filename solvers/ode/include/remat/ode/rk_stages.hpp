// remat/ode/rk_stages.hpp — one explicit Runge–Kutta step and its exact discrete adjoint, for any tableau
// and any vector field: the building block of the fixed-step and adaptive solvers.
//
// Forward (docs/neural_ode.md): K_i = f(t + c_i h, Y_i),  Y_i = y + h sum_{j<i} a_ij K_j,
//                                y_new = y + h sum_i b_i K_i.
// Adjoint, with a = dL/dy_new given, for i = s-1 down to 0 over the stages that contribute to y_new:
//     K_bar_i = h (b_i a + sum_{l>i} a_li Y_bar_l),
//     Y_bar_i = (df/dy)^T(t + c_i h, Y_i) K_bar_i,     p_bar += (df/dp)^T(t + c_i h, Y_i) K_bar_i,
// and then dL/dy = a + sum_i Y_bar_i. t and h are constants (step sizes are not differentiated).
#pragma once

#include "remat/dense/blas.hpp"
#include "remat/dense/elementwise.hpp"
#include "remat/dense/matrix.hpp"
#include "remat/error.hpp"
#include "remat/ode/detail/stage_kernels.hpp"
#include "remat/ode/tableau.hpp"
#include "remat/ode/vector_field.hpp"

#include <thrust/device_vector.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace remat::ode {

inline namespace REMAT_DENSE_BACKEND_NS {

/// The stages of one step of `method` for `field`, with the workspace they need (allocated once, in the
/// constructor: about 3 s n + s tape elements for s stages, n = field.state_size()). Not thread-safe;
/// the field and the BLAS must outlive it (the method is copied).
///
///     remat::ode::rk_stages<double, remat::ode::mlp<double>> rk(remat::ode::rk4(), f, b);
///     rk.compute(t, h, y, /*record=*/false);
///     rk.solution(h, y, y);                       // y <- y_new
template <class T, class Field>
    requires vector_field<Field, T>
class rk_stages {
public:
    rk_stages(const tableau& method, Field& field, dense::blas& b)
        : method_(checked(method)), field_(&field), blas_(&b), n_(field.state_size()), tape_size_(field.tape_size()),
          k_(size(method_.stages, n_)), y_(size(method_.stages, n_)), y_bar_(size(method_.stages, n_)),
          k_bar_(static_cast<std::size_t>(n_)), tape_(size(method_.stages, tape_size_))
    {
        for (int i = 0; i < method_.stages; ++i)
            contributes_.push_back(method_.contributes(i));
    }

    [[nodiscard]] const tableau& method() const noexcept { return method_; }
    [[nodiscard]] std::int64_t state_size() const noexcept { return n_; }

    /// K_i for every stage at (t, h) from y. With `all_stages` false, stages that do not contribute to
    /// y_new are skipped (fixed steps); adaptive steps need them for the error estimate. With `record`,
    /// every stage keeps its input and tape for backprop().
    void compute(T t, T h, dense::vector_view<const T> y, bool record, bool all_stages = false)
    {
        dense::detail::check_same_size("rk_stages::compute", "the state length", n_, y.size);
        for (int i = 0; i < method_.stages; ++i) {
            if (!all_stages && !contributes_[static_cast<std::size_t>(i)])
                continue;
            dense::vector_view<const T> input = y;
            if (i > 0) {
                // Without recording one buffer serves every stage's input.
                const dense::vector_view<T> yi = stage(y_, record ? i : 0, n_);
                rk_impl::combination<T> c{.out = yi.data, .base = y.data, .scale = h};
                for (int j = 0; j < i; ++j)
                    c.add(stage(k_, j, n_).data,
                          static_cast<T>(method_.a[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)]));
                rk_impl::apply(*blas_, n_, c);
                input = yi;
            }
            if (record && i == 0)
                dense::copy(*blas_, y, stage(y_, 0, n_)); // y may change before backprop()
            field_->evaluate(static_cast<T>(t + static_cast<T>(method_.c[static_cast<std::size_t>(i)]) * h), input,
                             stage(k_, i, n_), stage(tape_, record ? i : 0, tape_size_));
        }
    }

    /// out = y + h sum_i b_i K_i (out may be y itself).
    void solution(T h, dense::vector_view<const T> y, dense::vector_view<T> out) { combine(method_.b, h, y.data, out); }

    /// out = h sum_i e_i K_i, the embedded pair's error estimate (the method must have one).
    void error_estimate(T h, dense::vector_view<T> out)
    {
        if (!method_.embedded())
            throw argument_error("method " + method_.name + " has no embedded error estimate");
        combine(method_.e, h, nullptr, out);
    }

    /// With the stages recorded by compute(t, h, y_k, true): a <- dL/dy_k from a == dL/dy_{k+1}, and
    /// p_bar += dL/dp for this step.
    void backprop(T t, T h, dense::vector_view<T> a, dense::vector_view<T> p_bar)
    {
        dense::detail::check_same_size("rk_stages::backprop", "the adjoint length", n_, a.size);
        const dense::vector_view<T> k_bar{thrust::raw_pointer_cast(k_bar_.data()), n_};
        for (int i = method_.stages; i-- > 0;) {
            if (!contributes_[static_cast<std::size_t>(i)])
                continue;
            rk_impl::combination<T> c{.out = k_bar.data, .base = nullptr, .scale = h};
            c.add(a.data, static_cast<T>(method_.b[static_cast<std::size_t>(i)]));
            for (int l = i + 1; l < method_.stages; ++l)
                if (contributes_[static_cast<std::size_t>(l)])
                    c.add(stage(y_bar_, l, n_).data,
                          static_cast<T>(method_.a[static_cast<std::size_t>(l)][static_cast<std::size_t>(i)]));
            if (c.count == 0) {
                dense::fill(*blas_, stage(y_bar_, i, n_), T(0));
            } else {
                rk_impl::apply(*blas_, n_, c);
                field_->vjp(static_cast<T>(t + static_cast<T>(method_.c[static_cast<std::size_t>(i)]) * h),
                            dense::vector_view<const T>(stage(y_, i, n_)),
                            dense::vector_view<const T>(stage(tape_, i, tape_size_)),
                            dense::vector_view<const T>(k_bar), stage(y_bar_, i, n_), p_bar);
            }
        }
        // dL/dy_k = a + sum_i Y_bar_i, in stage order.
        rk_impl::combination<T> total{.out = a.data, .base = a.data, .scale = T(1)};
        for (int i = 0; i < method_.stages; ++i)
            if (contributes_[static_cast<std::size_t>(i)])
                total.add(stage(y_bar_, i, n_).data, T(1));
        rk_impl::apply(*blas_, n_, total);
    }

private:
    // The method, refused unless its coefficients fit its stages (a user's own tableau was read past its
    // vectors) and are finite.
    static const tableau& checked(const tableau& m)
    {
        const std::string who = "method " + m.name;
        if (m.stages < 1 || m.stages > rk_impl::max_terms)
            throw argument_error(who + " has " + std::to_string(m.stages) + " stages (expected 1.." +
                                 std::to_string(rk_impl::max_terms) + ")");
        const auto stages = static_cast<std::size_t>(m.stages);
        auto check = [&](const std::vector<double>& v, const std::string& what, std::size_t expected) {
            if (v.size() != expected)
                throw argument_error(who + ": " + what + " has " + std::to_string(v.size()) +
                                     " coefficients (expected " + std::to_string(expected) + ")");
            for (const double x : v)
                if (!std::isfinite(x))
                    throw argument_error(who + ": " + what + " has the coefficient " + std::to_string(x) +
                                         " (expected finite numbers)");
        };
        if (m.a.size() != stages)
            throw argument_error(who + ": a has " + std::to_string(m.a.size()) + " rows (expected " +
                                 std::to_string(stages) + ")");
        for (std::size_t i = 0; i < stages; ++i)
            check(m.a[i], "row " + std::to_string(i) + " of a", i);
        check(m.b, "b", stages);
        check(m.c, "c", stages);
        if (m.embedded())
            check(m.e, "e", stages);
        return m;
    }
    static std::size_t size(int stages, std::int64_t n)
    {
        return static_cast<std::size_t>(stages) * static_cast<std::size_t>(n);
    }
    dense::vector_view<T> stage(thrust::device_vector<T>& v, int i, std::int64_t n)
    {
        return {thrust::raw_pointer_cast(v.data()) + static_cast<std::int64_t>(i) * n, n};
    }
    void combine(const std::vector<double>& weights, T h, const T* base, dense::vector_view<T> out)
    {
        dense::detail::check_same_size("rk_stages", "the output length", n_, out.size);
        rk_impl::combination<T> c{.out = out.data, .base = base, .scale = h};
        for (int i = 0; i < method_.stages; ++i)
            c.add(stage(k_, i, n_).data, static_cast<T>(weights[static_cast<std::size_t>(i)]));
        rk_impl::apply(*blas_, n_, c);
    }

    tableau method_; // a copy: a caller's own tableau may be a temporary
    Field* field_;
    dense::blas* blas_;
    std::int64_t n_;
    std::int64_t tape_size_;
    std::vector<bool> contributes_;
    thrust::device_vector<T> k_;     // K_i, stage by stage
    thrust::device_vector<T> y_;     // Y_i (recorded) or the current stage's input
    thrust::device_vector<T> y_bar_; // Y_bar_i
    thrust::device_vector<T> k_bar_; // K_bar of the stage being propagated
    thrust::device_vector<T> tape_;  // each stage's tape (recorded) or the current one
};

} // namespace REMAT_DENSE_BACKEND_NS

} // namespace remat::ode
