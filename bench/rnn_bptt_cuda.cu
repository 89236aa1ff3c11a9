// bench/rnn_bptt on the GPU: Thrust's CUDA back end and cuBLAS, hidden states in device vectors,
// snapshots in remat::cuda::device_store.
#include "rnn_bptt_measure.hpp"

#include "remat/cuda/error.hpp"

#include <cuda_runtime_api.h>

#include <string>

namespace remat::bench {

rnn_bptt_result measure_rnn_bptt_on_cuda(const rnn_bptt_options& o)
{
    int devices = 0;
    const cudaError_t status = cudaGetDeviceCount(&devices);
    if (status != cudaSuccess)
        throw no_device_error(std::string("no usable CUDA device (cudaGetDeviceCount: ") + cudaGetErrorName(status) +
                              ": " + cudaGetErrorString(status) + ")");
    if (devices == 0)
        throw no_device_error("this machine has no CUDA device");
    int device = 0;
    cudaDeviceProp props{};
    if (cudaGetDevice(&device) != cudaSuccess || cudaGetDeviceProperties(&props, device) != cudaSuccess)
        throw cuda::cuda_error(static_cast<int>(cudaErrorInvalidDevice), "cannot query the current CUDA device");
    return measure_rnn_bptt(o, props.name);
}

} // namespace remat::bench
