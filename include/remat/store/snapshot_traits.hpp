// remat/store/snapshot_traits.hpp — how a user's state becomes snapshot bytes and back.
//
// The driver works with any State for which remat::snapshot_traits<State> provides either
//
//   a contiguous view (no copy through a staging buffer):
//     | expression                          | type          | meaning                              |
//     |-------------------------------------|---------------|--------------------------------------|
//     | snapshot_traits<S>::bytes(const s&) | const_bytes   | the state's bytes, as stored         |
//     | snapshot_traits<S>::bytes(s&)       | mutable_bytes | where a restored snapshot is written |
//
//   or a serialisation (for states spread over several buffers):
//     | expression                                   | type        | meaning                        |
//     |----------------------------------------------|-------------|--------------------------------|
//     | snapshot_traits<S>::size_bytes(const s&)     | std::size_t | bytes of one snapshot          |
//     | snapshot_traits<S>::save(const s&, span<byte>)| void       | writes exactly size_bytes      |
//     | snapshot_traits<S>::load(s&, span<const byte>)| void       | reads them back into the state |
//
// Provided: trivially copyable types, std::vector<T> and std::span<T> of trivially copyable T. The
// CUDA part adds thrust::device_vector<T> and remat::cuda::device_span<T> (device memory).
//
//     struct particles { std::vector<double> x, v; };
//     template <> struct remat::snapshot_traits<particles> {
//         static std::size_t size_bytes(const particles& p) { return 2 * p.x.size() * sizeof(double); }
//         static void save(const particles& p, std::span<std::byte> out) {
//             std::memcpy(out.data(), p.x.data(), out.size() / 2);
//             std::memcpy(out.data() + out.size() / 2, p.v.data(), out.size() / 2);
//         }
//         static void load(particles& p, std::span<const std::byte> in) { /* the reverse */ }
//     };
#pragma once

#include "remat/error.hpp"
#include "remat/store/snapshot_view.hpp"

#include <concepts>
#include <cstddef>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace remat {

/// Customisation point; specialise it for your state type (see the tables above).
template <class State>
struct snapshot_traits;

namespace detail {
template <class T>
inline constexpr bool is_std_span = false;
template <class T, std::size_t Extent>
inline constexpr bool is_std_span<std::span<T, Extent>> = true;
} // namespace detail

/// Trivially copyable states (structs of numbers, std::array<double, N>, ...): their object bytes.
/// (Pointers and spans are views, not states: a span's elements are snapshotted, see below.)
template <class State>
    requires std::is_trivially_copyable_v<State> && (!std::is_pointer_v<State>) && (!detail::is_std_span<State>)
struct snapshot_traits<State> {
    static const_bytes bytes(const State& s) noexcept
    {
        return {reinterpret_cast<const std::byte*>(&s), sizeof(State), memory_space::host};
    }
    static mutable_bytes bytes(State& s) noexcept
    {
        return {reinterpret_cast<std::byte*>(&s), sizeof(State), memory_space::host};
    }
};

/// std::vector<T> of trivially copyable T: its elements. A restore into a vector of another length
/// resizes it (which allocates); in a loop of fixed size that never happens.
template <class T, class Allocator>
    requires std::is_trivially_copyable_v<T>
struct snapshot_traits<std::vector<T, Allocator>> {
    static const_bytes bytes(const std::vector<T, Allocator>& v) noexcept
    {
        return {reinterpret_cast<const std::byte*>(v.data()), v.size() * sizeof(T), memory_space::host};
    }
    static mutable_bytes bytes(std::vector<T, Allocator>& v) noexcept
    {
        return {reinterpret_cast<std::byte*>(v.data()), v.size() * sizeof(T), memory_space::host};
    }
    static mutable_bytes bytes_for(std::vector<T, Allocator>& v, std::size_t size)
    {
        if (size % sizeof(T) != 0)
            throw integrity_error("a snapshot of " + std::to_string(size) + " bytes is no whole number of " +
                                  std::to_string(sizeof(T)) + "-byte elements");
        v.resize(size / sizeof(T));
        return bytes(v);
    }
};

/// std::span<T> of trivially copyable, non-const T: a state that lives in the user's own buffer.
template <class T, std::size_t Extent>
    requires std::is_trivially_copyable_v<T> && (!std::is_const_v<T>)
struct snapshot_traits<std::span<T, Extent>> {
    static const_bytes bytes(const std::span<T, Extent>& s) noexcept
    {
        return {reinterpret_cast<const std::byte*>(s.data()), s.size_bytes(), memory_space::host};
    }
    static mutable_bytes bytes(std::span<T, Extent>& s) noexcept
    {
        return {reinterpret_cast<std::byte*>(s.data()), s.size_bytes(), memory_space::host};
    }
};

/// States whose bytes are one contiguous view.
template <class State>
concept contiguous_state = requires(const State& c, State& m) {
    { snapshot_traits<State>::bytes(c) } -> std::same_as<const_bytes>;
    { snapshot_traits<State>::bytes(m) } -> std::same_as<mutable_bytes>;
};

/// States that serialise themselves into a host buffer.
template <class State>
concept serialised_state = requires(const State& c, State& m, std::span<std::byte> out, std::span<const std::byte> in) {
    { snapshot_traits<State>::size_bytes(c) } -> std::convertible_to<std::size_t>;
    snapshot_traits<State>::save(c, out);
    snapshot_traits<State>::load(m, in);
};

/// Anything the driver can snapshot.
template <class State>
concept snapshot_state = contiguous_state<State> || serialised_state<State>;

} // namespace remat
