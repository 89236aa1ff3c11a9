// The Butcher tableaus of Euler, RK4 and Dormand–Prince 5(4) (coefficients from Dormand & Prince 1980,
// J. Comput. Appl. Math. 6(1), table 2; Hairer, Nørsett & Wanner, Solving ODEs I, table II.5.2).
#include "remat/ode/tableau.hpp"
#include "remat/error.hpp"

#include <string>

namespace remat::ode {

bool tableau::contributes(int stage) const
{
    if (stage < 0 || stage >= stages)
        throw argument_error("stage " + std::to_string(stage) + " of " + name + " (expected 0.." +
                             std::to_string(stages - 1) + ")");
    if (b[static_cast<std::size_t>(stage)] != 0.0)
        return true;
    for (int later = stage + 1; later < stages; ++later)
        if (a[static_cast<std::size_t>(later)][static_cast<std::size_t>(stage)] != 0.0 && contributes(later))
            return true;
    return false;
}

const tableau& euler()
{
    static const tableau t{.name = "euler", .stages = 1, .order = 1, .a = {{}}, .b = {1.0}, .c = {0.0}};
    return t;
}

const tableau& rk4()
{
    static const tableau t{.name = "rk4",
                           .stages = 4,
                           .order = 4,
                           .a = {{}, {0.5}, {0.0, 0.5}, {0.0, 0.0, 1.0}},
                           .b = {1.0 / 6.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 6.0},
                           .c = {0.0, 0.5, 0.5, 1.0}};
    return t;
}

const tableau& dopri5()
{
    static const tableau t = [] {
        tableau m{.name = "dopri5", .stages = 7, .order = 5};
        m.a = {{},
               {1.0 / 5.0},
               {3.0 / 40.0, 9.0 / 40.0},
               {44.0 / 45.0, -56.0 / 15.0, 32.0 / 9.0},
               {19372.0 / 6561.0, -25360.0 / 2187.0, 64448.0 / 6561.0, -212.0 / 729.0},
               {9017.0 / 3168.0, -355.0 / 33.0, 46732.0 / 5247.0, 49.0 / 176.0, -5103.0 / 18656.0},
               {35.0 / 384.0, 0.0, 500.0 / 1113.0, 125.0 / 192.0, -2187.0 / 6784.0, 11.0 / 84.0}};
        m.b = {35.0 / 384.0, 0.0, 500.0 / 1113.0, 125.0 / 192.0, -2187.0 / 6784.0, 11.0 / 84.0, 0.0};
        m.c = {0.0, 1.0 / 5.0, 3.0 / 10.0, 4.0 / 5.0, 8.0 / 9.0, 1.0, 1.0};
        // b_hat (order 4): 5179/57600, 0, 7571/16695, 393/640, -92097/339200, 187/2100, 1/40.
        const double b_hat[] = {5179.0 / 57600.0, 0.0,       7571.0 / 16695.0, 393.0 / 640.0, -92097.0 / 339200.0,
                                187.0 / 2100.0,   1.0 / 40.0};
        for (int i = 0; i < 7; ++i)
            m.e.push_back(m.b[static_cast<std::size_t>(i)] - b_hat[i]);
        m.error_order = 4;
        return m;
    }();
    return t;
}

const tableau& method(std::string_view name)
{
    for (const tableau* t : {&euler(), &rk4(), &dopri5()})
        if (name == t->name)
            return *t;
    throw argument_error("unknown method '" + std::string(name) + "' (expected euler, rk4 or dopri5)");
}

} // namespace remat::ode
