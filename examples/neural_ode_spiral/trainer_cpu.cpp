// The spiral trainer on the CPU: Thrust's CPP back end and OpenBLAS.
#include "spiral_trainer.hpp"

namespace remat::examples {

spiral_result train_spiral_on_cpu(const spiral_config& config, const spiral_data& data, const spiral_progress& progress)
{
    return train_spiral(config, data, progress);
}

} // namespace remat::examples
