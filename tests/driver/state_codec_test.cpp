// remat::state_codec: each kind of state (one contiguous view, several parts, a serialisation) written to a
// host_store and read back equals the state written; sizes are the bytes the state's elements take;
// a state kept aside and put back is the one kept; a failing serialisation names its step and phase.
#define BOOST_TEST_MODULE state_codec
#include <boost/test/unit_test.hpp>

#include "remat/driver/state_codec.hpp"
#include "remat/error.hpp"
#include "remat/store/host_store.hpp"
#include "remat/store/snapshot_store.hpp"

#include <array>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

// A state that only serialises: its length word, then its values.
struct packed {
    std::vector<double> values;
    bool fail = false; // save throws
    bool operator==(const packed& o) const { return values == o.values; }
};

} // namespace

template <>
struct remat::snapshot_traits<packed> {
    static std::size_t size_bytes(const packed& p) { return sizeof(std::size_t) + p.values.size() * sizeof(double); }
    static void save(const packed& p, std::span<std::byte> out)
    {
        if (p.fail)
            throw std::runtime_error("disk of the serialiser full");
        const std::size_t n = p.values.size();
        std::memcpy(out.data(), &n, sizeof n);
        std::memcpy(out.data() + sizeof n, p.values.data(), n * sizeof(double));
    }
    static void load(packed& p, std::span<const std::byte> in)
    {
        std::size_t n = 0;
        std::memcpy(&n, in.data(), sizeof n);
        p.values.resize(n);
        std::memcpy(p.values.data(), in.data() + sizeof n, n * sizeof(double));
    }
};

namespace {

// Two parts without parts_for: a restore cannot resize them.
struct two_vectors {
    std::vector<double> a, b;
};

} // namespace

template <>
struct remat::snapshot_traits<two_vectors> {
    static std::array<remat::const_bytes, 2> parts(const two_vectors& t)
    {
        return {remat::snapshot_traits<std::vector<double>>::bytes(t.a),
                remat::snapshot_traits<std::vector<double>>::bytes(t.b)};
    }
    static std::array<remat::mutable_bytes, 2> parts(two_vectors& t)
    {
        return {remat::snapshot_traits<std::vector<double>>::bytes(t.a),
                remat::snapshot_traits<std::vector<double>>::bytes(t.b)};
    }
};

namespace {

using pair_state = std::pair<std::vector<double>, std::vector<float>>;

static_assert(
    std::is_same_v<remat::state_codec<std::vector<double>>, remat::detail::contiguous_codec<std::vector<double>>>);
static_assert(std::is_same_v<remat::state_codec<pair_state>, remat::detail::multipart_codec<pair_state>>);
static_assert(std::is_same_v<remat::state_codec<packed>, remat::detail::serialised_codec<packed>>);

// Writes `x` as x_k into slot 1, reads it into `into`, and returns the bytes the codec wrote.
template <class State>
std::uint64_t round_trip(const State& x, State& into, remat::step_t k)
{
    remat::host_store level(2);
    remat::detail::store_access<remat::host_store> access(level);
    remat::state_codec<State> codec;
    const std::uint64_t written = codec.write(access, 0, 1, k, x);
    BOOST_TEST(level.snapshot_bytes(1) == written);
    codec.read(access, 0, 1, k, into);
    return written;
}

} // namespace

BOOST_AUTO_TEST_CASE(each_kind_reads_back_what_it_wrote_resized_to_the_snapshot)
{
    const std::vector<double> v{1.5, -2.25, 3e300, 0.0};
    std::vector<double> v_back(1); // resized by the read
    BOOST_TEST(round_trip(v, v_back, 7) == 4 * sizeof(double));
    BOOST_TEST(v_back == v);
    BOOST_TEST(remat::state_codec<std::vector<double>>::size(v, 0) == 4 * sizeof(double));

    const pair_state p{{1.0, 2.0, 3.0}, {4.0f, 5.0f}};
    pair_state p_back{std::vector<double>(3), std::vector<float>(2)};
    BOOST_TEST(round_trip(p, p_back, 3) == 3 * sizeof(double) + 2 * sizeof(float));
    BOOST_TEST((p_back == p));
    BOOST_TEST(remat::state_codec<pair_state>::size(p, 0) == 3 * sizeof(double) + 2 * sizeof(float));

    const packed s{{9.0, 8.0, 7.0}};
    packed s_back;
    BOOST_TEST(round_trip(s, s_back, 2) == sizeof(std::size_t) + 3 * sizeof(double));
    BOOST_TEST((s_back == s));
    BOOST_TEST(remat::state_codec<packed>::size(s, 0) == sizeof(std::size_t) + 3 * sizeof(double));
}

BOOST_AUTO_TEST_CASE(a_state_kept_aside_is_put_back_as_it_was)
{
    std::vector<double> v{1.0, 2.0};
    remat::state_codec<std::vector<double>> vc;
    vc.keep_aside(v, 4);
    v = {5.0, 6.0};
    vc.put_back(v, 4);
    BOOST_TEST(v == (std::vector<double>{1.0, 2.0}));

    pair_state p{{1.0}, {2.0f, 3.0f}};
    remat::state_codec<pair_state> pc;
    pc.keep_aside(p, 4);
    p.first[0] = 10.0;
    p.second[1] = 30.0f;
    pc.put_back(p, 4);
    BOOST_TEST((p == pair_state{{1.0}, {2.0f, 3.0f}}));

    packed s{{1.0, 2.0, 3.0}};
    remat::state_codec<packed> sc;
    sc.keep_aside(s, 4);
    s.values = {0.0};
    sc.put_back(s, 4);
    BOOST_TEST((s == packed{{1.0, 2.0, 3.0}}));
}

BOOST_AUTO_TEST_CASE(parts_are_resized_back_where_the_traits_can_else_a_change_is_an_integrity_error)
{
    pair_state p{{1.0, 2.0}, {3.0f}};
    remat::state_codec<pair_state> pc;
    pc.keep_aside(p, 6);
    p.first.resize(5);
    pc.put_back(p, 6); // a pair of vectors has parts_for: resized to the kept sizes
    BOOST_TEST((p == pair_state{{1.0, 2.0}, {3.0f}}));

    two_vectors t{{1.0, 2.0}, {3.0}};
    remat::state_codec<two_vectors> tc;
    tc.keep_aside(t, 6);
    t.b.resize(4);
    try {
        tc.put_back(t, 6);
        BOOST_FAIL("a changed part was not reported");
    } catch (const remat::integrity_error& e) {
        BOOST_TEST(std::string(e.what()).find("forward step 6 changed the state") != std::string::npos);
    }
}

BOOST_AUTO_TEST_CASE(a_failing_serialisation_names_its_step_and_phase)
{
    packed s{{1.0}, true};
    remat::host_store level(1);
    remat::detail::store_access<remat::host_store> access(level);
    remat::state_codec<packed> codec;
    try {
        codec.write(access, 0, 0, 12, s);
        BOOST_FAIL("a throwing save was not reported");
    } catch (const remat::step_error& e) {
        BOOST_TEST(e.step() == 12);
        BOOST_TEST((e.phase() == remat::step_phase::save));
    }
    BOOST_TEST(level.snapshot_bytes(0) == 0u); // nothing was written
    try {
        codec.keep_aside(s, 30);
        BOOST_FAIL("a throwing save was not reported");
    } catch (const remat::step_error& e) {
        BOOST_TEST(e.step() == 30);
        BOOST_TEST((e.phase() == remat::step_phase::save));
    }
}
