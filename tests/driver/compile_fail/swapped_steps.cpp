// Compile-fail test (tests/CMakeLists.txt): a forward and an adjoint step given bare, with their wrappers
// swapped, or with the terminal callable first must not compile, and the compiler's message must say what
// to write ("wrap each callable"); so must the two tape callables of remat::with_tapes, bare or swapped.
// A piece given twice must not compile either, with a message saying what the driver takes ("at most
// one"). Compiled once per REMAT_CASE; case 0 is the control that must compile (it is also part of the
// normal build, as an object library): every driver with each combination of the optional pieces, in
// either order.
#include "remat/driver/profile.hpp"
#include "remat/driver/run.hpp"
#include "remat/driver/run_online.hpp"
#include "remat/schedule/online_revolve.hpp"
#include "remat/schedule/revolve.hpp"
#include "remat/store/host_store.hpp"

#include <vector>

#ifndef REMAT_CASE
#error "compile with -DREMAT_CASE=0..8"
#endif

int compile_fail_case();

int compile_fail_case()
{
    using State = std::vector<double>;
    remat::host_store store(4);
    State x(3, 1.0);
    auto f = [](remat::step_t, State& s) { s[0] += 1; };
    auto g = [](remat::step_t, State& s) { s[0] -= 1; };
    auto h = [](const State& s) { (void)s; };
    auto last = [](remat::step_t k, const State&) { return k == 9; };
    auto taped = [](remat::step_t, State& s, State& tape) {
        tape = s;
        s[0] += 1;
    };
    auto from_tape = [](remat::step_t, State& tape) { tape[0] -= 1; };
    auto make_tape = [] { return State(3); };
    (void)h;
    (void)last;
    (void)taped;
    (void)from_tape;
    (void)make_tape;
#if REMAT_CASE == 0 // the control: every driver with the wrappers in order
    (void)remat::run(remat::revolve(10, 4), store, x, remat::forward_step(f), remat::adjoint_step(g));
    (void)remat::run(remat::revolve(10, 4), store, x, remat::forward_step(f), remat::adjoint_step(g),
                     remat::final_state(h));
    (void)remat::run_online(remat::online_revolve(4), store, x, remat::forward_step(f), remat::adjoint_step(g), last);
    (void)remat::profile(10, x, remat::forward_step(f), remat::adjoint_step(g));
    (void)remat::run(remat::revolve(10, 4), store, x, remat::forward_step(f), remat::adjoint_step(g),
                     remat::with_tapes(remat::taped_step(taped), remat::tape_adjoint(from_tape), make_tape));
    (void)remat::run(remat::revolve(10, 4), store, x, remat::forward_step(f), remat::adjoint_step(g),
                     remat::with_tapes(remat::taped_step(taped), remat::tape_adjoint(from_tape), make_tape),
                     remat::final_state(h), remat::run_options{});
    (void)remat::run(remat::revolve(10, 4), store, x, remat::forward_step(f), remat::adjoint_step(g),
                     remat::run_options{.time_user_code = false}, remat::final_state(h),
                     remat::with_tapes(remat::taped_step(taped), remat::tape_adjoint(from_tape), make_tape));
    (void)remat::run_online(remat::online_revolve(4), store, x, remat::forward_step(f), remat::adjoint_step(g),
                            remat::final_state(h), last, remat::run_options{.lookahead = 2});
    (void)remat::run_online_converged(remat::online_revolve(4), store, x, remat::forward_step(f),
                                      remat::adjoint_step(g), last, remat::final_state(h));
    remat::executor ex(store, x, remat::forward_step(f), remat::adjoint_step(g), remat::final_state(h),
                       remat::with_tapes(remat::taped_step(taped), remat::tape_adjoint(from_tape), make_tape), 10);
    (void)ex.current();
#elif REMAT_CASE == 1 // bare callables
    (void)remat::run(remat::revolve(10, 4), store, x, f, g);
#elif REMAT_CASE == 2 // swapped in remat::run
    (void)remat::run(remat::revolve(10, 4), store, x, remat::adjoint_step(g), remat::forward_step(f));
#elif REMAT_CASE == 3 // swapped in remat::run_online
    (void)remat::run_online(remat::online_revolve(4), store, x, remat::adjoint_step(g), remat::forward_step(f), last);
#elif REMAT_CASE == 4 // the terminal callable where the forward step belongs
    (void)remat::run(remat::revolve(10, 4), store, x, remat::final_state(h), remat::forward_step(f),
                     remat::adjoint_step(g));
#elif REMAT_CASE == 5 // swapped in remat::profile
    (void)remat::profile(10, x, remat::adjoint_step(g), remat::forward_step(f));
#elif REMAT_CASE == 6 // the tape callables swapped
    (void)remat::with_tapes(remat::tape_adjoint(from_tape), remat::taped_step(taped), make_tape);
#elif REMAT_CASE == 7 // the tape callables bare
    (void)remat::with_tapes(taped, from_tape, make_tape);
#elif REMAT_CASE == 8 // the terminal callable twice
    (void)remat::run(remat::revolve(10, 4), store, x, remat::forward_step(f), remat::adjoint_step(g),
                     remat::final_state(h), remat::final_state(h));
#endif
    return static_cast<int>(x[0]);
}
