// The `remat` tool: plan, inspect and draw checkpointing schedules.
#include "app.hpp"

#include <iostream>

int main(int argc, char** argv)
{
    std::ios::sync_with_stdio(false);
    const int status = remat::cli::run(argc, argv, std::cout, std::cerr);
    std::cout.flush();
    return std::cout ? status : 1;
}
