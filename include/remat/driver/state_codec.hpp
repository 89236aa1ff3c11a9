// remat/driver/state_codec.hpp — a user's state as snapshot bytes: its size, its writes to and reads from a
// store, and the copy kept aside while the terminal callable is given x_T.
//
// snapshot_traits<State> describes a state one of three ways (remat/store/snapshot_traits.hpp): one
// contiguous view, several parts, or a serialisation through a host buffer. The choice among them is made
// once, here, by the type state_codec<State> names; each kind is one small class with the same members:
//
//     | member                              | meaning                                                  |
//     |-------------------------------------|----------------------------------------------------------|
//     | c.size(x, k)                        | bytes of one snapshot of x (x_k)                         |
//     | c.write(store, level, slot, k, x)   | copies x_k into the store; returns its bytes             |
//     | c.read(store, level, slot, k, x)    | copies x_k back into x, resized to the snapshot's sizes  |
//     | c.prepare_keep_aside(x)             | before step 0: the device copy keep_aside needs, or an   |
//     |                                     | argument_error if x is a view that cannot be copied      |
//     | c.keep_aside(x, k) / put_back(x, k) | x_k kept in memory that grows once per codec, put back   |
//
// `store` is a remat::detail::store_access. A serialisation that throws becomes remat::step_error
// (step_phase::save or load, step k); the store's own errors pass through.
//
//     remat::state_codec<std::vector<double>> codec;
//     codec.write(access, 0, 3, 17, x);   // x_17 into slot 3 of level 0
#pragma once

#include "remat/driver/step_failure.hpp"
#include "remat/error.hpp"
#include "remat/store/detail/part_layout.hpp"
#include "remat/store/snapshot_traits.hpp"
#include "remat/types.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <ranges>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace remat {

namespace detail {

/// Whether the views `parts` have exactly the sizes `sizes`.
template <class Parts>
bool same_sizes(std::span<const std::size_t> sizes, const Parts& parts)
{
    if (sizes.size() != std::ranges::size(parts))
        return false;
    std::size_t i = 0;
    for (const auto& p : parts)
        if (p.size != sizes[i++])
            return false;
    return true;
}

/// Keeping aside a state that is views (one contiguous view or several parts): copied into host memory
/// when every view is on the host, else into a copy of the state itself (a device state that owns its
/// elements). Codec provides views(x) and with_views_for(x, sizes, f).
template <class State, class Codec>
class view_keep_aside {
public:
    void prepare_keep_aside(const State& x)
    {
        if (!on_device(x))
            return;
        if constexpr (std::is_copy_constructible_v<State>) {
            kept_state_.emplace(x);
            if (!shares_device_elements(*kept_state_, x))
                return; // a copy of the elements, not of a view
            kept_state_.reset();
        }
        throw argument_error("remat::final_state needs x_{T-1} kept aside while x_T is computed, but the state "
                             "is a view of device memory whose copies share its elements: use a state that owns "
                             "its elements (thrust::device_vector) or compute x_T in the adjoint of step T-1");
    }

    void keep_aside(const State& x, step_t)
    {
        kept_in_copy_ = on_device(x);
        if (!kept_in_copy_)
            return keep_on_host(x);
        if constexpr (std::is_copy_constructible_v<State>)
            if (kept_state_) {
                *kept_state_ = x; // made before step 0: a device copy, no allocation here
                return;
            }
        prepare_keep_aside(x); // the state was on the host before step 0; it is on a device now
    }

