// cuda_gradient: the back-end gradient on the GPU (Thrust's CUDA back end, cuBLAS).
#include "backend_gradient_impl.hpp"

namespace remat::test {

backend_gradient cuda_gradient(const ode_case& c)
{
    return compute_backend_gradient(c);
}

} // namespace remat::test
