// A vector field on y^3: g(t, y) = f(t, y^3) for any remat::ode::vector_field f, as Chen et al. (2018)
// fed their spiral network (net(y**3)). Its VJP follows the chain rule: y_bar = 3 y^2 (df/dz)^T dy_bar.
// The example composes it with the MLP; any field could be wrapped the same way.
#pragma once

#include "remat/cuda/config.hpp"
#include "remat/dense/blas.hpp"
#include "remat/dense/elementwise.hpp"
#include "remat/dense/matrix.hpp"
#include "remat/ode/vector_field.hpp"

#include <cstdint>

namespace remat::examples {

inline namespace REMAT_DENSE_BACKEND_NS {

namespace cubed_impl {
template <class T>
struct cube_fn {
    const T* y;
    T* z;
    REMAT_HOST_DEVICE void operator()(std::int64_t i) const { z[i] = y[i] * y[i] * y[i]; }
};
template <class T>
struct chain_fn {
    const T* y;
    T* y_bar;
    REMAT_HOST_DEVICE void operator()(std::int64_t i) const { y_bar[i] *= T(3) * y[i] * y[i]; }
};
} // namespace cubed_impl

/// g(t, y; p) = f(t, y^3; p) (models vector_field<cubed_input<F, T>, T>). The tape holds y^3 and f's tape.
///
///     remat::ode::mlp<double> net(b, layout, batch);
///     remat::examples::cubed_input<double, remat::ode::mlp<double>> f(net);
template <class T, class F>
    requires ode::vector_field<F, T>
class cubed_input {
public:
    explicit cubed_input(F& inner) : inner_(&inner) {}

    [[nodiscard]] std::int64_t state_size() const { return inner_->state_size(); }
    [[nodiscard]] std::int64_t parameter_count() const { return inner_->parameter_count(); }
    [[nodiscard]] std::int64_t tape_size() const { return state_size() + inner_->tape_size(); }

    void evaluate(T t, dense::vector_view<const T> y, dense::vector_view<T> dy, dense::vector_view<T> tape)
    {
        const std::int64_t n = state_size();
        dense::for_each_index(inner_->blas(), n, cubed_impl::cube_fn<T>{y.data, tape.data});
        inner_->evaluate(t, dense::vector_view<const T>{tape.data, n}, dy,
                         dense::vector_view<T>{tape.data + n, tape.size - n});
    }
    void vjp(T t, dense::vector_view<const T> y, dense::vector_view<const T> tape, dense::vector_view<const T> dy_bar,
             dense::vector_view<T> y_bar, dense::vector_view<T> p_bar)
    {
        const std::int64_t n = state_size();
        inner_->vjp(t, dense::vector_view<const T>{tape.data, n},
                    dense::vector_view<const T>{tape.data + n, tape.size - n}, dy_bar, y_bar, p_bar);
        dense::for_each_index(inner_->blas(), n, cubed_impl::chain_fn<T>{y.data, y_bar.data});
    }

private:
    F* inner_;
};

} // namespace REMAT_DENSE_BACKEND_NS

} // namespace remat::examples
