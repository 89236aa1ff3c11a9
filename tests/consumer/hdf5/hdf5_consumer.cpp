// A downstream program: a gradient with its snapshots on disk, then the file inspected.
#include <remat/hdf5/hdf5_store.hpp>
#include <remat/hdf5/inspect.hpp>
#include <remat/remat.hpp>

#include <cstdio>
#include <filesystem>
#include <vector>

int main()
{
    const auto file = std::filesystem::temp_directory_path() / "remat-hdf5-consumer.h5";
    std::vector<double> x(1000, 1.0);
    int reversed = 0;
    {
        remat::hdf5_store disk(file, remat::level_capacity{4});
        remat::run(remat::revolve(50, 4), disk, x,
                   remat::forward_step([](remat::step_t, std::vector<double>& s) { s[0] += 1; }),
                   remat::adjoint_step([&](remat::step_t k, std::vector<double>& s) {
                       reversed += s[0] == 1.0 + static_cast<double>(k) ? 1 : 0;
                   }));
    }
    const std::size_t listed = remat::hdf5_inspect(file, true).snapshots.size();
    std::filesystem::remove(file);
    std::printf("reversed=%d listed=%zu\n", reversed, listed);
    return reversed == 50 ? 0 : 1;
}
