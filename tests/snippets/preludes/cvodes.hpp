// The backward problem's callables (Roberts' adjoint as in examples/roberts.hpp), any signature CVODES's
// adapter accepts.
const auto adjoint_rhs = [](auto&&...) {};
const auto adjoint_jacobian = [](auto&&...) {};
const auto gradient_integrand = [](auto&&...) {};
