// bench/rnn_bptt on the GPU: Thrust's CUDA back end and cuBLAS, hidden states in device vectors,
// snapshots in remat::cuda::device_store.
#include "rnn_bptt_measure.hpp"

#include "remat/cuda/device_missing.hpp"
#include "remat/cuda/error.hpp"

#include <cuda_runtime_api.h>

#include <string>

namespace remat::bench {

rnn_bptt_result measure_rnn_bptt_on_cuda(const rnn_bptt_options& o)
{
    if (const std::string why = cuda::device_missing(); !why.empty())
        throw no_device_error(why);
    int device = 0;
    cudaDeviceProp props{};
    if (cudaGetDevice(&device) != cudaSuccess || cudaGetDeviceProperties(&props, device) != cudaSuccess)
        throw cuda::cuda_error(static_cast<int>(cudaErrorInvalidDevice), "cannot query the current CUDA device");
    return measure_rnn_bptt(o, props.name);
}

} // namespace remat::bench
