// cpu_gradient: the back-end gradient on Thrust's CPP back end with OpenBLAS.
#include "backend_gradient_impl.hpp"

namespace remat::test {

backend_gradient cpu_gradient(const ode_case& c)
{
    return compute_backend_gradient(c);
}

} // namespace remat::test
