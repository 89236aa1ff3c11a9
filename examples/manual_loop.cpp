// Driving a schedule by hand: a plain std::visit loop over the actions, with the snapshots in a vector
// of your own. This is all remat::run does (plus checks, timing, error wrapping and stores); use it when
// your loop does not fit the driver. Here it computes the Lorenz-63 gradient and compares it, bit for
// bit, with remat::run's.
//
//     ./build/examples/manual_loop
#include "program_help.hpp"

#include "lorenz63.hpp"
#include "parse_args.hpp"
#include "report_errors.hpp"

#include <remat/remat.hpp>

#include <cstdio>
#include <cstring>
#include <vector>

static int example_main()
{
    using remat::examples::vec3;
    const remat::examples::lorenz63 model;
    const remat::step_t steps = 5000;
    const remat::slot_t slots = 8;
    const remat::revolve plan(steps, slots);

    // --- by hand --------------------------------------------------------------------------------
    vec3 x{1.0, 1.0, 1.0};              // the current state, x_0 at the start
    vec3 lambda{0.0, 0.0, 1.0};         // dJ/dx for J = z(T)
    vec3 grad_p{};                      // dJ/d(sigma, rho, beta)
    std::vector<vec3> snapshots(slots); // slot S of level 0
    for (const remat::action& a : plan)
        std::visit(remat::overloaded{
                       [&](const remat::advance& s) {
                           for (remat::step_t k = s.from; k < s.to; ++k)
                               model.step(x);
                       },
                       [&](const remat::store& s) { snapshots[static_cast<std::size_t>(s.slot)] = x; },
                       [&](const remat::restore& s) { x = snapshots[static_cast<std::size_t>(s.slot)]; },
                       [&](const remat::free_slot&) {},
                       [&](const remat::reverse&) { model.adjoint_step(x, lambda, grad_p); },
                   },
                   a);

    // --- with the driver ---------------------------------------------------------------------------
    vec3 y{1.0, 1.0, 1.0};
    vec3 lambda2{0.0, 0.0, 1.0};
    vec3 grad_p2{};
    remat::host_store store(slots);
    (void)remat::run(plan, store, y, remat::forward_step([&](remat::step_t, vec3& s) { model.step(s); }),
                     remat::adjoint_step([&](remat::step_t, vec3& s) { model.adjoint_step(s, lambda2, grad_p2); }));

    const bool same =
        std::memcmp(&lambda, &lambda2, sizeof lambda) == 0 && std::memcmp(&grad_p, &grad_p2, sizeof grad_p) == 0;
    std::printf("dJ/dx0 by hand   (%.12e, %.12e, %.12e)\n", lambda[0], lambda[1], lambda[2]);
    std::printf("dJ/dx0 by run()  (%.12e, %.12e, %.12e)\n", lambda2[0], lambda2[1], lambda2[2]);
    std::printf("%s\n", same ? "bit-identical" : "DIFFERENT");
    return same ? 0 : 1;
}

int main(int argc, char** argv)
{
    if (remat::examples::answered_help(
            argc, argv,
            "usage: manual_loop\n"
            "Driving a schedule by hand: a plain std::visit loop over the actions, with the snapshots in a vector\n"
            "of your own.\n"))
        return 0;
    return remat::examples::report_errors("manual_loop", [&] {
        remat::examples::at_most_arguments(argc, argv, 0);
        return example_main();
    });
}
