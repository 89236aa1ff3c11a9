// bench/neural_ode on the CPU: Thrust's CPP back end and OpenBLAS, each variant in a child process of its
// own so that its peak RSS is its own.
#include "problem.hpp"

#include "../run_in_child.hpp"

#include <cstdint>

namespace remat::bench::neural_ode {

namespace {

// FNV-1a over the gradient's bytes: the child sends this back, the parent compares it with store-all's.
std::uint64_t bits_hash(const std::vector<double>& v)
{
    std::uint64_t h = 0xcbf29ce484222325ULL;
    const auto* bytes = reinterpret_cast<const unsigned char*>(v.data());
    for (std::size_t i = 0; i < v.size() * sizeof(double); ++i)
        h = (h ^ bytes[i]) * 0x100000001b3ULL;
    return h;
}

} // namespace

std::vector<measurement> measure_on_cpu(const problem_size& s, int repeats, const on_variant& starting)
{
    struct summary {
        double seconds;
        double checksum;
        std::uint64_t hash;
    };
    std::vector<measurement> out;
    std::uint64_t store_all_hash = 0;
    for (const variant& v : variants_for(s)) {
        starting(v);
        const auto run = run_in_child("the " + v.name + " run", [&] {
            const variant_run r = run_variant(
                s, v, repeats,
                [](slot_t slots, std::uint64_t, auto&& body) {
                    host_store store(slots);
                    body(store);
                },
                [] {});
            return summary{r.seconds, checksum(r.gradient), bits_hash(r.gradient)};
        });
        if (v.kind == variant_kind::store_all)
            store_all_hash = run.value.hash;
        out.push_back({v, run.value.seconds, run.value.checksum, run.peak_rss_bytes, run.value.hash == store_all_hash});
    }
    return out;
}

} // namespace remat::bench::neural_ode
