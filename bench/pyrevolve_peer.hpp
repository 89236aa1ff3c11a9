// The peer that bench/schedule_speed compares remat's binomial schedule with: pyrevolve's C++ `Revolve`
// (github.com/devitocodes/pyrevolve, src/revolve.cpp, Griewank, Walther and Stumm's code), built from its
// own sources outside this repository by bench/pyrevolve_peer.sh. This interface names none of its types,
// so that only bench/pyrevolve_peer.cpp sees its header (which opens `using namespace std` at file scope).
#pragma once

#include <cstdint>

namespace remat::bench::pyrevolve {

/// What one pass over pyrevolve's offline schedule saw: the steps its `advance` actions ran (the
/// optimum it should reach), the steps reversed (`firsturn` and `youturn`), and a checksum of the slots it
/// named, which keeps the work observable.
struct pass_counts {
    std::uint64_t forward_steps = 0;
    std::uint64_t reversed = 0;
    std::uint64_t checksum = 0;
    bool error = false; ///< it answered ACTION::error
};

/// Whether pyrevolve's 32-bit `int` arithmetic holds for (steps, slots): its repetition-number loop
/// computes beta(slots, r-1) * (slots + r), which must stay below 2^31, and its caps (10000 slots, 6400
/// repetitions) must hold. Outside that range it would overflow silently, so the bench leaves it out.
[[nodiscard]] bool supports(std::int64_t steps, std::int64_t slots);

/// One full pass: Revolve(steps, slots) asked for actions until `terminate`.
[[nodiscard]] pass_counts run_pass(std::int64_t steps, std::int64_t slots);

} // namespace remat::bench::pyrevolve
