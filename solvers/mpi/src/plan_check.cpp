#include "remat/mpi/plan_check.hpp"

#include <remat/detail/xxh64.hpp>

#include <cxxabi.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace remat::mpi {
namespace detail {

std::string demangle(const char* name)
{
    int status = 0;
    std::unique_ptr<char, void (*)(void*)> text(abi::__cxa_demangle(name, nullptr, nullptr, &status), std::free);
    std::string s = status == 0 && text ? std::string(text.get()) : std::string(name);
    // Template arguments are part of the type but not of what a reader wants to see.
    if (const auto angle = s.find('<'); angle != std::string::npos)
        s.resize(angle);
    return s;
}

std::uint64_t hash_actions(const std::vector<std::string>& texts)
{
    remat::detail::xxh64_state h;
    for (const std::string& t : texts) {
        h.update(t.data(), t.size());
        h.update("\n", 1);
    }
    return h.digest();
}

} // namespace detail

namespace {

// What each rank contributes to the all-gather: a hash of everything in its signature (equal signatures,
// equal hashes; the same binary on every rank) and its one-line description for the message.
struct wire_signature {
    std::uint64_t hash = 0;
    std::array<char, 248> text{};
};

std::uint64_t hash_of(const plan_signature& s)
{
    std::string canonical = s.method;
    auto add = [&](std::uint64_t v) { canonical += '|' + std::to_string(v); };
    const schedule_cost& c = s.cost;
    add(static_cast<std::uint64_t>(c.steps));
    add(c.forward_steps);
    add(c.reverse_steps);
    add(c.stores);
    add(c.restores);
    add(c.peak_slots);
    add(c.repetition);
    add(c.taped_steps);
    add(c.peak_tapes);
    add(c.levels.size());
    for (const level_cost& l : c.levels) {
        add(l.stores);
        add(l.restores);
        add(l.peak_slots);
    }
    add(std::bit_cast<std::uint64_t>(c.predicted_cost));
    add(s.actions_hash);
    add(s.hashed_actions);
    return remat::detail::xxh64(canonical.data(), canonical.size());
}

} // namespace

std::string describe(const plan_signature& s)
{
    const schedule_cost& c = s.cost;
    std::string d = s.method + ": T = " + std::to_string(c.steps) + ", ";
    if (c.levels.size() > 1) {
        d += "peak slots per level ";
        for (std::size_t i = 0; i < c.levels.size(); ++i)
            d += (i > 0 ? "/" : "") + std::to_string(c.levels[i].peak_slots);
    } else {
        d += std::to_string(c.peak_slots) + " slots";
    }
    d += ", " + std::to_string(c.forward_steps) + " forward steps, " + std::to_string(c.stores) + " stores, " +
         std::to_string(c.restores) + " restores";
    char hash[32];
    std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(s.actions_hash));
    d += ", first " + std::to_string(s.hashed_actions) + " actions xxh64 " + hash;
    return d;
}

void check_same_plan(MPI_Comm comm, const plan_signature& mine)
{
    const int ranks = size(comm);
    wire_signature w;
    w.hash = hash_of(mine);
    const std::string text = describe(mine);
    std::memcpy(w.text.data(), text.data(), std::min(text.size(), w.text.size() - 1));
    std::vector<wire_signature> all(static_cast<std::size_t>(ranks));
    check(MPI_Allgather(&w, sizeof w, MPI_BYTE, all.data(), sizeof w, MPI_BYTE, comm), "MPI_Allgather");

    std::vector<int> differing;
    for (int r = 0; r < ranks; ++r)
        if (all[static_cast<std::size_t>(r)].hash != all[0].hash)
            differing.push_back(r);
    if (differing.empty())
        return;

    // Every rank builds the same message from the same gathered data: groups of ranks with equal plans,
    // in the order of their lowest rank.
    std::string message =
        "remat::mpi: the ranks planned different schedules; rank" + std::string(differing.size() > 1 ? "s " : " ") +
        rank_list(differing.data(), differing.size()) + " differ" + (differing.size() > 1 ? "" : "s") + " from rank 0";
    std::vector<bool> listed(static_cast<std::size_t>(ranks), false);
    for (int r = 0; r < ranks; ++r) {
        if (listed[static_cast<std::size_t>(r)])
            continue;
        std::vector<int> group;
        for (int q = r; q < ranks; ++q)
            if (all[static_cast<std::size_t>(q)].hash == all[static_cast<std::size_t>(r)].hash) {
                group.push_back(q);
                listed[static_cast<std::size_t>(q)] = true;
            }
        message += std::string("; rank") + (group.size() > 1 ? "s " : " ") + rank_list(group.data(), group.size()) +
                   ": " + all[static_cast<std::size_t>(r)].text.data();
    }
    throw plan_mismatch(message, std::move(differing));
}

} // namespace remat::mpi