    void put_back(State& x, step_t k)
    {
        if constexpr (std::is_copy_constructible_v<State>)
            if (kept_in_copy_) {
                x = *kept_state_;
                return;
            }
        const std::span<const std::size_t> kept = kept_sizes_.sizes();
        Codec::with_views_for(x, kept, [&](const auto& parts) {
            if (!same_sizes(kept, parts))
                throw integrity_error("the forward step " + std::to_string(k) + " changed the state from " +
                                      describe_parts(kept) + " to " + describe_parts(sizes_of(parts)));
            std::size_t at = 0;
            for (const mutable_bytes& p : parts) {
                if (p.size != 0)
                    std::memcpy(p.data, staging_.data() + at, p.size);
                at += p.size;
            }
        });
    }

private:
    template <class Parts>
    static std::vector<std::size_t> sizes_of(const Parts& parts)
    {
        std::vector<std::size_t> sizes;
        for (const auto& p : parts)
            sizes.push_back(p.size);
        return sizes;
    }

    static bool on_device(const State& x)
    {
        const auto parts = Codec::views(x);
        return std::ranges::any_of(parts, [](const const_bytes& p) { return p.space != memory_space::host; });
    }

    // Whether a copy of the state shares its device elements (a view such as cuda::device_span).
    static bool shares_device_elements(const State& copy, const State& x)
    {
        const auto a = Codec::views(copy);
        const auto b = Codec::views(x);
        for (std::size_t i = 0; i < std::ranges::size(a) && i < std::ranges::size(b); ++i)
            if (b[i].space != memory_space::host && a[i].data == b[i].data && (b[i].size != 0 || a[i].size != 0))
                return true;
        return false;
    }

    void keep_on_host(const State& x)
    {
        const auto parts = Codec::views(x);
        const const_parts view(std::ranges::data(parts), std::ranges::size(parts));
        kept_sizes_.assign(view); // no allocation for up to four parts
        if (staging_.size() < total_bytes(view))
            staging_.resize(total_bytes(view));
        std::size_t at = 0;
        for (const const_bytes& p : parts) {
            if (p.size != 0)
                std::memcpy(staging_.data() + at, p.data, p.size);
            at += p.size;
        }
    }

    std::vector<std::byte> staging_; // grows, never shrinks
    part_layout kept_sizes_;         // the sizes of the kept state's views
    std::optional<State> kept_state_;
    bool kept_in_copy_ = false;
};

/// A state that is one contiguous view (snapshot_traits<State>::bytes).
template <class State>
class contiguous_codec : public view_keep_aside<State, contiguous_codec<State>> {
    using traits = snapshot_traits<State>;

public:
    static std::array<const_bytes, 1> views(const State& x) { return {traits::bytes(x)}; }

    // Calls f with the state's view, resized to `sizes` where the traits can (bytes_for).
    template <class F>
    static void with_views_for(State& x, std::span<const std::size_t> sizes, F&& f)
    {
        mutable_bytes bytes = traits::bytes(x);
        if constexpr (requires { traits::bytes_for(x, std::size_t{}); })
            if (sizes.size() == 1 && bytes.size != sizes[0])
                bytes = traits::bytes_for(x, sizes[0]);
        f(std::array<mutable_bytes, 1>{bytes});
    }

    static std::uint64_t size(const State& x, step_t) { return traits::bytes(x).size; }

    template <class Access>
    static std::uint64_t write(Access& store, level_t level, slot_t slot, step_t k, const State& x)
    {
        const const_bytes bytes = traits::bytes(x);
        store.write(level, slot, k, bytes);
        return bytes.size;
    }

    template <class Access>
    static void read(Access& store, level_t level, slot_t slot, step_t k, State& x)
    {
        mutable_bytes bytes = traits::bytes(x);
        if constexpr (requires { traits::bytes_for(x, std::size_t{}); }) {
            const std::size_t stored = store.snapshot_bytes(level, slot);
            if (stored != bytes.size && stored != 0)
                bytes = traits::bytes_for(x, stored);
        }
        store.read(level, slot, k, bytes);
    }
};

/// A state of several parts (snapshot_traits<State>::parts), gathered into one slot.
template <class State>
class multipart_codec : public view_keep_aside<State, multipart_codec<State>> {
    using traits = snapshot_traits<State>;

public:
    static auto views(const State& x) { return traits::parts(x); }

