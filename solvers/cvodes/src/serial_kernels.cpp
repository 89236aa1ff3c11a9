// The compiled serial kernels (serial_kernels.hpp). Each follows SUNDIALS 6.4's N_V*_Serial case for case;
// this file is compiled with -ffp-contract=off (CMakeLists.txt), so no multiply and add fuse into one
// rounding that the library's unfused code does not make.
#include "serial_kernels.hpp"

#include <nvector/nvector_serial.h>

#include <cmath>

namespace remat::cvodes::detail {
namespace {

struct view {
    sunindextype n;
    double* data;
};

view of(N_Vector v) noexcept
{
    const auto* c = static_cast<const _N_VectorContent_Serial*>(v->content);
    return {c->length, c->data};
}

// y <- a x + y, with SUNDIALS's cases a = 1 and a = -1 (no multiplication).
void axpy(double a, const double* x, double* y, sunindextype n) noexcept
{
    if (a == 1.0) {
        for (sunindextype i = 0; i < n; ++i)
            y[i] += x[i];
    } else if (a == -1.0) {
        for (sunindextype i = 0; i < n; ++i)
            y[i] -= x[i];
    } else {
        for (sunindextype i = 0; i < n; ++i)
            y[i] += a * x[i];
    }
}

// z = op(x_i, y_i) for every i.
template <class Op>
void each(const double* x, const double* y, double* z, sunindextype n, Op op) noexcept
{
    for (sunindextype i = 0; i < n; ++i)
        z[i] = op(x[i], y[i]);
}

// SUNDIALS's order of cases: the in-place axpys, then a = b = 1, the differences, a or b = 1, a or b = -1,
// a = b, a = -b, and the general a x + b y.
void linear_sum(sunrealtype a, N_Vector x, sunrealtype b, N_Vector y, N_Vector z)
{
    const auto [n, xd] = of(x);
    const double* yd = of(y).data;
    double* zd = of(z).data;
    if (b == 1.0 && z == y)
        return axpy(a, xd, zd, n);
    if (a == 1.0 && z == x)
        return axpy(b, yd, zd, n);
    if (a == 1.0 && b == 1.0)
        return each(xd, yd, zd, n, [](double u, double v) { return u + v; });
    if (a == 1.0 && b == -1.0)
        return each(xd, yd, zd, n, [](double u, double v) { return u - v; });
    if (a == -1.0 && b == 1.0)
        return each(xd, yd, zd, n, [](double u, double v) { return v - u; });
    if (a == 1.0)
        return each(xd, yd, zd, n, [b](double u, double v) { return b * v + u; });
    if (b == 1.0)
        return each(xd, yd, zd, n, [a](double u, double v) { return a * u + v; });
    if (a == -1.0)
        return each(xd, yd, zd, n, [b](double u, double v) { return b * v - u; });
    if (b == -1.0)
        return each(xd, yd, zd, n, [a](double u, double v) { return a * u - v; });
    if (a == b)
        return each(xd, yd, zd, n, [a](double u, double v) { return a * (u + v); });
    if (a == -b)
        return each(xd, yd, zd, n, [a](double u, double v) { return a * (u - v); });
    each(xd, yd, zd, n, [a, b](double u, double v) { return a * u + b * v; });
}

void constant(sunrealtype c, N_Vector z)
{
    const auto [n, zd] = of(z);
    for (sunindextype i = 0; i < n; ++i)
        zd[i] = c;
}

void product(N_Vector x, N_Vector y, N_Vector z)
{
    const auto [n, xd] = of(x);
    each(xd, of(y).data, of(z).data, n, [](double u, double v) { return u * v; });
}

void quotient(N_Vector x, N_Vector y, N_Vector z)
{
    const auto [n, xd] = of(x);
    each(xd, of(y).data, of(z).data, n, [](double u, double v) { return u / v; });
}

// In place for any c; otherwise a copy for 1, a negation for -1, the product for the rest.
void scale(sunrealtype c, N_Vector x, N_Vector z)
{
    const auto [n, xd] = of(x);
    double* zd = of(z).data;
    if (z == x) {
        for (sunindextype i = 0; i < n; ++i)
            zd[i] *= c;
    } else if (c == 1.0) {
        for (sunindextype i = 0; i < n; ++i)
            zd[i] = xd[i];
    } else if (c == -1.0) {
        for (sunindextype i = 0; i < n; ++i)
            zd[i] = -xd[i];
    } else {
        for (sunindextype i = 0; i < n; ++i)
            zd[i] = c * xd[i];
    }
}

void absolute(N_Vector x, N_Vector z)
{
    const auto [n, xd] = of(x);
    double* zd = of(z).data;
    for (sunindextype i = 0; i < n; ++i)
        zd[i] = std::fabs(xd[i]);
}

void inverse(N_Vector x, N_Vector z)
{
    const auto [n, xd] = of(x);
    double* zd = of(z).data;
    for (sunindextype i = 0; i < n; ++i)
        zd[i] = 1.0 / xd[i];
}

void add_constant(N_Vector x, sunrealtype b, N_Vector z)
{
    const auto [n, xd] = of(x);
    double* zd = of(z).data;
    for (sunindextype i = 0; i < n; ++i)
        zd[i] = xd[i] + b;
}

// The reductions sum from the first element to the last, as SUNDIALS does (no reassociation: the
// compiler keeps the order without -ffast-math, so these stay scalar and latency-bound).
sunrealtype dot(N_Vector x, N_Vector y)
{
    const auto [n, xd] = of(x);
    const double* yd = of(y).data;
    double sum = 0;
    for (sunindextype i = 0; i < n; ++i)
        sum += xd[i] * yd[i];
    return sum;
}

sunrealtype max_norm(N_Vector x)
{
    const auto [n, xd] = of(x);
    double max = 0;
    for (sunindextype i = 0; i < n; ++i)
        if (std::fabs(xd[i]) > max)
            max = std::fabs(xd[i]);
    return max;
}

// sqrt(sum (x_i w_i)^2 / n), 0 for a sum <= 0 (SUNRsqrt).
sunrealtype wrms_norm(N_Vector x, N_Vector w)
{
    const auto [n, xd] = of(x);
    const double* wd = of(w).data;
    double sum = 0;
    for (sunindextype i = 0; i < n; ++i) {
        const double p = xd[i] * wd[i];
        sum += p * p;
    }
    const double mean = sum / static_cast<double>(n);
    return mean <= 0 ? 0.0 : std::sqrt(mean);
}

} // namespace

void use_compiled_kernels(N_Vector v) noexcept
{
    v->ops->nvlinearsum = linear_sum;
    v->ops->nvconst = constant;
    v->ops->nvprod = product;
    v->ops->nvdiv = quotient;
    v->ops->nvscale = scale;
    v->ops->nvabs = absolute;
    v->ops->nvinv = inverse;
    v->ops->nvaddconst = add_constant;
    v->ops->nvdotprod = dot;
    v->ops->nvmaxnorm = max_norm;
    v->ops->nvwrmsnorm = wrms_norm;
}

} // namespace remat::cvodes::detail
