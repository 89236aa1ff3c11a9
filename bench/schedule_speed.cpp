// Schedule generation speed against pyrevolve's C++ `Revolve` (docs/schedules.md, "Speed"): nanoseconds per
// reversed step of a full pass over remat::revolve, through its cursor, through range-for and through the
// cursor's drain() (each action handed over as its own type, as remat::run takes them), and over
// pyrevolve's offline schedule when this bench was built with it (bench/pyrevolve_peer.sh builds it from its
// own sources in the build's scratch folder). The four run in interleaved rounds, each cell's order rotated
// per round; the table gives medians and ratios. Every pass counts the forward steps its advances ran and the
// steps it reversed: both must be the optimum r*T - C(s+r, r-1) and T, or the bench fails (exit 1).
//
//     build/bench/schedule_speed                                  # T = 1e5, 1e6, 1e7; s = 10, 100, 1000
//     build/bench/schedule_speed --steps 20000 --slots 10,100 --rounds 3
#include "program_help.hpp"

#include "bench_util.hpp"
#ifdef REMAT_HAVE_PYREVOLVE
#include "pyrevolve_peer.hpp"
#endif

#include "remat/schedule/binomial.hpp"
#include "remat/schedule/revolve.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <time.h> // clock_gettime (POSIX)
#include <vector>

