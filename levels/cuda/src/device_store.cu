// remat::cuda::device_store, compiled once here for every program that links remat::cuda.
#include "remat/cuda/device_store.hpp"

namespace remat::cuda {

template class basic_device_store<gpu_runtime>;

} // namespace remat::cuda
