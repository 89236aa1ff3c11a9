// One neural-ODE gradient computed by each back end of this build (tests only): the same source compiled
// by the host compiler for Thrust's CPP back end (cpu_gradient.cpp) and by nvcc for CUDA
// (cuda_gradient.cu), behind plain types, so that one test program compares the two.
#pragma once

#include "remat/ode/mlp_layout.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace remat::test {

struct ode_case {
    ode::mlp_shape shape;
    std::int64_t batch = 1;
    std::int64_t steps = 1;
    double h = 0.05;
    std::string method = "rk4";
    std::uint64_t seed = 1;
};

struct backend_gradient {
    std::vector<double> y0;
    std::vector<double> params;
    double loss = 0;
};

/// The quadratic problem's loss and store-everything gradient on the CPU (Thrust CPP, OpenBLAS).
backend_gradient cpu_gradient(const ode_case& c);
/// The same on the GPU (Thrust CUDA, cuBLAS); needs a CUDA device.
backend_gradient cuda_gradient(const ode_case& c);

} // namespace remat::test
