// A downstream program: plans a schedule and checks the optimum, printing it for the test to read.
#include <remat/remat.hpp>

#include <cstdio>

int main()
{
    const remat::revolve plan(10, 3);
    std::size_t actions = 0;
    for (const remat::action& a : plan)
        actions += a.index() < 5 ? 1 : 0;
    std::printf("forward_steps=%llu actions=%zu\n", static_cast<unsigned long long>(plan.cost().forward_steps),
                actions);
    return plan.cost().forward_steps == 15 ? 0 : 1;
}