namespace {

constexpr const char* usage_text =
    "usage: schedule_speed [--steps LIST] [--slots LIST] [--rounds N]\n"
    "Nanoseconds per reversed step of remat::revolve (its cursor, range-for and drain) and of pyrevolve's C++ Revolve\n"
    "when built with it (bench/pyrevolve_peer.sh), interleaved rounds, medians; fails (exit 1) unless every\n"
    "pass runs the optimal number of forward steps and reverses every step.\n"
    "  LIST: comma-separated positive integers (1e6 form allowed).\n"
    "  defaults: --steps 100000,1000000,10000000 --slots 10,100,1000 --rounds 5\n";

[[noreturn]] void bad_usage(const std::string& what)
{
    std::fprintf(stderr, "schedule_speed: %s (see --help)\n", what.c_str());
    std::exit(2);
}

long long parse_count(const std::string& option, const std::string& item)
{
    // Integers, or the 1e6 form: an integer mantissa and a decimal exponent.
    char* end = nullptr;
    long long value = std::strtoll(item.c_str(), &end, 10);
    if (end != item.c_str() && (*end == 'e' || *end == 'E')) {
        char* exp_end = nullptr;
        const long long exponent = std::strtoll(end + 1, &exp_end, 10);
        if (exp_end == end + 1 || *exp_end != '\0' || exponent < 0 || exponent > 18)
            bad_usage(option + " " + item + ": expected a positive integer");
        for (long long i = 0; i < exponent; ++i) {
            if (value > std::numeric_limits<long long>::max() / 10)
                bad_usage(option + " " + item + ": beyond 2^63-1");
            value *= 10;
        }
        end = exp_end;
    }
    if (item.empty() || end == item.c_str() || *end != '\0' || value < 1)
        bad_usage(option + " " + item + ": expected a positive integer");
    return value;
}

std::vector<long long> parse_list(const std::string& option, const std::string& text)
{
    std::vector<long long> values;
    std::size_t at = 0;
    for (;;) {
        const std::size_t comma = text.find(',', at);
        values.push_back(parse_count(option, text.substr(at, comma == std::string::npos ? comma : comma - at)));
        if (comma == std::string::npos)
            return values;
        at = comma + 1;
    }
}

/// What a pass saw: the forward steps its advances ran, the steps it reversed, a checksum that keeps the work
/// observable (the peer's pass fills the same three), and, for remat, the actions.
struct counts {
    std::uint64_t forward_steps = 0;
    std::uint64_t reversed = 0;
    std::uint64_t checksum = 0;
    std::uint64_t actions = 0;
};

/// The loop a user writes over the actions: the same work per action as the peer's driver loop
/// (bench/pyrevolve_peer.cpp), through std::visit as remat/schedule/action.hpp documents.
struct consumer {
    counts seen;
    void operator()(const remat::action& a)
    {
        ++seen.actions;
        std::visit(
            remat::overloaded{
                [&](const remat::advance& s) { seen.forward_steps += static_cast<std::uint64_t>(s.to - s.from); },
                [&](const remat::store& s) { seen.checksum += static_cast<std::uint64_t>(s.slot); },
                [&](const remat::restore& s) { seen.checksum += static_cast<std::uint64_t>(s.slot); },
                [&](const remat::free_slot&) {}, [&](const remat::reverse&) { ++seen.reversed; }},
            a);
    }
};

[[gnu::noinline]] counts cursor_pass(const remat::revolve& plan)
{
    consumer use;
    auto cursor = plan.cursor();
    remat::action a;
    while (cursor.next(a))
        use(a);
    return use.seen;
}

/// The same work per action, handed each action as its own type by the cursor's drain() (what remat::run uses):
/// no action variant filled and read back.
struct typed_consumer {
    counts seen;
    void operator()(const remat::advance& s)
    {
        ++seen.actions;
        seen.forward_steps += static_cast<std::uint64_t>(s.to - s.from);
    }
    void operator()(const remat::store& s)
    {
        ++seen.actions;
        seen.checksum += static_cast<std::uint64_t>(s.slot);
    }
    void operator()(const remat::restore& s)
    {
        ++seen.actions;
        seen.checksum += static_cast<std::uint64_t>(s.slot);
    }
    void operator()(const remat::free_slot&) { ++seen.actions; }
    void operator()(const remat::reverse&)
    {
        ++seen.actions;
        ++seen.reversed;
    }
};

[[gnu::noinline]] counts drain_pass(const remat::revolve& plan)
{
    typed_consumer use;
    auto cursor = plan.cursor();
    cursor.drain(use);
    return use.seen;
}

[[gnu::noinline]] counts range_pass(const remat::revolve& plan)
{
    consumer use;
    for (const remat::action& a : plan)
        use(a);
    return use.seen;
}

/// This thread's CPU time: on a machine shared with other jobs, wall time would count the time this
/// thread waits for a core, which has nothing to do with the schedule being timed.
double thread_cpu_seconds()
{
    timespec now{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

/// A figure with `digits` decimals, or "-" for one not measured (zero).
std::string fixed(double value, int digits)
{
    if (value <= 0)
        return "-";
    std::array<char, 32> text{};
    std::snprintf(text.data(), text.size(), "%.*f", digits, value);
    return text.data();
}

enum contender : std::size_t { remat_cursor, remat_range, remat_drain, peer, contenders };
constexpr std::array<const char*, contenders> contender_names{"remat cursor", "remat range-for", "remat drain",
                                                              "pyrevolve"};

struct cell_result {
    std::array<double, contenders> ns_per_step{}; // medians; 0 where not run
    std::uint64_t actions = 0;                    // remat's, for ns per action
    bool ok = true;
};

bool check(const char* who, long long steps, long long slots, std::uint64_t forward_steps, std::uint64_t reversed,
           std::uint64_t optimum)
{
    if (forward_steps == optimum && reversed == static_cast<std::uint64_t>(steps))
        return true;
    std::fprintf(
        stderr,
        "schedule_speed: %s at T = %lld, s = %lld ran %llu forward steps (optimum %llu) and reversed %llu steps\n", who,
        steps, slots, static_cast<unsigned long long>(forward_steps), static_cast<unsigned long long>(optimum),
        static_cast<unsigned long long>(reversed));
    return false;
}

cell_result measure_cell(long long steps, long long slots, int rounds, bool with_peer)
{
    const remat::revolve plan(steps, slots);
    const std::uint64_t optimum = remat::binomial::min_forward_steps(steps, slots);
    // Several passes per timing where one is short, so that each timing spans half a million steps
    // (milliseconds).
    const long long passes = std::max(1LL, 500'000 / steps);
    cell_result result;
    std::array<std::vector<double>, contenders> seconds;
    std::uint64_t keep_sum = 0;
    for (int round = 0; round < rounds; ++round) {
        for (std::size_t k = 0; k < contenders; ++k) {
            const auto who = static_cast<contender>((k + static_cast<std::size_t>(round)) % contenders);
            if (who == peer && !with_peer)
                continue;
            counts seen;
            bool peer_error = false;
            const double start = thread_cpu_seconds();
            for (long long p = 0; p < passes; ++p) {
                if (who == remat_cursor) {
                    seen = cursor_pass(plan);
                    result.actions = seen.actions;
                } else if (who == remat_range) {
                    seen = range_pass(plan);
                } else if (who == remat_drain) {
                    seen = drain_pass(plan);
                } else {
#ifdef REMAT_HAVE_PYREVOLVE
                    const auto c = remat::bench::pyrevolve::run_pass(steps, slots);
                    seen = {c.forward_steps, c.reversed, c.checksum, 0};
                    peer_error = c.error;
#endif
                }
                keep_sum += seen.checksum;
            }
            seconds[who].push_back((thread_cpu_seconds() - start) / static_cast<double>(passes));
            if (peer_error) {
                std::fprintf(stderr, "schedule_speed: pyrevolve answered ACTION::error at T = %lld, s = %lld\n", steps,
                             slots);
                result.ok = false;
            }
            result.ok =
                check(contender_names[who], steps, slots, seen.forward_steps, seen.reversed, optimum) && result.ok;
        }
    }
    remat::bench::keep(keep_sum);
    for (std::size_t k = 0; k < contenders; ++k)
        if (!seconds[k].empty())
            result.ns_per_step[k] = remat::bench::median(seconds[k]) * 1e9 / static_cast<double>(steps);
    return result;
}

} // namespace

int main(int argc, char** argv)
{
    if (remat::examples::answered_help(argc, argv, usage_text))
        return 0;
    std::vector<long long> steps{100'000, 1'000'000, 10'000'000};
    std::vector<long long> slots{10, 100, 1000};
    int rounds = 5;
    for (int i = 1; i < argc; i += 2) {
        const std::string option = argv[i];
        if (i + 1 >= argc)
            bad_usage("missing value after " + option);
        if (option == "--steps")
            steps = parse_list(option, argv[i + 1]);
        else if (option == "--slots")
            slots = parse_list(option, argv[i + 1]);
        else if (option == "--rounds")
            rounds = static_cast<int>(std::min(parse_count(option, argv[i + 1]), 1000LL));
        else
            bad_usage("unknown option " + option);
    }
#ifdef REMAT_HAVE_PYREVOLVE
    const bool peer_built = true;
    std::printf("CPU ns per reversed step, median of %d interleaved rounds; peer: pyrevolve's C++ Revolve\n", rounds);
#else
    const bool peer_built = false;
    std::printf("CPU ns per reversed step, median of %d interleaved rounds; peer missing: pyrevolve was not built "
                "(bench/pyrevolve_peer.sh builds it)\n",
                rounds);
#endif
    std::printf("%10s %6s %12s %12s %12s %12s %10s %10s %10s %10s %10s\n", "T", "s", "cursor", "range-for", "drain",
                "pyrevolve", "cur/pyr", "range/pyr", "drain/pyr", "range/cur", "ns/action");
    bool ok = true;
    for (const long long t : steps)
        for (const long long s : slots) {
            bool with_peer = peer_built;
#ifdef REMAT_HAVE_PYREVOLVE
            with_peer = remat::bench::pyrevolve::supports(t, s);
#endif
            const cell_result r = measure_cell(t, s, rounds, with_peer);
            ok = ok && r.ok;
            const auto& ns = r.ns_per_step;
            const auto ratio = [](double a, double b) { return a > 0 && b > 0 ? a / b : 0.0; };
            std::printf(
                "%10lld %6lld %12s %12s %12s %12s %10s %10s %10s %10s %10s\n", t, s, fixed(ns[remat_cursor], 2).c_str(),
                fixed(ns[remat_range], 2).c_str(), fixed(ns[remat_drain], 2).c_str(), fixed(ns[peer], 2).c_str(),
                fixed(ratio(ns[remat_cursor], ns[peer]), 3).c_str(), fixed(ratio(ns[remat_range], ns[peer]), 3).c_str(),
                fixed(ratio(ns[remat_drain], ns[peer]), 3).c_str(),
                fixed(ratio(ns[remat_range], ns[remat_cursor]), 3).c_str(),
                fixed(ns[remat_cursor] * static_cast<double>(t) / static_cast<double>(r.actions), 2).c_str());
            std::fflush(stdout);
        }
    if (peer_built)
        std::printf("(pyrevolve '-': outside its 32-bit range)\n");
    return ok ? 0 : 1;
}
