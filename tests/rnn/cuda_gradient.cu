// cuda_rnn_gradient: the back-end gradient on the GPU (Thrust's CUDA back end, cuBLAS).
#include "backend_gradient_impl.hpp"

namespace remat::test {

rnn_backend_gradient cuda_rnn_gradient(const rnn_case& c)
{
    return compute_rnn_backend_gradient(c);
}

} // namespace remat::test
