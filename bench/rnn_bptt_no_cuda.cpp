// bench/rnn_bptt where this build has no CUDA: --device cuda is refused with the reason.
#include "rnn_bptt_rows.hpp"

namespace remat::bench {

rnn_bptt_result measure_rnn_bptt_on_cuda(const rnn_bptt_options&)
{
    throw no_device_error("this build has no CUDA (nvcc was not found when it was configured)");
}

} // namespace remat::bench
