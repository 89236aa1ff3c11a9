#include "test_kernels.hpp"

#include "remat/cuda/detail/check.hpp"

#include <atomic>

namespace remat::test {
namespace {

constexpr unsigned threads = 256;

unsigned blocks_for(std::size_t n)
{
    const std::size_t b = (n + threads - 1) / threads;
    return static_cast<unsigned>(b == 0 ? 1 : (b > 1024 ? 1024 : b));
}

__global__ void fill_kernel(double* dst, std::size_t n, double base)
{
    for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
         i += std::size_t{gridDim.x} * blockDim.x)
        dst[i] = base + static_cast<double>(i);
}

__global__ void copy_kernel(double* dst, const double* src, std::size_t n)
{
    for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
         i += std::size_t{gridDim.x} * blockDim.x)
        dst[i] = src[i];
}

// Thread 0 of every block spins on the flag (about ten seconds at most), then the block works.
__global__ void gate_kernel(const volatile int* flag, int* timed_out, double* dst, const double* src, std::size_t n,
                            double base, bool fill)
{
    if (threadIdx.x == 0) {
        const long long start = clock64();
        const long long limit = 20'000'000'000LL; // cycles: ~10 s at 2 GHz
        while (*flag == 0) {
            if (clock64() - start > limit) {
                atomicExch(timed_out, 1);
                break;
            }
            __nanosleep(1000);
        }
    }
    __syncthreads();
    for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
         i += std::size_t{gridDim.x} * blockDim.x)
        dst[i] = fill ? base + static_cast<double>(i) : src[i];
}

__global__ void spin_kernel(long long cycles)
{
    const long long start = clock64();
    while (clock64() - start < cycles) {
    }
}

} // namespace

void spin(long long cycles, cudaStream_t s)
{
    spin_kernel<<<1, 1, 0, s>>>(cycles);
    cuda::detail::check(cudaGetLastError(), "spin_kernel launch");
}

void fill(double* dst, std::size_t n, double base, cudaStream_t s)
{
    fill_kernel<<<blocks_for(n), threads, 0, s>>>(dst, n, base);
    cuda::detail::check(cudaGetLastError(), "fill_kernel launch");
}

void copy(double* dst, const double* src, std::size_t n, cudaStream_t s)
{
    copy_kernel<<<blocks_for(n), threads, 0, s>>>(dst, src, n);
    cuda::detail::check(cudaGetLastError(), "copy_kernel launch");
}

std::vector<double> pattern(std::size_t n, double base)
{
    std::vector<double> v(n);
    for (std::size_t i = 0; i < n; ++i)
        v[i] = base + static_cast<double>(i);
    return v;
}

std::vector<double> to_host(const double* src, std::size_t n)
{
    std::vector<double> v(n);
    cuda::detail::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    cuda::detail::check(cudaMemcpy(v.data(), src, n * sizeof(double), cudaMemcpyDefault), "cudaMemcpy");
    return v;
}

gate::gate() : memory_(2 * sizeof(int), cudaHostAllocMapped)
{
    host_ = reinterpret_cast<int*>(memory_.data());
    host_[0] = 0;
    host_[1] = 0;
    void* device = nullptr;
    cuda::detail::check(cudaHostGetDevicePointer(&device, memory_.data(), 0), "cudaHostGetDevicePointer");
    device_ = static_cast<int*>(device);
}

void gate::hold(cudaStream_t s, double* dst, const double* src, std::size_t n)
{
    gate_kernel<<<blocks_for(n), threads, 0, s>>>(device_, device_ + 1, dst, src, n, 0.0, false);
    cuda::detail::check(cudaGetLastError(), "gate_kernel launch");
}

void gate::hold_then_fill(cudaStream_t s, double* dst, std::size_t n, double base)
{
    gate_kernel<<<blocks_for(n), threads, 0, s>>>(device_, device_ + 1, dst, nullptr, n, base, true);
    cuda::detail::check(cudaGetLastError(), "gate_kernel launch");
}

void gate::open()
{
    std::atomic_thread_fence(std::memory_order_seq_cst);
    *static_cast<volatile int*>(host_) = 1;
    std::atomic_thread_fence(std::memory_order_seq_cst);
}

bool gate::timed_out() const
{
    return *static_cast<volatile const int*>(host_ + 1) != 0;
}

} // namespace remat::test
