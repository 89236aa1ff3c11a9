// cpu_rnn_gradient: the back-end gradient on the CPU (Thrust's CPP back end, OpenBLAS).
#include "backend_gradient_impl.hpp"

namespace remat::test {

rnn_backend_gradient cpu_rnn_gradient(const rnn_case& c)
{
    return compute_rnn_backend_gradient(c);
}

} // namespace remat::test
