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
//   or several parts, each a view in its own memory space (a state spread over several buffers, on the
//   host or the device: gathered into one slot and scattered back, with no staging copy):
//     | expression                          | type                 | meaning                        |
//     |-------------------------------------|----------------------|--------------------------------|
//     | snapshot_traits<S>::parts(const s&) | range of const_bytes | the parts, in order            |
//     | snapshot_traits<S>::parts(s&)       | range of mutable_bytes | where they are restored      |
//     | snapshot_traits<S>::parts_for(s&, span<const size_t>) (optional) | range of mutable_bytes |
//     |                                     |   the parts resized to the snapshot's part sizes first |
//   (a range: contiguous and sized, such as std::array<const_bytes, 2>; a fixed-size array allocates
//   nothing),
//
//   or a serialisation into a host buffer (a copy through a staging buffer):
//     | expression                                   | type        | meaning                        |
//     |----------------------------------------------|-------------|--------------------------------|
//     | snapshot_traits<S>::size_bytes(const s&)     | std::size_t | bytes of one snapshot          |
//     | snapshot_traits<S>::save(const s&, span<byte>)| void       | writes exactly size_bytes      |
//     | snapshot_traits<S>::load(s&, span<const byte>)| void       | reads them back into the state |
//
// Provided: trivially copyable types, std::vector<T> and std::span<T> of trivially copyable T, and as
// several parts std::pair and std::tuple of such states (when not trivially copyable themselves). The
// CUDA part adds thrust::device_vector<T> and remat::cuda::device_span<T> (device memory), which may be
// parts of a pair or tuple too.
//
//     struct lstm_state { thrust::device_vector<float> h, c; };          // two device parts
//     template <> struct remat::snapshot_traits<lstm_state> {
//         using parts_of = remat::snapshot_traits<thrust::device_vector<float>>;
//         static std::array<remat::const_bytes, 2> parts(const lstm_state& s) {
//             return {parts_of::bytes(s.h), parts_of::bytes(s.c)};
//         }
//         static std::array<remat::mutable_bytes, 2> parts(lstm_state& s) {
//             return {parts_of::bytes(s.h), parts_of::bytes(s.c)};
//         }
//     };
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

#include <array>
#include <concepts>
#include <cstddef>
#include <ranges>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
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

namespace detail {
/// A contiguous, sized range of views of type View (what parts() returns).
template <class R, class View>
concept parts_range = std::ranges::contiguous_range<R> && std::ranges::sized_range<R> &&
                      std::same_as<std::ranges::range_value_t<R>, View>;
} // namespace detail

/// States made of several parts, each a view in its own memory space (gathered into one slot).
template <class State>
concept multipart_state = requires(const State& c, State& m) {
    { snapshot_traits<State>::parts(c) } -> detail::parts_range<const_bytes>;
    { snapshot_traits<State>::parts(m) } -> detail::parts_range<mutable_bytes>;
};

/// Anything the driver can snapshot.
template <class State>
concept snapshot_state = contiguous_state<State> || multipart_state<State> || serialised_state<State>;

namespace detail {
// A pair or tuple whose elements are all contiguous states.
template <class T>
inline constexpr bool tuple_of_contiguous = false;
template <class A, class B>
inline constexpr bool tuple_of_contiguous<std::pair<A, B>> = contiguous_state<A> && contiguous_state<B>;
template <class... T>
inline constexpr bool tuple_of_contiguous<std::tuple<T...>> = sizeof...(T) > 0 && (contiguous_state<T> && ...);

// Part i of a tuple-like state resized to `size` bytes where its traits can (bytes_for), else as it is
// (the level's restore then names the part whose size differs).
template <class Part>
mutable_bytes part_resized_for(Part& p, std::size_t size)
{
    mutable_bytes b = snapshot_traits<Part>::bytes(p);
    if constexpr (requires { snapshot_traits<Part>::bytes_for(p, size); })
        if (b.size != size)
            return snapshot_traits<Part>::bytes_for(p, size);
    return b;
}
} // namespace detail

/// std::pair and std::tuple of contiguous states (vectors, arrays, device vectors, ...) that are not
/// trivially copyable as a whole: one part per element, in order. A restore resizes the elements that
/// can be resized (std::vector, thrust vectors) to the snapshot's parts.
///
///     std::pair<std::vector<double>, std::array<double, 3>> x;   // a history array and three scalars
///     remat::run(plan, store, x, remat::forward_step(f), remat::adjoint_step(g));
template <class Tuple>
    requires detail::tuple_of_contiguous<Tuple> && (!std::is_trivially_copyable_v<Tuple>)
struct snapshot_traits<Tuple> {
    static constexpr std::size_t count = std::tuple_size_v<Tuple>;
    static std::array<const_bytes, count> parts(const Tuple& t) noexcept
    {
        return std::apply([](const auto&... p) { return std::array<const_bytes, count>{bytes_of(p)...}; }, t);
    }
    static std::array<mutable_bytes, count> parts(Tuple& t) noexcept
    {
        return std::apply([](auto&... p) { return std::array<mutable_bytes, count>{bytes_of(p)...}; }, t);
    }
    /// The parts resized to a snapshot's part sizes where they can be (a different part count: as they are).
    static std::array<mutable_bytes, count> parts_for(Tuple& t, std::span<const std::size_t> sizes)
    {
        if (sizes.size() != count)
            return parts(t);
        return [&]<std::size_t... I>(std::index_sequence<I...>) {
            return std::array<mutable_bytes, count>{detail::part_resized_for(std::get<I>(t), sizes[I])...};
        }(std::make_index_sequence<count>{});
    }

private:
    template <class Part>
    static auto bytes_of(Part& p) noexcept
    {
        return snapshot_traits<std::remove_const_t<Part>>::bytes(p);
    }
};

} // namespace remat
