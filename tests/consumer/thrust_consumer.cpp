// A downstream program on Thrust's CPU back end through the installed remat_use_thrust(): the device
// level and a thrust::device_vector state, with no GPU.
#include <remat/cuda/device_store.hpp>
#include <remat/cuda/thrust_traits.hpp>
#include <remat/remat.hpp>

#include <thrust/device_vector.h>
#include <thrust/sequence.h>

#include <cstdio>

int main()
{
    thrust::device_vector<double> x(64);
    thrust::sequence(x.begin(), x.end());
    remat::cuda::device_store store(3);
    remat::step_t reversed = 0;
    const remat::run_report r =
        remat::run(remat::revolve(10, 3), store, x,
                   remat::forward_step([](remat::step_t, thrust::device_vector<double>& s) { s[0] += 1.0; }),
                   remat::adjoint_step([&](remat::step_t k, thrust::device_vector<double>& s) {
                       reversed += s[0] == static_cast<double>(k) ? 1 : 0;
                   }));
    std::printf("thrust %d forward_steps=%llu reversed=%lld\n", THRUST_VERSION,
                static_cast<unsigned long long>(r.forward_steps), static_cast<long long>(reversed));
    return r.forward_steps == 15 && reversed == 10 ? 0 : 1;
}