    // Calls f with the state's parts, resized to `sizes` where the traits can (parts_for).
    template <class F>
    static void with_views_for(State& x, std::span<const std::size_t> sizes, F&& f)
    {
        if constexpr (requires { traits::parts_for(x, sizes); }) {
            const auto parts = traits::parts(x);
            if (!sizes.empty() && !same_sizes(sizes, parts))
                return f(traits::parts_for(x, sizes));
            f(parts);
        } else {
            f(traits::parts(x));
        }
    }

    static std::uint64_t size(const State& x, step_t)
    {
        const auto parts = traits::parts(x);
        return total_bytes(const_parts(std::ranges::data(parts), std::ranges::size(parts)));
    }

    template <class Access>
    static std::uint64_t write(Access& store, level_t level, slot_t slot, step_t k, const State& x)
    {
        const auto parts = traits::parts(x);
        const const_parts view(std::ranges::data(parts), std::ranges::size(parts));
        store.write(level, slot, k, view);
        return total_bytes(view);
    }

    template <class Access>
    static void read(Access& store, level_t level, slot_t slot, step_t k, State& x)
    {
        std::span<const std::size_t> held;
        if constexpr (requires { traits::parts_for(x, held); })
            held = store.part_sizes(level, slot);
        with_views_for(x, held, [&](const auto& parts) {
            store.read(level, slot, k, mutable_parts(std::ranges::data(parts), std::ranges::size(parts)));
        });
    }
};

/// A state serialised into a host buffer (snapshot_traits<State>::size_bytes, save, load).
template <class State>
class serialised_codec {
    using traits = snapshot_traits<State>;

public:
    static std::uint64_t size(const State& x, step_t k)
    {
        try {
            return traits::size_bytes(x);
        } catch (...) {
            rethrow_as_step_error(k, step_phase::save);
        }
    }

    template <class Access>
    std::uint64_t write(Access& store, level_t level, slot_t slot, step_t k, const State& x)
    {
        const std::size_t size = save(x, k);
        store.write(level, slot, k, const_bytes{staging_.data(), size, memory_space::host});
        return size;
    }

    template <class Access>
    void read(Access& store, level_t level, slot_t slot, step_t k, State& x)
    {
        const std::size_t size = store.snapshot_bytes(level, slot);
        if (staging_.size() < size)
            staging_.resize(size);
        store.read(level, slot, k, mutable_bytes{staging_.data(), size, memory_space::host});
        load(x, k, size);
    }

    static void prepare_keep_aside(const State&) noexcept {}
    void keep_aside(const State& x, step_t k) { kept_size_ = save(x, k); }
    void put_back(State& x, step_t k) { load(x, k, kept_size_); }

private:
    // Serialises x_k into the staging buffer; returns its size.
    std::size_t save(const State& x, step_t k)
    {
        try {
            const std::size_t size = traits::size_bytes(x);
            if (staging_.size() < size)
                staging_.resize(size);
            traits::save(x, std::span<std::byte>(staging_.data(), size));
            return size;
        } catch (...) {
            rethrow_as_step_error(k, step_phase::save);
        }
    }

    void load(State& x, step_t k, std::size_t size)
    {
        try {
            traits::load(x, std::span<const std::byte>(staging_.data(), size));
        } catch (...) {
            rethrow_as_step_error(k, step_phase::load);
        }
    }

    std::vector<std::byte> staging_; // grows, never shrinks
    std::size_t kept_size_ = 0;      // bytes of the state kept aside in staging_
};

} // namespace detail

/// How the driver copies a State to and from a store: the one place that tells the three kinds of state
/// apart (the table above).
template <snapshot_state State>
using state_codec = std::conditional_t<
    contiguous_state<State>, detail::contiguous_codec<State>,
    std::conditional_t<multipart_state<State>, detail::multipart_codec<State>, detail::serialised_codec<State>>>;

} // namespace remat
