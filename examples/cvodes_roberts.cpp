// SUNDIALS's cvsRoberts_ASAi_dns through remat::cvodes: G = int y3 dt and dG/dp for two backward problems
// (from tB0 = 4e7 and from tB0 = 50), with the forward states held by a revolve schedule of fewer slots
// than windows.
//
//     ./build/examples/cvodes_roberts [--windows-per-decade N] [--slots S] [--format text|json]
#include "program_help.hpp"

#include "roberts.hpp"

#include <remat/cvodes/cvodes.hpp>
#include <remat/remat.hpp>
#include <remat/report/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <string_view>

namespace {

[[noreturn]] void usage(const std::string& why)
{
    std::fprintf(stderr,
                 "cvodes_roberts: %s\nusage: cvodes_roberts [--windows-per-decade N] [--slots S] "
                 "[--format text|json]\n",
                 why.c_str());
    std::exit(2);
}

long long positive(std::string_view name, const char* text)
{
    char* end = nullptr;
    const long long v = std::strtoll(text, &end, 10);
    if (end == text || *end != '\0' || v < 1)
        usage(std::string(name) + " wants a positive integer, got '" + text + "'");
    return v;
}

} // namespace

int main(int argc, char** argv)
{
    if (remat::examples::answered_help(
            argc, argv,
            "usage: cvodes_roberts [--windows-per-decade N] [--slots S] [--format text|json]\n"
            "SUNDIALS's cvsRoberts_ASAi_dns through remat::cvodes: G = int y3 dt and dG/dp for two backward\n"
            "problems (from tB0 = 4e7 and from tB0 = 50), with the forward states held by a revolve schedule of\n"
            "fewer slots than windows.\n"))
        return 0;
    int per_decade = 1;
    remat::slot_t slots = 3;
    bool json = false;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (i + 1 >= argc)
            usage("option " + std::string(a) + " needs a value");
        if (a == "--windows-per-decade")
            per_decade = static_cast<int>(positive(a, argv[++i]));
        else if (a == "--slots")
            slots = positive(a, argv[++i]);
        else if (a == "--format") {
            const std::string_view f = argv[++i];
            if (f != "text" && f != "json")
                usage("--format wants text or json, got '" + std::string(f) + "'");
            json = f == "json";
        } else
            usage("unknown option '" + std::string(a) + "'");
    }
    try {
        const remat::examples::roberts model;
        remat::cvodes::adjoint_solver solver(model.forward(), model.backward());
        const auto w = remat::cvodes::windows(model.window_boundaries(per_decade)).including(model.backward_starts);
        if (slots >= w.count())
            usage("--slots " + std::to_string(slots) + " is not fewer than the " + std::to_string(w.count()) +
                  " windows");
        remat::host_store store(slots);
        const remat::cvodes::solution s = remat::cvodes::solve(solver, w, remat::revolve(w.count(), slots), store);

        const double G = s.final_state.back();
        if (json) {
            nlohmann::ordered_json j;
            j["G"] = G;
            j["backward"] = nlohmann::ordered_json::array();
            for (const auto& b : s.backward) {
                nlohmann::ordered_json d = nlohmann::ordered_json::array();
                for (const double q : b.quadratures)
                    d.push_back(-q); // dG/dp = -qB(t0) in CVODES's backward convention
                j["backward"].push_back({{"tB0", b.t_start}, {"lambda0", b.lambda}, {"dGdp", d}});
            }
            j["windows"] = s.windows;
            j["slots"] = slots;
            j["peak_snapshot_bytes"] = s.report.peak_snapshot_bytes;
            j["forward_windows"] = s.report.forward_steps;
            remat::report::write_json(std::cout, j);
            return 0;
        }
        std::printf("Robertson kinetics (cvsRoberts_ASAi_dns) through remat::cvodes: %lld windows, %lld slots\n",
                    static_cast<long long>(s.windows), static_cast<long long>(slots));
        std::printf("G:            %12.4e\n", G);
        for (const auto& b : s.backward) {
            std::printf("backward from tB0 = %12.4e\n", b.t_start);
            std::printf("  lambda(t0): %12.4e %12.4e %12.4e\n", b.lambda[0], b.lambda[1], b.lambda[2]);
            std::printf("  dG/dp:      %12.4e %12.4e %12.4e\n", -b.quadratures[0], -b.quadratures[1],
                        -b.quadratures[2]);
        }
        std::printf("forward windows %llu (recomputation included) for %lld windows; peak snapshots %llu bytes\n",
                    static_cast<unsigned long long>(s.report.forward_steps), static_cast<long long>(s.windows),
                    static_cast<unsigned long long>(s.report.peak_snapshot_bytes));
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "cvodes_roberts: %s\n", e.what());
        return 1;
    }
}
