// Example (a): the gradient of J = z(T) for Lorenz-63 over 10^5 RK4 steps, with respect to the initial
// condition and the parameters (sigma, rho, beta), with 20 snapshot slots instead of 10^5.
//
//     ./build/examples/lorenz63_gradient [steps] [slots] [--format text|json]
#include "program_help.hpp"

#include "lorenz63.hpp"
#include "report_errors.hpp"

#include <remat/remat.hpp>
#include <remat/report/json.hpp>
#include <remat/report/run_report_json.hpp>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <string_view>

namespace {

[[noreturn]] void usage(const std::string& why)
{
    std::fprintf(stderr, "lorenz63_gradient: %s\nusage: lorenz63_gradient [steps] [slots] [--format text|json]\n",
                 why.c_str());
    std::exit(2);
}

long long at_least(std::string_view name, const char* text, long long least)
{
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(text, &end, 10);
    if (end == text || *end != '\0' || errno == ERANGE || v < least)
        usage(std::string(name) + " wants a whole number >= " + std::to_string(least) + ", got '" + text + "'");
    return v;
}

} // namespace

static int example_main(int argc, char** argv)
{
    if (remat::examples::answered_help(
            argc, argv,
            "usage: lorenz63_gradient [steps] [slots] [--format text|json]\n"
            "Example (a): the gradient of J = z(T) for Lorenz-63 over 10^5 RK4 steps, with respect to the initial\n"
            "condition and the parameters (sigma, rho, beta), with 20 snapshot slots instead of 10^5.\n"))
        return 0;
    using remat::examples::vec3;
    remat::step_t steps = 100'000;
    remat::slot_t slots = 20;
    bool json = false;
    int positional = 0;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "--format") {
            if (i + 1 == argc)
                usage("--format wants text or json");
            const std::string_view f = argv[++i];
            if (f != "text" && f != "json")
                usage("--format wants text or json, got '" + std::string(f) + "'");
            json = f == "json";
        } else if (positional == 0 && !a.starts_with("--")) {
            steps = at_least("steps", argv[i], 2);
            ++positional;
        } else if (positional == 1 && !a.starts_with("--")) {
            slots = at_least("slots", argv[i], 1);
            ++positional;
        } else {
            usage("unexpected argument '" + std::string(a) + "'");
        }
    }
    const remat::examples::lorenz63 model{.sigma = 10.0, .rho = 28.0, .beta = 8.0 / 3.0, .h = 1e-4};

    vec3 x{1.0, 1.0, 1.0}; // x_0; the driver leaves it undefined
    const vec3 x0 = x;
    vec3 lambda{}; // the adjoint: dJ/dx_T, seeded by the terminal callable, then dJ/dx_k
    vec3 grad_p{}; // dJ/d(sigma, rho, beta)
    double objective = 0;

    const remat::revolve plan(steps, slots);
    remat::host_store store(slots);
    const remat::run_report report =
        remat::run(plan, store, x, remat::forward_step([&](remat::step_t, vec3& s) { model.step(s); }),
                   remat::adjoint_step([&](remat::step_t, vec3& s) { model.adjoint_step(s, lambda, grad_p); }),
                   remat::final_state([&](const vec3& xT) { // x_T, once, before the first adjoint step
                       objective = xT[2];                   // J = z(T)
                       lambda = {0.0, 0.0, 1.0};            // dJ/dx_T
                   }),
                   remat::run_options{.time_user_code = true}); // the report's user/remat time split

    if (json) {
        nlohmann::ordered_json j{{"steps", steps},         {"slots", slots},
                                 {"h", model.h},           {"x0", x0},
                                 {"J", objective},         {"dJ_dx0", lambda},
                                 {"dJ_dsigma", grad_p[0]}, {"dJ_drho", grad_p[1]},
                                 {"dJ_dbeta", grad_p[2]},  {"run", remat::report::run_report_json(report)}};
        remat::report::write_json(std::cout, j);
        return 0;
    }
    std::printf("Lorenz-63, RK4, %lld steps of h = %g from (%g, %g, %g), %lld slots\n", static_cast<long long>(steps),
                model.h, x0[0], x0[1], x0[2], static_cast<long long>(slots));
    std::printf("J = z(T)   = %.10e\n", objective);
    std::printf("dJ/dx0     = (%.10e, %.10e, %.10e)\n", lambda[0], lambda[1], lambda[2]);
    std::printf("dJ/dsigma  = %.10e\ndJ/drho    = %.10e\ndJ/dbeta   = %.10e\n", grad_p[0], grad_p[1], grad_p[2]);
    std::printf("forward steps %llu for %lld reverse steps (%.2f sweeps; store-all would need %lld slots)\n",
                static_cast<unsigned long long>(report.forward_steps), static_cast<long long>(steps),
                static_cast<double>(report.forward_steps) / static_cast<double>(steps - 1),
                static_cast<long long>(steps - 1));
    std::printf("%s", remat::to_string(report).c_str());
    return 0;
}

int main(int argc, char** argv)
{
    return remat::examples::report_errors("lorenz63_gradient", [&] { return example_main(argc, argv); });
}
