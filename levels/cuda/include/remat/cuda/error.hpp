// remat/cuda/error.hpp — the exception for a failed CUDA runtime call.
#pragma once

#include "remat/error.hpp"

#include <string>

namespace remat::cuda {

/// A CUDA runtime call failed. The message names the call, the error's name and its description;
/// code() is the cudaError_t value. (Running out of device or pinned memory is a remat::capacity_error.)
///
///     try { remat::cuda::stream s; } catch (const remat::cuda::cuda_error& e) { std::puts(e.what()); }
class cuda_error : public error {
public:
    cuda_error(int code, const std::string& what) : error(what), code_(code) {}
    [[nodiscard]] int code() const noexcept { return code_; }

private:
    int code_;
};

} // namespace remat::cuda
