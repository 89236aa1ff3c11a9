// remat/ode/vector_field.hpp — what the Runge–Kutta solvers need from a right-hand side f(t, y; p).
//
// A type F models vector_field<F, T> when, for f of type F, time t (T), views y, tape (const), dy, tape_out,
// y_bar, p_bar (remat/dense/matrix.hpp; device memory of this build):
//
//     | expression                                 | meaning                                               |
//     |--------------------------------------------|-------------------------------------------------------|
//     | f.state_size()                             | n, the length of y (every batch member together)      |
//     | f.parameter_count()                        | the length of p (and of p_bar)                        |
//     | f.tape_size()                              | elements one evaluation records for its VJP (may be 0)|
//     | f.evaluate(t, y, dy, tape_out)             | dy = f(t, y; p); records what vjp needs in tape_out   |
//     | f.vjp(t, y, tape, dy_bar, y_bar, p_bar)    | y_bar = (df/dy)^T dy_bar (overwritten);               |
//     |                                            | p_bar += (df/dp)^T dy_bar; tape is evaluate's at (t, y)|
//
// Work is enqueued on the field's own BLAS stream and may still run when a call returns; solvers use the
// same seam (remat::dense), so ordering is kept. y, dy and y_bar never alias.
#pragma once

#include "remat/dense/matrix.hpp"

#include <concepts>
#include <cstdint>

namespace remat::ode {

/// The contract of the table above, for element type T.
template <class F, class T>
concept vector_field = requires(F& f, const F& cf, T t, dense::vector_view<const T> in, dense::vector_view<T> out) {
    { cf.state_size() } -> std::convertible_to<std::int64_t>;
    { cf.parameter_count() } -> std::convertible_to<std::int64_t>;
    { cf.tape_size() } -> std::convertible_to<std::int64_t>;
    f.evaluate(t, in, out, out);
    f.vjp(t, in, in, in, out, out);
};

} // namespace remat::ode
