// hdf5_handle.hpp — RAII ownership of HDF5 identifiers, and HDF5 failures as remat errors (internal).
//
// Every hid_t that remat opens lives in an hdf5_handle, which closes it exactly once. Every HDF5 call is
// checked: a negative result becomes remat::io_error or remat::integrity_error whose message names the
// file, the object and HDF5's own innermost explanation (from its error stack, which remat reads instead
// of letting HDF5 print it). Internal to the remat::hdf5 target; needs <hdf5.h>.
#pragma once

#include "remat/error.hpp"

#include <hdf5.h>

#include <mutex>
#include <string>
#include <utility>

namespace remat::detail {

/// Owns one HDF5 identifier; `Close` is the matching H5?close function.
///
///     remat::detail::hdf5_dataspace space(H5Screate(H5S_SCALAR));
///     // ... H5Sclose runs when `space` goes out of scope
template <herr_t (*Close)(hid_t)>
class hdf5_handle {
public:
    hdf5_handle() noexcept = default;
    explicit hdf5_handle(hid_t id) noexcept : id_(id) {}
    ~hdf5_handle() { reset(); }
    hdf5_handle(const hdf5_handle&) = delete;
    hdf5_handle& operator=(const hdf5_handle&) = delete;
    hdf5_handle(hdf5_handle&& other) noexcept : id_(std::exchange(other.id_, H5I_INVALID_HID)) {}
    hdf5_handle& operator=(hdf5_handle&& other) noexcept
    {
        if (this != &other) {
            reset();
            id_ = std::exchange(other.id_, H5I_INVALID_HID);
        }
        return *this;
    }

    [[nodiscard]] hid_t get() const noexcept { return id_; }
    [[nodiscard]] explicit operator bool() const noexcept { return id_ >= 0; }

    /// Closes the identifier now. Returns false when HDF5 reported a failure while closing (a file's
    /// final flush, for instance); callers that must know use close() below.
    bool reset() noexcept
    {
        bool ok = true;
        if (id_ >= 0)
            ok = Close(id_) >= 0;
        id_ = H5I_INVALID_HID;
        return ok;
    }

private:
    hid_t id_ = H5I_INVALID_HID;
};

using hdf5_file = hdf5_handle<H5Fclose>;
using hdf5_group = hdf5_handle<H5Gclose>;
using hdf5_dataset = hdf5_handle<H5Dclose>;
using hdf5_dataspace = hdf5_handle<H5Sclose>;
using hdf5_plist = hdf5_handle<H5Pclose>;
using hdf5_attribute = hdf5_handle<H5Aclose>;
using hdf5_type = hdf5_handle<H5Tclose>;

/// HDF5's explanation of the failure that its error stack of this thread holds, innermost first
/// ("truncated file: eof = 4096, ... (file accessibility: file has been truncated)"), or "" when the stack
/// is empty. Clears the stack.
std::string hdf5_error_text();

/// Throws `Error` with `what` followed by HDF5's explanation.
template <class Error>
[[noreturn]] void throw_hdf5(const std::string& what)
{
    const std::string why = hdf5_error_text();
    throw Error(why.empty() ? what : what + " (HDF5: " + why + ")");
}

/// `id` when it is a valid identifier, else io_error naming `what`.
inline hid_t check_id(hid_t id, const std::string& what)
{
    if (id < 0)
        throw_hdf5<io_error>(what);
    return id;
}

/// Throws io_error naming `what` when an HDF5 call returned a negative status.
inline void check_status(herr_t status, const std::string& what)
{
    if (status < 0)
        throw_hdf5<io_error>(what);
}

/// For the duration of one remat operation: holds remat's process-wide HDF5 lock (so that remat never
/// calls HDF5 from two threads at once, which a library built without thread safety does not allow) and
/// turns off HDF5's printing of its error stack on this thread (remat reads the stack and throws
/// instead). The caller's own automatic error printing is restored afterwards.
///
///     remat::detail::hdf5_scope scope;
///     hid_t f = remat::detail::check_id(H5Fopen(...), "cannot open " + path);
class hdf5_scope {
public:
    hdf5_scope();
    ~hdf5_scope();
    hdf5_scope(const hdf5_scope&) = delete;
    hdf5_scope& operator=(const hdf5_scope&) = delete;

    /// Runs `f`, which makes no HDF5 call (a long transfer of snapshot bytes, an fdatasync), with the lock
    /// released, so that other threads' HDF5 calls need not wait for it.
    ///
    ///     std::uint64_t sum = scope.without_lock([&] { return raw.write(offset, bytes, copy); });
    template <class F>
    decltype(auto) without_lock(F&& f)
    {
        struct relock {
            std::unique_lock<std::recursive_mutex>& lock;
            ~relock() { lock.lock(); }
        };
        lock_.unlock();
        const relock again{lock_};
        return std::forward<F>(f)();
    }

private:
    std::unique_lock<std::recursive_mutex> lock_;
    H5E_auto2_t saved_func_ = nullptr;
    void* saved_data_ = nullptr;
    bool restore_ = false;
};

} // namespace remat::detail
