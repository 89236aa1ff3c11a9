// A downstream program linking the installed remat::cuda (host code only, built by the host compiler):
// a device-store round trip when a GPU is present.
#include <remat/cuda/device_buffer.hpp>
#include <remat/cuda/device_missing.hpp>
#include <remat/cuda/device_store.hpp>
#include <remat/remat.hpp>

#include <cstdio>
#include <string>
#include <vector>

int main()
{
    if (const std::string why = remat::cuda::device_missing(); !why.empty()) {
        std::printf("cuda consumer built; skipped: %s\n", why.c_str());
        return 0;
    }
    std::vector<double> host(1000, 2.5), back(1000, 0.0);
    remat::cuda::device_store store(2);
    store.write(1, 7, {reinterpret_cast<const std::byte*>(host.data()), 8000, remat::memory_space::host});
    store.read(1, 7, {reinterpret_cast<std::byte*>(back.data()), 8000, remat::memory_space::host});
    std::printf("cuda consumer: round trip %s\n", back == host ? "ok" : "WRONG");
    return back == host ? 0 : 1;
}
