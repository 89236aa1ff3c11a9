// State types the tests put through the driver and the stores (tests only): a trivially copyable
// struct, and a state of two buffers that serialises itself through remat::snapshot_traits.
#pragma once

#include "remat/store/snapshot_traits.hpp"

#include <cstring>
#include <span>
#include <vector>

namespace remat::test {

/// Trivially copyable: snapshotted as its object bytes, with no code.
struct particle {
    double x, v;
    int collisions;
};

/// Two buffers: snapshotted through the traits below.
struct mesh_state {
    std::vector<float> density;
    std::vector<double> velocity;
};

} // namespace remat::test

template <>
struct remat::snapshot_traits<remat::test::mesh_state> {
    using state = remat::test::mesh_state;
    static std::size_t size_bytes(const state& m)
    {
        return m.density.size() * sizeof(float) + m.velocity.size() * sizeof(double);
    }
    static void save(const state& m, std::span<std::byte> out)
    {
        std::memcpy(out.data(), m.density.data(), m.density.size() * sizeof(float));
        std::memcpy(out.data() + m.density.size() * sizeof(float), m.velocity.data(),
                    m.velocity.size() * sizeof(double));
    }
    static void load(state& m, std::span<const std::byte> in)
    {
        std::memcpy(m.density.data(), in.data(), m.density.size() * sizeof(float));
        std::memcpy(m.velocity.data(), in.data() + m.density.size() * sizeof(float),
                    m.velocity.size() * sizeof(double));
    }
};
